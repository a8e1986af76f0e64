// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.rls;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * DuckDB's parse tree of a SQL text ({@code json_serialize_sql}) and the SQL text of a tree ({@code json_deserialize_sql}),
 * both called as {@code system.main.*} so that a macro of the same name cannot stand in for them.
 */
final class ParseTree {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ParseTree() {}

    /** The tree of a text; when DuckDB cannot serialise it the tree says so ({@code "error": true}). */
    static JsonNode serialize(Connection connection, String sql) throws SQLException {
        String json = single(connection, "SELECT system.main.json_serialize_sql(?::VARCHAR)", sql);
        try {
            return JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw new MallardException(ErrorCode.SYSTEM_INTERNAL, "json_serialize_sql returned unreadable JSON: " + e.getOriginalMessage(), e);
        }
    }

    static String deserialize(Connection connection, JsonNode tree) throws SQLException {
        return single(connection, "SELECT system.main.json_deserialize_sql(?::JSON)", tree.toString());
    }

    private static String single(Connection connection, String query, String argument) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(query)) {
            statement.setString(1, argument);
            try (ResultSet rs = statement.executeQuery()) {
                rs.next();
                return rs.getString(1);
            }
        }
    }
}
