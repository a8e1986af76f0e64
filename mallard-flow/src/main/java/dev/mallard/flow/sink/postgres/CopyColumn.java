// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink.postgres;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.sql.SqlText;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One result column on its way into a Postgres column: the DuckDB expression that renders a value as the text
 * Postgres's input function for the destination type reads. DuckDB does the rendering, in bulk, so the Java side
 * only moves bytes.
 *
 * <ul>
 *   <li>to a {@code json}/{@code jsonb} column: a DuckDB {@code JSON} or {@code VARCHAR} as it is, anything else
 *       (structs, maps, lists, scalars) through {@code to_json};
 *   <li>a list to a Postgres array: an array literal ({@code {"a","b"}}, nested lists as nested braces);
 *   <li>any other struct, map or list: its JSON text;
 *   <li>{@code TIMESTAMPTZ}: UTC with a {@code +00} offset, whatever the session's time zone;
 *   <li>{@code BLOB} to {@code bytea}: hex input format;
 *   <li>everything else: DuckDB's text form, which Postgres reads for numbers (DECIMAL exactly, {@code inf} and
 *       {@code nan} too), booleans, text, dates, timestamps, times, intervals and UUIDs.
 * </ul>
 *
 * @param name the column's name in the result and in the destination table
 * @param duckDbType the DuckDB type as DESCRIBE prints it, e.g. {@code DECIMAL(10,2)}, {@code INTEGER[]}
 * @param postgresType pgjdbc's type name of the destination column, e.g. {@code int4}, {@code _text}, {@code jsonb}
 */
record CopyColumn(String name, String duckDbType, String postgresType) {
    private static final Pattern LIST = Pattern.compile("^(.*)\\[\\d*]$");

    CopyColumn {
        requireNonNull(name, "name is null");
        requireNonNull(duckDbType, "duckDbType is null");
        requireNonNull(postgresType, "postgresType is null");
    }

    /** A DuckDB expression of type VARCHAR, NULL where the value is NULL. */
    String expression() {
        String column = SqlText.identifier(name);
        if (postgresType.equals("json") || postgresType.equals("jsonb")) {
            return duckDbType.equals("JSON") || duckDbType.equals("VARCHAR") ? column + "::VARCHAR" : "to_json(" + column + ")::VARCHAR";
        }
        Matcher list = LIST.matcher(duckDbType);
        if (postgresType.startsWith("_") && list.matches()) {
            return arrayLiteral(column, list.group(1), 1);
        }
        if (postgresType.equals("bytea") && duckDbType.equals("BLOB")) {
            return "'\\x' || hex(" + column + ")";
        }
        return scalar(column, duckDbType);
    }

    private static String scalar(String value, String type) {
        if (type.equals("TIMESTAMP WITH TIME ZONE")) {
            return "strftime(timezone('UTC', " + value + "), '%Y-%m-%d %H:%M:%S.%f') || '+00'";
        }
        if (LIST.matcher(type).matches() || type.startsWith("STRUCT") || type.startsWith("MAP") || type.startsWith("UNION")) {
            return "to_json(" + value + ")::VARCHAR";
        }
        return value + "::VARCHAR";
    }

    private static String arrayLiteral(String value, String elementType, int depth) {
        String element = "x" + depth;
        Matcher inner = LIST.matcher(elementType);
        String rendered = inner.matches()
                ? "coalesce(" + arrayLiteral(element, inner.group(1), depth + 1) + ", 'NULL')"
                : "CASE WHEN " + element + " IS NULL THEN 'NULL' ELSE '\"' || replace(replace(" + scalar(element, elementType)
                        + ", '\\', '\\\\'), '\"', '\\\"') || '\"' END";
        return "CASE WHEN " + value + " IS NULL THEN NULL ELSE '{' || array_to_string(list_transform(" + value
                + "::" + elementType + "[], lambda " + element + ": " + rendered + "), ',') || '}' END";
    }
}
