// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.sql;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Splits a SQL script into statements at top-level semicolons, respecting quotes, dollar quotes and
 * comments, and keeps where each statement starts so an error can point at its line.
 */
public final class SqlScript {
    private SqlScript() {}

    /**
     * @param sql the statement text without its terminating semicolon
     * @param line the 1-based line of the script on which the statement starts
     */
    public record Statement(String sql, int line) {
        /** The first keyword, upper-cased: {@code CREATE}, {@code SELECT}, {@code ATTACH}, ... */
        public String keyword() {
            return words(1);
        }

        /** The first {@code count} keywords, upper-cased and single-spaced, comments skipped. */
        public String words(int count) {
            String body = stripLeadingComments(sql);
            String[] parts = body.split("[\\s(]+", count + 1);
            StringBuilder out = new StringBuilder();
            for (int i = 0; i < Math.min(count, parts.length); i++) {
                out.append(i == 0 ? "" : " ").append(parts[i].toUpperCase(Locale.ROOT));
            }
            return out.toString();
        }
    }

    public static List<Statement> split(String script) {
        List<Statement> statements = new ArrayList<>();
        add(statements, script, scan(script, statements), script.length());
        return statements;
    }

    /**
     * Whether every statement of the script is terminated: nothing but blanks and comments follows its last
     * top-level semicolon (an interactive shell runs what it has read once this holds).
     */
    public static boolean terminated(String script) {
        int tail = scan(script, new ArrayList<>());
        return stripLeadingComments(script.substring(tail)).isBlank() && !script.isBlank();
    }

    /** Adds the script's terminated statements to {@code statements} and returns where the unterminated rest starts. */
    private static int scan(String script, List<Statement> statements) {
        int length = script.length();
        int start = 0;
        int i = 0;
        while (i < length) {
            char c = script.charAt(i);
            if (c == '\'' || c == '"') {
                i = skipQuoted(script, i, c);
            } else if (c == '-' && i + 1 < length && script.charAt(i + 1) == '-') {
                int end = script.indexOf('\n', i);
                i = end < 0 ? length : end + 1;
            } else if (c == '/' && i + 1 < length && script.charAt(i + 1) == '*') {
                int end = script.indexOf("*/", i + 2);
                i = end < 0 ? length : end + 2;
            } else if (c == '$') {
                i = skipDollarQuoted(script, i);
            } else if (c == ';') {
                add(statements, script, start, i);
                start = i + 1;
                i++;
            } else {
                i++;
            }
        }
        return start;
    }

    private static void add(List<Statement> statements, String script, int start, int end) {
        String text = script.substring(start, end);
        String body = stripLeadingComments(text);
        if (body.isBlank()) {
            return;
        }
        // body is a suffix of text: the statement's line is that of its first keyword, past any comments.
        int offset = start + text.length() - body.length();
        statements.add(new Statement(text.strip(), lineAt(script, offset)));
    }

    private static int lineAt(String script, int offset) {
        int line = 1;
        for (int i = 0; i < offset && i < script.length(); i++) {
            if (script.charAt(i) == '\n') {
                line++;
            }
        }
        return line;
    }

    private static int skipQuoted(String script, int at, char quote) {
        int i = at + 1;
        while (i < script.length()) {
            if (script.charAt(i) == quote) {
                if (i + 1 < script.length() && script.charAt(i + 1) == quote) {
                    i += 2;
                    continue;
                }
                return i + 1;
            }
            i++;
        }
        return script.length();
    }

    private static int skipDollarQuoted(String script, int at) {
        int tagEnd = script.indexOf('$', at + 1);
        if (tagEnd < 0) {
            return at + 1;
        }
        String tag = script.substring(at, tagEnd + 1);
        if (!tag.matches("\\$[A-Za-z_]*\\$")) {
            return at + 1;
        }
        int close = script.indexOf(tag, tagEnd + 1);
        return close < 0 ? script.length() : close + tag.length();
    }

    static String stripLeadingComments(String text) {
        String rest = text.stripLeading();
        while (true) {
            if (rest.startsWith("--")) {
                int end = rest.indexOf('\n');
                rest = end < 0 ? "" : rest.substring(end + 1).stripLeading();
            } else if (rest.startsWith("/*")) {
                int end = rest.indexOf("*/");
                rest = end < 0 ? "" : rest.substring(end + 2).stripLeading();
            } else {
                return rest;
            }
        }
    }
}
