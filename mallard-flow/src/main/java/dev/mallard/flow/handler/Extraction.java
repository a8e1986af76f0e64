// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.handler;

import dev.mallard.core.sql.SqlText;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The SQL that turns a JSON line into one value per column, parsing the line once (twice when a column has
 * type JSON).
 *
 * <p>{@code json_extract_string(line, [paths])} reads every non-JSON column in one parse and hands back text:
 * a JSON string decoded (escapes and all), anything else as its JSON text, a JSON null or a missing key as
 * NULL. From that text:
 * <ul>
 *   <li>VARCHAR: the text itself, so an object, list or number arriving there keeps its JSON text.
 *   <li>STRUCT, MAP, UNION, lists: {@code json_transform(text, '"<type>"')}, which accepts the whole DuckDB
 *       type as its structure and makes a missing nested key NULL.
 *   <li>Anything else: {@code CAST(text AS <type>)}, which fails on text that does not convert.
 * </ul>
 * JSON columns need the value as JSON, which the text loses for strings, so they come from a second
 * {@code json_extract} (only when the table has such a column); a JSON null becomes NULL there too.
 *
 * <p>Record columns ({@link RecordColumns}) read the record's topic, partition and offset, which travel beside
 * the line as the columns {@link ArrowLines#TOPIC}, {@link ArrowLines#PARTITION} and {@link ArrowLines#OFFSET},
 * or its event time, read in Java by {@link EventTimeReader} and carried as {@link ArrowLines#EVENT_TIME}.
 *
 * <p>Measured against {@code json_extract} plus {@code ->> '$'} per VARCHAR column, reading text in one go
 * saves a parse per column and about a quarter of the statement's time.
 */
final class Extraction {
    private static final Pattern NESTED = Pattern.compile("(?is)^\\s*(STRUCT|MAP|UNION)\\s*\\(.*|.*\\]\\s*$");

    private final List<Column> columns;
    private final List<String> expressions = new ArrayList<>();
    private final String textPaths;
    private final String jsonPaths;

    /** @param castAll cast every expression to its column's type, so that CREATE TABLE AS gets exactly it */
    Extraction(List<Column> columns, boolean castAll, RecordColumns records) {
        this.columns = List.copyOf(columns);
        List<String> text = new ArrayList<>();
        List<String> json = new ArrayList<>();
        for (Column column : this.columns) {
            String type = column.type().strip();
            String pointer = SqlText.literal(JsonText.topLevelPointer(column.name()));
            String expression;
            RecordColumns.Origin origin = records.originOf(column.name());
            if (origin != RecordColumns.Origin.JSON) {
                expression = "CAST(" + recordValue(origin) + " AS " + type + ")";
            } else if (isJson(type)) {
                json.add(pointer);
                expression = "nullif(j[" + json.size() + "], 'null')";
            } else {
                text.add(pointer);
                String value = "s[" + text.size() + "]";
                if (isText(type)) {
                    expression = value;
                } else if (NESTED.matcher(type).matches()) {
                    expression = "json_transform(" + value + ", " + SqlText.literal(JsonText.jsonString(type)) + ")";
                } else {
                    expression = "CAST(" + value + " AS " + type + ")";
                }
            }
            if (castAll && !expression.startsWith("CAST(")) {
                expression = "CAST(" + expression + " AS " + type + ")";
            }
            expressions.add(expression);
        }
        textPaths = text.isEmpty() ? null : "[" + String.join(", ", text) + "]";
        jsonPaths = json.isEmpty() ? null : "[" + String.join(", ", json) + "]";
    }

    private static String recordValue(RecordColumns.Origin origin) {
        return switch (origin) {
            case TOPIC -> ArrowLines.TOPIC;
            case PARTITION -> ArrowLines.PARTITION;
            case OFFSET -> ArrowLines.OFFSET;
            case EVENT_TIME -> ArrowLines.EVENT_TIME;
            case JSON -> throw new IllegalArgumentException("not a record column");
        };
    }

    List<Column> columns() {
        return columns;
    }

    /** {@code SELECT <all columns> FROM (<extraction of line> [from])}. */
    String select(String line, String from) {
        StringBuilder sql = new StringBuilder("SELECT ");
        for (int c = 0; c < columns.size(); c++) {
            if (c > 0) {
                sql.append(", ");
            }
            sql.append(expressions.get(c)).append(" AS ").append(SqlText.identifier(columns.get(c).name()));
        }
        return sql.append(" FROM ").append(source(line, from)).toString();
    }

    /** {@code SELECT <one column> FROM (<extraction of line> [from])}: for finding the column that fails. */
    String selectOne(int column, String line, String from) {
        return "SELECT " + expressions.get(column) + " FROM " + source(line, from);
    }

    private String source(String line, String from) {
        StringBuilder sql = new StringBuilder("(SELECT ");
        sql.append(ArrowLines.TOPIC).append(", ").append(ArrowLines.PARTITION).append(", ").append(ArrowLines.OFFSET)
                .append(", ").append(ArrowLines.EVENT_TIME);
        if (textPaths != null) {
            sql.append(", json_extract_string(").append(line).append(", ").append(textPaths).append(") AS s");
        }
        if (jsonPaths != null) {
            sql.append(", json_extract(").append(line).append(", ").append(jsonPaths).append(") AS j");
        }
        if (!from.isEmpty()) {
            sql.append(' ').append(from);
        }
        return sql.append(')').toString();
    }

    private static boolean isText(String type) {
        String upper = type.toUpperCase(Locale.ROOT);
        return upper.equals("VARCHAR") || upper.equals("TEXT") || upper.equals("STRING");
    }

    private static boolean isJson(String type) {
        return type.equalsIgnoreCase("JSON");
    }
}
