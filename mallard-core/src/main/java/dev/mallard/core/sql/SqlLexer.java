// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.sql;

/**
 * The little lexing the classifier does before DuckDB's parser sees a text: how deep its brackets nest (DuckDB's
 * parser and planner overflow their stacks on a few hundred nested subqueries, so the bound is checked first), and
 * the leading keywords of a statement DuckDB does not serialise ({@code EXPLAIN [ANALYZE]}). Quotes, dollar quotes
 * and comments are skipped as DuckDB's scanner (PostgreSQL's) reads them: nested block comments, {@code E'...'}
 * strings with backslash escapes.
 */
final class SqlLexer {
    private SqlLexer() {}

    /** The deepest nesting of {@code (}, {@code [} and {@code {} outside quotes and comments. */
    static int nestingDepth(String sql) {
        int depth = 0;
        int deepest = 0;
        int length = sql.length();
        int i = 0;
        while (i < length) {
            char c = sql.charAt(i);
            int skipped = skip(sql, i);
            if (skipped != i) {
                i = skipped;
                continue;
            }
            if (c == '(' || c == '[' || c == '{') {
                depth++;
                deepest = Math.max(deepest, depth);
            } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
                depth--;
            }
            i++;
        }
        return deepest;
    }

    /** Where the blanks and comments starting at {@code at} end. */
    static int skipBlanks(String sql, int at) {
        int i = at;
        while (i < sql.length()) {
            char c = sql.charAt(i);
            if (Character.isWhitespace(c)) {
                i++;
            } else if (startsComment(sql, i)) {
                i = skip(sql, i);
            } else {
                return i;
            }
        }
        return i;
    }

    /** The end of the word (letters, digits, underscores) starting at {@code at}; {@code at} when none starts there. */
    static int wordEnd(String sql, int at) {
        int i = at;
        while (i < sql.length() && (Character.isLetterOrDigit(sql.charAt(i)) || sql.charAt(i) == '_')) {
            i++;
        }
        return i;
    }

    private static boolean startsComment(String sql, int i) {
        return sql.startsWith("--", i) || sql.startsWith("/*", i);
    }

    /** Past the quoted text or comment starting at {@code at}; {@code at} when none starts there. */
    private static int skip(String sql, int at) {
        char c = sql.charAt(at);
        if (sql.startsWith("--", at)) {
            int end = sql.indexOf('\n', at);
            return end < 0 ? sql.length() : end + 1;
        }
        if (sql.startsWith("/*", at)) {
            return skipBlockComment(sql, at);
        }
        if (c == '\'') {
            boolean escapes = at > 0 && (sql.charAt(at - 1) == 'E' || sql.charAt(at - 1) == 'e')
                    && (at < 2 || !isIdentifierPart(sql.charAt(at - 2)));
            return skipQuoted(sql, at, '\'', escapes);
        }
        if (c == '"') {
            return skipQuoted(sql, at, '"', false);
        }
        if (c == '$' && (at == 0 || !isIdentifierPart(sql.charAt(at - 1)))) {
            return skipDollarQuoted(sql, at);
        }
        return at;
    }

    private static boolean isIdentifierPart(char c) {
        return Character.isLetterOrDigit(c) || c == '_' || c == '$';
    }

    private static int skipBlockComment(String sql, int at) {
        int depth = 0;
        int i = at;
        while (i < sql.length()) {
            if (sql.startsWith("/*", i)) {
                depth++;
                i += 2;
            } else if (sql.startsWith("*/", i)) {
                depth--;
                i += 2;
                if (depth == 0) {
                    return i;
                }
            } else {
                i++;
            }
        }
        return sql.length();
    }

    private static int skipQuoted(String sql, int at, char quote, boolean backslashEscapes) {
        int i = at + 1;
        while (i < sql.length()) {
            char c = sql.charAt(i);
            if (backslashEscapes && c == '\\') {
                i += 2;
                continue;
            }
            if (c == quote) {
                if (i + 1 < sql.length() && sql.charAt(i + 1) == quote) {
                    i += 2;
                    continue;
                }
                return i + 1;
            }
            i++;
        }
        return sql.length();
    }

    private static int skipDollarQuoted(String sql, int at) {
        int i = at + 1;
        while (i < sql.length() && (Character.isLetter(sql.charAt(i)) || sql.charAt(i) == '_' || (i > at + 1 && Character.isDigit(sql.charAt(i))))) {
            i++;
        }
        if (i >= sql.length() || sql.charAt(i) != '$') {
            return at; // a parameter ($1) or a lone dollar, not a quote
        }
        String tag = sql.substring(at, i + 1);
        int close = sql.indexOf(tag, i + 1);
        return close < 0 ? sql.length() : close + tag.length();
    }
}
