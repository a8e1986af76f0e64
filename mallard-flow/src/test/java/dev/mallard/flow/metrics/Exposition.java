// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.metrics;

import static java.util.Objects.requireNonNull;

import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A Prometheus text exposition read back: each family's type and label names, each sample's value. */
final class Exposition {
    private static final Pattern TYPE = Pattern.compile("^# TYPE (\\S+) (\\S+)$");
    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})? (\\S+)$");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");
    private static final Set<String> HISTOGRAM_SUFFIXES = Set.of("_bucket", "_sum", "_count");

    private final Map<String, String> types = new TreeMap<>();
    private final Map<String, Set<String>> labels = new TreeMap<>();
    private final Map<String, Double> samples = new TreeMap<>();

    Exposition(String text) {
        requireNonNull(text, "text is null");
        for (String line : text.split("\n")) {
            Matcher type = TYPE.matcher(line);
            if (type.matches()) {
                types.put(type.group(1), type.group(2));
                labels.put(type.group(1), new TreeSet<>());
                continue;
            }
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            Matcher sample = SAMPLE.matcher(line);
            if (!sample.matches()) {
                throw new IllegalArgumentException("not a sample line: " + line);
            }
            String family = family(sample.group(1));
            Set<String> names = new TreeSet<>();
            StringBuilder key = new StringBuilder(sample.group(1)).append('{');
            if (sample.group(2) != null) {
                Matcher label = LABEL.matcher(sample.group(2));
                Map<String, String> sorted = new TreeMap<>();
                while (label.find()) {
                    sorted.put(label.group(1), label.group(2));
                }
                sorted.forEach((name, value) -> key.append(name).append("=\"").append(value).append("\","));
                names.addAll(sorted.keySet());
            }
            if (key.charAt(key.length() - 1) == ',') {
                key.setLength(key.length() - 1);
            }
            samples.put(key.append('}').toString(), Double.parseDouble(sample.group(3).replace("+Inf", "Infinity")));
            names.remove("le");
            labels.get(family).addAll(names);
        }
    }

    private String family(String sampleName) {
        if (types.containsKey(sampleName)) {
            return sampleName;
        }
        for (String suffix : HISTOGRAM_SUFFIXES) {
            String base = sampleName.endsWith(suffix) ? sampleName.substring(0, sampleName.length() - suffix.length()) : null;
            if (base != null && "histogram".equals(types.get(base))) {
                return base;
            }
        }
        throw new IllegalArgumentException("sample " + sampleName + " has no # TYPE line before it");
    }

    /** Family name to type: {@code counter}, {@code gauge}, {@code histogram}. */
    Map<String, String> types() {
        return types;
    }

    /** Family name to the names of its labels, {@code le} excluded. */
    Map<String, Set<String>> labels() {
        return labels;
    }

    /**
     * The value of one sample, named as exposed with its labels in name order:
     * {@code error_count_total{class="user",code="...",domain="...",phase="...",pipeline="p"}}.
     */
    Double value(String series) {
        return samples.get(series);
    }

    Set<String> series() {
        return samples.keySet();
    }
}
