// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.namedquery;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlText;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The {@code named_query_table}: DazzleDuck's columns {@code id, name, template, validators, description,
 * parameter_descriptions, preferred_display, query_group}. {@code name} and {@code template} are required; a table
 * without {@code id} numbers its rows by name, and any other missing column reads as null. The table's name is the
 * server's configuration, quoted as an identifier; a request's name is bound, never spliced.
 */
final class NamedQueryTable {
    private static final JsonFactory JSON = new JsonFactory();

    /** One row: the template and what runs before it renders. */
    record Definition(long id, String name, String template, List<String> validators) {}

    private final String table;
    private final String[] parts;

    NamedQueryTable(String table) {
        this.table = requireNonNull(table, "table is null");
        this.parts = table.split("\\.");
    }

    private String quoted() {
        return SqlText.qualified(parts);
    }

    private Set<String> columns(Connection connection) throws SQLException {
        Set<String> columns = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
        try (PreparedStatement statement = connection.prepareStatement("SELECT * FROM " + quoted() + " LIMIT 0");
                ResultSet rows = statement.executeQuery()) {
            for (int i = 1; i <= rows.getMetaData().getColumnCount(); i++) {
                columns.add(rows.getMetaData().getColumnName(i));
            }
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "named_query_table " + table + " cannot be read: " + e.getMessage(), e);
        }
        if (!columns.contains("name") || !columns.contains("template")) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "named_query_table " + table + " needs the columns name and template");
        }
        return columns;
    }

    /** The row selection with every column DazzleDuck's answers name, null where the table lacks it. */
    private String select(Set<String> columns, boolean withTemplate) {
        String id = columns.contains("id") ? "id" : "row_number() OVER (ORDER BY name)";
        List<String> fields = new ArrayList<>();
        fields.add(id + " AS id");
        fields.add("name");
        if (withTemplate) {
            fields.add("template");
        }
        fields.add(column(columns, "description", "VARCHAR") + " AS description");
        fields.add(column(columns, "parameter_descriptions", "MAP(VARCHAR, VARCHAR)") + " AS parameter_descriptions");
        fields.add(column(columns, "validators", "VARCHAR[]") + " AS validators");
        fields.add(column(columns, "preferred_display", "VARCHAR") + " AS preferred_display");
        fields.add(column(columns, "query_group", "VARCHAR") + " AS query_group");
        return "SELECT * FROM (SELECT " + String.join(", ", fields) + " FROM " + quoted() + ") named";
    }

    private static String column(Set<String> columns, String name, String type) {
        return columns.contains(name) ? name : "CAST(NULL AS " + type + ")";
    }

    /** GET /v1/named-query: the rows whose id is above {@code offset}, at most {@code limit}, as a JSON array. */
    byte[] list(Connection connection, long offset, int limit) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(select(columns(connection), false) + " WHERE id > ? ORDER BY id LIMIT ?")) {
            statement.setLong(1, offset);
            statement.setInt(2, limit);
            try (ResultSet rows = statement.executeQuery()) {
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                try (JsonGenerator json = JSON.createGenerator(out)) {
                    json.writeStartArray();
                    while (rows.next()) {
                        write(json, rows, false);
                    }
                    json.writeEndArray();
                }
                return out.toByteArray();
            }
        } catch (IOException e) {
            throw new MallardException(ErrorCode.SYSTEM_INTERNAL, "cannot write the named queries: " + e.getMessage(), e);
        }
    }

    /** GET /v1/named-query/{name}: the row with its template, as a JSON object. */
    Optional<byte[]> describe(Connection connection, String name) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(select(columns(connection), true) + " WHERE name = ?")) {
            statement.setString(1, name);
            try (ResultSet rows = statement.executeQuery()) {
                if (!rows.next()) {
                    return Optional.empty();
                }
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                try (JsonGenerator json = JSON.createGenerator(out)) {
                    write(json, rows, true);
                }
                return Optional.of(out.toByteArray());
            }
        } catch (IOException e) {
            throw new MallardException(ErrorCode.SYSTEM_INTERNAL, "cannot write the named query: " + e.getMessage(), e);
        }
    }

    Optional<Definition> find(Connection connection, String name) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(select(columns(connection), true) + " WHERE name = ?")) {
            statement.setString(1, name);
            try (ResultSet rows = statement.executeQuery()) {
                if (!rows.next()) {
                    return Optional.empty();
                }
                return Optional.of(new Definition(rows.getLong("id"), rows.getString("name"), rows.getString("template"), strings(rows.getArray("validators"))));
            }
        }
    }

    private static void write(JsonGenerator json, ResultSet rows, boolean withTemplate) throws SQLException, IOException {
        json.writeStartObject();
        json.writeNumberField("id", rows.getLong("id"));
        json.writeStringField("name", rows.getString("name"));
        if (withTemplate) {
            json.writeStringField("template", rows.getString("template"));
        }
        json.writeStringField("description", rows.getString("description"));
        json.writeFieldName("parameterDescriptions");
        Object map = rows.getObject("parameter_descriptions");
        if (map instanceof Map<?, ?> entries) {
            json.writeStartObject();
            for (Map.Entry<?, ?> entry : new LinkedHashMap<>(entries).entrySet()) {
                json.writeStringField(String.valueOf(entry.getKey()), entry.getValue() == null ? null : String.valueOf(entry.getValue()));
            }
            json.writeEndObject();
        } else {
            json.writeNull();
        }
        json.writeFieldName("validatorDescriptions");
        Array validators = rows.getArray("validators");
        if (validators == null) {
            json.writeNull();
        } else {
            json.writeStartArray();
            for (String validator : strings(validators)) {
                json.writeString(validator);
            }
            json.writeEndArray();
        }
        json.writeStringField("preferred_display", rows.getString("preferred_display"));
        json.writeStringField("query_group", rows.getString("query_group"));
        json.writeEndObject();
    }

    private static List<String> strings(Array array) throws SQLException {
        if (array == null) {
            return List.of();
        }
        List<String> values = new ArrayList<>();
        for (Object value : (Object[]) array.getArray()) {
            values.add(String.valueOf(value));
        }
        return values;
    }
}
