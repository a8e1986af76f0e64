// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * {@code ./mallard bench <benchmark> ... --html report.html}: a benchmark's JSON figures as one self-contained page,
 * tables and bar charts drawn as inline SVG, with no script and nothing loaded from anywhere. A benchmark that prints
 * one object becomes one table of its figures and one chart per unit (msgs/s, ms, MiB, a nested group such as
 * {@code ratios}); settings without a unit stay in the table only. One that prints
 * an object per line (views) becomes a table of those records and a chart per numeric column. The page is XHTML
 * as well as HTML, so any XML parser reads it.
 */
final class HtmlReport {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int MAX_BARS = 60;
    private static final String OTHER = "other figures";

    private final String benchmark;
    private final String command;
    private final List<JsonNode> results;

    HtmlReport(String benchmark, String command, List<JsonNode> results) {
        this.benchmark = requireNonNull(benchmark, "benchmark is null");
        this.command = requireNonNull(command, "command is null");
        this.results = List.copyOf(requireNonNull(results, "results is null"));
    }

    /** The JSON objects among a benchmark's output lines (progress lines are skipped). */
    static List<JsonNode> parse(String output) {
        List<JsonNode> objects = new ArrayList<>();
        for (String line : output.split("\n")) {
            String trimmed = line.trim();
            if (trimmed.startsWith("{")) {
                try {
                    objects.add(JSON.readTree(trimmed));
                } catch (IOException e) {
                    // not one of the figures' lines
                }
            }
        }
        return objects;
    }

