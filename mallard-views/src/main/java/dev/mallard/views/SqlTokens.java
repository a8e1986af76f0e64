// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static java.util.Objects.requireNonNull;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * DuckDB's lexical structure, as far as the front door needs it to read the statements DuckDB's grammar does not
 * have ({@code CREATE MATERIALIZED VIEW} and its kin cannot go through {@code json_serialize_sql}, which parses only
 * SELECT): comments ({@code --} to the line's end, nested {@code /* *}{@code /}), strings ({@code '...'} with
 * {@code ''}, {@code E'...'} with backslash escapes, {@code $tag$...$tag$}), quoted identifiers ({@code "..."} with
 * {@code ""}), words and single symbols. A statement's kind is decided on these tokens, never on its raw text, so a
 * comment, a line break or a keyword inside a string cannot change it.
 */
final class SqlTokens {
    enum Kind { WORD, QUOTED, STRING, NUMBER, SYMBOL }

    /** One token: its kind, its value (a quoted identifier or string unescaped) and where it lies in the text. */
    record Token(Kind kind, String value, int start, int end) {
        Token {
            requireNonNull(kind, "kind is null");
            requireNonNull(value, "value is null");
        }

        /** Whether this is the (unquoted) keyword. */
        boolean is(String keyword) {
            return kind == Kind.WORD && value.equalsIgnoreCase(keyword);
        }

        boolean isSymbol(char symbol) {
            return kind == Kind.SYMBOL && value.charAt(0) == symbol;
        }

        /** Whether this token can be a name: a word or a quoted identifier. */
        boolean isName() {
            return kind == Kind.WORD || kind == Kind.QUOTED;
        }
    }

    private SqlTokens() {}

    /** The tokens of {@code sql}; an unterminated string, identifier or comment ends at the text's end. */
    static List<Token> of(String sql) {
        requireNonNull(sql, "sql is null");
        List<Token> tokens = new ArrayList<>();
        int i = 0;
        int n = sql.length();
        while (i < n) {
            char c = sql.charAt(i);
            if (Character.isWhitespace(c)) {
                i++;
            } else if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
                while (i < n && sql.charAt(i) != '\n') {
                    i++;
                }
            } else if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
                i = blockCommentEnd(sql, i);
            } else if (c == '\'') {
                int end = quotedEnd(sql, i, '\'');
                tokens.add(new Token(Kind.STRING, unquote(sql, i, end, '\''), i, end));
                i = end;
            } else if ((c == 'e' || c == 'E') && i + 1 < n && sql.charAt(i + 1) == '\'') {
                int end = escapedStringEnd(sql, i + 1);
                tokens.add(new Token(Kind.STRING, sql.substring(i + 2, Math.max(i + 2, end - 1)), i, end));
                i = end;
            } else if (c == '"') {
                int end = quotedEnd(sql, i, '"');
                tokens.add(new Token(Kind.QUOTED, unquote(sql, i, end, '"'), i, end));
                i = end;
            } else if (c == '$' && dollarTag(sql, i) != null) {
                String tag = dollarTag(sql, i);
                int close = sql.indexOf(tag, i + tag.length());
                int end = close < 0 ? n : close + tag.length();
                tokens.add(new Token(Kind.STRING, sql.substring(i + tag.length(), close < 0 ? n : close), i, end));
                i = end;
            } else if (Character.isLetter(c) || c == '_' || c > 127) {
                int start = i;
                while (i < n && (Character.isLetterOrDigit(sql.charAt(i)) || sql.charAt(i) == '_' || sql.charAt(i) == '$'
                        || sql.charAt(i) > 127)) {
                    i++;
                }
                tokens.add(new Token(Kind.WORD, sql.substring(start, i), start, i));
            } else if (Character.isDigit(c)) {
                int start = i;
                while (i < n && (Character.isLetterOrDigit(sql.charAt(i)) || sql.charAt(i) == '.' || sql.charAt(i) == '_')) {
                    i++;
                }
                tokens.add(new Token(Kind.NUMBER, sql.substring(start, i), start, i));
            } else {
                tokens.add(new Token(Kind.SYMBOL, String.valueOf(c), i, i + 1));
                i++;
            }
        }
        return List.copyOf(tokens);
    }

    /** The text's tokens up to the first {@code ;} outside strings and comments, and whether anything but {@code ;} follows it. */
    static boolean severalStatements(List<Token> tokens) {
        boolean ended = false;
        for (Token token : tokens) {
            if (token.isSymbol(';')) {
                ended = true;
            } else if (ended) {
                return true;
            }
        }
        return false;
    }

    /** The statement's first keyword, upper case, or empty for a text of comments only. */
    static String firstKeyword(List<Token> tokens) {
        for (Token token : tokens) {
            if (token.isSymbol('(')) {
                continue; // (SELECT ...) UNION ...
            }
            return token.kind() == Kind.WORD ? token.value().toUpperCase(Locale.ROOT) : "";
        }
        return "";
    }

    private static int blockCommentEnd(String sql, int start) {
        int depth = 0;
        int i = start;
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

    /** The index after the closing quote; a doubled quote is part of the text. */
    private static int quotedEnd(String sql, int start, char quote) {
        int i = start + 1;
        while (i < sql.length()) {
            if (sql.charAt(i) == quote) {
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

    private static int escapedStringEnd(String sql, int quote) {
        int i = quote + 1;
        while (i < sql.length()) {
            char c = sql.charAt(i);
            if (c == '\\') {
                i += 2;
            } else if (c == '\'') {
                if (i + 1 < sql.length() && sql.charAt(i + 1) == '\'') {
                    i += 2;
                    continue;
                }
                return i + 1;
            } else {
                i++;
            }
        }
        return sql.length();
    }

    private static String unquote(String sql, int start, int end, char quote) {
        boolean closed = end - start >= 2 && sql.charAt(end - 1) == quote;
        String inner = sql.substring(start + 1, closed ? end - 1 : end);
        return inner.replace(String.valueOf(quote) + quote, String.valueOf(quote));
    }

    /** {@code $tag$} (or {@code $$}) at {@code start}, or null when the dollar starts no quoting there. */
    private static String dollarTag(String sql, int start) {
        int i = start + 1;
        while (i < sql.length() && (Character.isLetterOrDigit(sql.charAt(i)) || sql.charAt(i) == '_')) {
            i++;
        }
        if (i < sql.length() && sql.charAt(i) == '$' && (i == start + 1 || !Character.isDigit(sql.charAt(start + 1)))) {
            return sql.substring(start, i + 1);
        }
        return null;
    }
}
