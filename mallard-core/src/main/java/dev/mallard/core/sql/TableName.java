// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.sql;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A table's name as DuckDB reads it: {@code source}, {@code main.source}, {@code test_db.source},
 * {@code test_db.s.source} or any part quoted ({@code "odd.name"}). The parts come from DuckDB's own parse tree
 * of {@code SELECT * FROM <text>}, so a dot inside quotes stays in its part and case follows DuckDB's rules.
 *
 * @param catalog the database, empty when not given
 * @param schema the schema, empty when not given
 */
public record TableName(Optional<String> catalog, Optional<String> schema, String table) {
    private static final ObjectMapper JSON = new ObjectMapper();

    public TableName {
        requireNonNull(catalog, "catalog is null");
        requireNonNull(schema, "schema is null");
        requireNonNull(table, "table is null");
    }

    /** One unqualified name, taken as it is (never parsed). */
    public static TableName of(String table) {
        return new TableName(Optional.empty(), Optional.empty(), table);
    }

    /**
     * Reads {@code text} as a table reference; anything else (a join, a subquery, an alias, a function) is refused.
     *
     * @param key the configuration key the text comes from, named in the error
     */
    public static TableName parse(Connection connection, String text, String key) {
        requireNonNull(connection, "connection is null");
        requireNonNull(text, "text is null");
        JsonNode tree;
        try (PreparedStatement statement = connection.prepareStatement("SELECT json_serialize_sql(?)")) {
            statement.setString(1, "SELECT * FROM " + text);
            try (ResultSet rows = statement.executeQuery()) {
                rows.next();
                tree = JSON.readTree(rows.getString(1));
            }
        } catch (SQLException | java.io.IOException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot read the table name " + text + ": " + e.getMessage(), e);
        }
        JsonNode statements = tree.path("statements");
        JsonNode node = statements.path(0).path("node");
        JsonNode from = node.path("from_table");
        boolean plain = !tree.path("error").asBoolean(true) && statements.size() == 1
                && node.path("type").asText().equals("SELECT_NODE")
                && node.path("where_clause").isNull() && node.path("group_expressions").isEmpty() && node.path("having").isNull()
                && node.path("qualify").isNull() && node.path("modifiers").isEmpty() && node.path("cte_map").path("map").isEmpty()
                && node.path("sample").isNull()
                && from.path("type").asText().equals("BASE_TABLE") && from.path("alias").asText().isEmpty()
                && from.path("sample").isNull() && from.path("at_clause").isNull() && from.path("column_name_alias").isEmpty()
                && !from.path("table_name").asText().isEmpty();
        if (!plain) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, key + ": " + text + " is not a table name; write table, "
                    + "schema.table or database.schema.table (quote a part with \"...\" when it holds a dot)");
        }
        return new TableName(part(from, "catalog_name"), part(from, "schema_name"), from.path("table_name").asText());
    }

    private static Optional<String> part(JsonNode from, String field) {
        String value = from.path(field).asText("");
        return value.isEmpty() ? Optional.empty() : Optional.of(value);
    }

    /** The name for SQL: each part quoted, so case, dots and keywords survive. */
    public String quoted() {
        List<String> parts = new ArrayList<>(3);
        catalog.ifPresent(parts::add);
        schema.ifPresent(parts::add);
        parts.add(table);
        return SqlText.qualified(parts.toArray(String[]::new));
    }

    /** The name as a user writes it, for messages. */
    @Override
    public String toString() {
        List<String> parts = new ArrayList<>(3);
        catalog.ifPresent(parts::add);
        schema.ifPresent(parts::add);
        parts.add(table);
        return String.join(".", parts);
    }
}
