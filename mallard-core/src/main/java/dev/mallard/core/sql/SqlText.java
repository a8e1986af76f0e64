// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.sql;

import java.sql.SQLException;

/**
 * The few pieces of SQL text Mallard writes itself: quoted identifiers and string literals (for names and values it
 * has already checked, never to splice a user's text into a statement; a user's values are bound as parameters),
 * and the first line of a DuckDB error for a one-line message. DuckDB and Postgres quote the same way.
 */
public final class SqlText {
    private SqlText() {}

    /** A double-quoted identifier: {@code my "t"} becomes {@code "my ""t"""}. */
    public static String identifier(String name) {
        return '"' + name.replace("\"", "\"\"") + '"';
    }

    /** A qualified name, each part quoted: {@code a, b} becomes {@code "a"."b"}. */
    public static String qualified(String... parts) {
        StringBuilder sql = new StringBuilder();
        for (String part : parts) {
            sql.append(sql.isEmpty() ? "" : ".").append(identifier(part));
        }
        return sql.toString();
    }

    /** A single-quoted string literal: {@code it's} becomes {@code 'it''s'}. */
    public static String literal(String text) {
        return "'" + text.replace("'", "''") + "'";
    }

    /** The first line of a message (DuckDB's errors continue with context lines); {@code ""} for none. */
    public static String firstLine(String message) {
        if (message == null) {
            return "";
        }
        int newline = message.indexOf('\n');
        return newline < 0 ? message : message.substring(0, newline);
    }

    /** The first line of an exception's message. */
    public static String firstLine(SQLException e) {
        return firstLine(e.getMessage());
    }
}
