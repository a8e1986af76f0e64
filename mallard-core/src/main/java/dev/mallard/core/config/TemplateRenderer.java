// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.config;

import static java.util.Objects.requireNonNull;

import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.JinjavaConfig;
import com.hubspot.jinjava.interpret.Context;
import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.interpret.TemplateError;
import dev.mallard.core.error.ErrorCode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Renders a configuration file as a Jinja2 template. It records every variable the template reads so
 * that an unset variable can be reported: a warning in general, an error when a similar supplied name
 * is never read (a misspelling).
 */
public final class TemplateRenderer {
    private static final int MAX_TYPO_DISTANCE = 2;

    private final ConfigEnvironment environment;

    public TemplateRenderer(ConfigEnvironment environment) {
        this.environment = requireNonNull(environment, "environment is null");
    }

    public record Rendered(String text, List<ConfigProblem> errors, List<ConfigProblem> warnings) {}

    public Rendered render(String file, String template) {
        Set<String> reads = new LinkedHashSet<>();
        Jinjava jinjava = new Jinjava(JinjavaConfig.newBuilder().build());
        Context context = new Context(jinjava.getGlobalContext(), environment.asTemplateContext()) {
            @Override
            public Object get(Object key) {
                reads.add(String.valueOf(key));
                return super.get(key);
            }
        };
        JinjavaInterpreter interpreter = new JinjavaInterpreter(jinjava, context, jinjava.getGlobalConfig());
        List<ConfigProblem> errors = new ArrayList<>();
        List<ConfigProblem> warnings = new ArrayList<>();
        String text;
        try {
            text = interpreter.render(template);
        } catch (RuntimeException e) {
            errors.add(new ConfigProblem(file, 0, 0, "", ErrorCode.USER_CONFIG_TEMPLATE_INVALID,
                    "the template does not render: " + e.getMessage()));
            return new Rendered(template, errors, warnings);
        }
        for (TemplateError error : interpreter.getErrorsCopy()) {
            if (error.getSeverity() == TemplateError.ErrorType.FATAL) {
                errors.add(new ConfigProblem(file, Math.max(error.getLineno(), 0), Math.max(error.getStartPosition(), 0), "",
                        ErrorCode.USER_CONFIG_TEMPLATE_INVALID, "template error: " + error.getMessage()));
            }
        }
        Set<String> supplied = environment.variables().keySet();
        for (String name : reads) {
            if (supplied.contains(name) || !looksLikeVariable(name)) {
                continue;
            }
            boolean optional = readsOnlyOptionally(template, name);
            int line = lineOf(template, name);
            String similar = supplied.stream()
                    .filter(ConfigEnvironment::isSupplied)
                    .filter(candidate -> !reads.contains(candidate))
                    .filter(candidate -> distance(candidate, name) <= MAX_TYPO_DISTANCE)
                    .min(Comparator.comparingInt(candidate -> distance(candidate, name)))
                    .orElse(null);
            if (similar != null) {
                errors.add(new ConfigProblem(file, line, column(template, line, name), "", ErrorCode.USER_CONFIG_TEMPLATE_UNDEFINED,
                        "the template reads " + name + ", which is not set; did you mean " + similar
                                + " (set, but never read)? Rename one of them."));
            } else if (!optional) {
                warnings.add(new ConfigProblem(file, line, column(template, line, name), "", ErrorCode.USER_CONFIG_TEMPLATE_UNDEFINED,
                        "the template reads " + name + ", which is not set: it renders empty unless the template gives a default"));
            }
        }
        return new Rendered(text, errors, warnings);
    }

    /**
     * True when every mention of the name gives it a default ({@code X|default(...)}, {@code X|d(...)}) or
     * only tests it ({@code {% if X %}}, {@code X is defined}): leaving it unset is then intended.
     */
    static boolean readsOnlyOptionally(String template, String name) {
        java.util.regex.Matcher mention = java.util.regex.Pattern.compile("\\b" + java.util.regex.Pattern.quote(name) + "\\b").matcher(template);
        boolean any = false;
        while (mention.find()) {
            any = true;
            String after = template.substring(mention.end(), Math.min(template.length(), mention.end() + 40));
            String before = template.substring(Math.max(0, mention.start() - 40), mention.start());
            boolean defaulted = after.matches("(?s)\\s*\\|\\s*(default|d)\\s*\\(.*");
            boolean tested = after.matches("(?s)\\s*is\\s+(not\\s+)?defined.*") || before.matches("(?s).*\\{%-?\\s*(el)?if\\s+(not\\s+)?$");
            if (!defaulted && !tested) {
                return false;
            }
        }
        return any;
    }

    /** Jinja also looks up names such as {@code loop} or macro names; only report names a user could set. */
    private static boolean looksLikeVariable(String name) {
        return name.matches("[A-Z][A-Z0-9_]*");
    }

    private static int lineOf(String template, String name) {
        int at = template.indexOf(name);
        if (at < 0) {
            return 0;
        }
        int line = 1;
        for (int i = 0; i < at; i++) {
            if (template.charAt(i) == '\n') {
                line++;
            }
        }
        return line;
    }

    private static int column(String template, int line, String name) {
        if (line == 0) {
            return 0;
        }
        int at = template.indexOf(name);
        int lineStart = template.lastIndexOf('\n', at - 1) + 1;
        return at - lineStart + 1;
    }

    static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                current[j] = Math.min(Math.min(current[j - 1] + 1, previous[j] + 1), previous[j - 1] + cost);
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }
}