    void write(Path file) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Files.writeString(file, render(), StandardCharsets.UTF_8);
    }

    String render() {
        StringBuilder html = new StringBuilder();
        html.append("<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>")
                .append(escape("mallard bench " + benchmark)).append("</title>\n<style>\n")
                .append("body{font-family:system-ui,sans-serif;margin:2rem;color:#1d232a}table{border-collapse:collapse;margin:1rem 0}")
                .append("th,td{border:1px solid #d7dde3;padding:.2rem .6rem;text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums}")
                .append("svg{display:block;margin:1rem 0;background:#fff}.bar{fill:#1f6feb}.label{font-size:11px;fill:#333}")
                .append("h2{margin-top:2rem}code{background:#f0f3f6;padding:.1rem .3rem}\n</style>\n</head>\n<body>\n<h1>")
                .append(escape("mallard bench " + benchmark)).append("</h1>\n<p>Command: <code>").append(escape(command))
                .append("</code><br/>Written ").append(escape(Instant.now().toString())).append(" on ")
                .append(Runtime.getRuntime().availableProcessors()).append(" cores, Java ").append(escape(Runtime.version().toString()))
                .append(". Compare figures within one run on one machine; see docs/benchmarks.md.</p>\n");
        if (results.isEmpty()) {
            html.append("<p>The benchmark printed no figures.</p>\n");
        } else if (results.size() == 1) {
            single(html, flatten(results.get(0)));
        } else {
            records(html);
        }
        html.append("</body>\n</html>\n");
        return html.toString();
    }

    /** One object: its figures in a table, then a chart per unit. */
    private void single(StringBuilder html, Map<String, JsonNode> figures) {
        html.append("<h2>Figures</h2>\n<table id=\"figures\">\n<tr><th>figure</th><th>value</th></tr>\n");
        figures.forEach((name, value) -> html.append("<tr><td>").append(escape(name)).append("</td><td class=\"")
                .append(value.isNumber() ? "num" : "").append("\">").append(escape(value.asText())).append("</td></tr>\n"));
        html.append("</table>\n");
        Map<String, Map<String, Double>> byUnit = new LinkedHashMap<>();
        figures.forEach((name, value) -> {
            if (value.isNumber() && !name.equals("cores")) {
                byUnit.computeIfAbsent(unit(name), key -> new LinkedHashMap<>()).put(name, value.asDouble());
            }
        });
        // Settings (messages, batch_size) have no unit to compare; they stay in the table.
        byUnit.remove(OTHER);
        byUnit.forEach((unit, bars) -> chart(html, unit, bars));
    }

    /** Objects of one shape, one per line: a table of them, a chart per numeric column labelled by their text fields. */
    private void records(StringBuilder html) {
        List<Map<String, JsonNode>> rows = results.stream().map(HtmlReport::flatten).toList();
        Set<String> columns = new LinkedHashSet<>();
        rows.forEach(row -> columns.addAll(row.keySet()));
        html.append("<h2>Figures</h2>\n<table id=\"figures\">\n<tr>");
        columns.forEach(column -> html.append("<th>").append(escape(column)).append("</th>"));
        html.append("</tr>\n");
        for (Map<String, JsonNode> row : rows) {
            html.append("<tr>");
            for (String column : columns) {
                JsonNode value = row.get(column);
                html.append("<td class=\"").append(value != null && value.isNumber() ? "num" : "").append("\">")
                        .append(value == null ? "" : escape(value.asText())).append("</td>");
            }
            html.append("</tr>\n");
        }
        html.append("</table>\n");
        for (String column : columns) {
            Map<String, Double> bars = new LinkedHashMap<>();
            for (int i = 0; i < rows.size(); i++) {
                JsonNode value = rows.get(i).get(column);
                if (value != null && value.isNumber()) {
                    bars.put(label(rows.get(i), i), value.asDouble());
                }
            }
            if (bars.size() > 1 && bars.values().stream().distinct().count() > 1) {
                chart(html, column, bars);
            }
        }
    }

    private static String label(Map<String, JsonNode> row, int index) {
        StringBuilder label = new StringBuilder();
        row.forEach((name, value) -> {
            if (value.isTextual() && label.length() < 60) {
                label.append(label.isEmpty() ? "" : " · ").append(value.asText());
            }
        });
        return label.isEmpty() ? "#" + (index + 1) : label.toString();
    }

    /** A horizontal bar chart: one bar per figure, its value at the end of the bar. */
    private static void chart(StringBuilder html, String title, Map<String, Double> bars) {
        List<Map.Entry<String, Double>> shown = new ArrayList<>(bars.entrySet()).subList(0, Math.min(MAX_BARS, bars.size()));
        double max = shown.stream().mapToDouble(entry -> Math.abs(entry.getValue())).max().orElse(1);
        int labelWidth = 300;
        int barWidth = 420;
        int row = 20;
        int height = 28 + row * shown.size();
        html.append("<h2>").append(escape(title)).append("</h2>\n<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"")
                .append(labelWidth + barWidth + 110).append("\" height=\"").append(height).append("\" role=\"img\" aria-label=\"")
                .append(escape(title)).append("\">\n");
        for (int i = 0; i < shown.size(); i++) {
            double value = shown.get(i).getValue();
            int y = 10 + i * row;
            double width = max == 0 ? 0 : Math.abs(value) / max * barWidth;
            html.append("<text class=\"label\" x=\"").append(labelWidth - 6).append("\" y=\"").append(y + 13)
                    .append("\" text-anchor=\"end\">").append(escape(shorten(shown.get(i).getKey()))).append("</text>")
                    .append("<rect class=\"bar\" x=\"").append(labelWidth).append("\" y=\"").append(y + 2).append("\" width=\"")
                    .append(String.format(Locale.ROOT, "%.1f", Math.max(1, width))).append("\" height=\"").append(row - 5).append("\">")
                    .append("<title>").append(escape(shown.get(i).getKey() + " = " + number(value))).append("</title></rect>")
                    .append("<text class=\"label\" x=\"").append(String.format(Locale.ROOT, "%.1f", labelWidth + Math.max(1, width) + 4))
                    .append("\" y=\"").append(y + 13).append("\">").append(escape(number(value))).append("</text>\n");
        }
        if (shown.size() < bars.size()) {
            html.append("<text class=\"label\" x=\"0\" y=\"").append(height - 4).append("\">")
                    .append(bars.size() - shown.size()).append(" more in the table</text>\n");
        }
        html.append("</svg>\n");
    }

    /** What a figure counts, from its name's ending: the figures one chart compares. */
    static String unit(String name) {
        String leaf = name.substring(name.lastIndexOf('.') + 1);
        String parent = name.contains(".") ? name.substring(0, name.lastIndexOf('.')) : "";
        if (!parent.isEmpty() && !parent.contains("range")) {
            return parent;
        }
        for (String ending : List.of("msgs_per_s", "rows_per_s", "per_s", "_ms", "_us", "_s", "_mib", "_bytes", "ratio")) {
            if (leaf.endsWith(ending)) {
                return ending.replaceFirst("^_", "").replace("_per_", "/").replace("per_s", "per s");
            }
        }
        return OTHER;
    }

    /** Nested objects as dotted names, arrays as indexed names. */
    static Map<String, JsonNode> flatten(JsonNode node) {
        Map<String, JsonNode> out = new LinkedHashMap<>();
        flatten("", node, out);
        return out;
    }

    private static void flatten(String prefix, JsonNode node, Map<String, JsonNode> out) {
        if (node.isObject()) {
            node.properties().forEach(entry -> flatten(prefix.isEmpty() ? entry.getKey() : prefix + "." + entry.getKey(), entry.getValue(), out));
        } else if (node.isArray()) {
            for (int i = 0; i < node.size(); i++) {
                flatten(prefix + "[" + i + "]", node.get(i), out);
            }
        } else {
            out.put(prefix, node);
        }
    }

    private static String shorten(String text) {
        return text.length() <= 48 ? text : text.substring(0, 45) + "...";
    }

    private static String number(double value) {
        return value == Math.rint(value) && Math.abs(value) < 1e15 ? String.format(Locale.ROOT, "%,d", (long) value)
                : String.format(Locale.ROOT, "%,.3f", value);
    }

    static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
