// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.io.IOException;
import java.sql.Connection;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * DuckDB's own parser and printer: {@code json_serialize_sql} gives the parse tree of a statement and
 * {@code json_deserialize_sql} turns a tree back into SQL, so the compiler reads and writes SQL with
 * DuckDB's grammar instead of a grammar of its own.
 */
final class SqlTree {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Connection connection;
    private final ObjectNode template;

    SqlTree(Connection connection) {
        this.connection = connection;
        this.template = (ObjectNode) serialize("SELECT 1");
    }

    /** The SELECT node of a one-statement query. */
    JsonNode parseQuery(String sql) {
        JsonNode tree = serialize(sql);
        JsonNode statements = tree.path("statements");
        if (statements.size() != 1) {
            throw new MallardException(ErrorCode.USER_SQL_INVALID,
                    "a materialized view is defined by exactly one query; got " + statements.size() + " statements");
        }
        return statements.get(0).path("node");
    }

    /**
     * The names (lower case, without schema) of the tables a query reads anywhere in its tree, CTE names included:
     * what a query may read, for callers that must prepare every relation it could.
     */
    Set<String> tableNames(String sql) {
        Set<String> names = new HashSet<>();
        collectTableNames(serialize(sql), names);
        return names;
    }

    private static void collectTableNames(JsonNode node, Set<String> names) {
        if (node.isObject() && "BASE_TABLE".equals(node.path("type").asText()) && node.has("table_name")) {
            names.add(node.path("table_name").asText().toLowerCase(Locale.ROOT));
        }
        node.forEach(child -> collectTableNames(child, names));
    }

    /** The tree of one scalar expression written in SQL. */
    JsonNode parseExpression(String sql) {
        return parseQuery("SELECT " + sql).path("select_list").get(0);
    }

    /** The SQL text of one SELECT node's tree, as DuckDB prints it. */
    String printQuery(JsonNode node) {
        ObjectNode statement = template.deepCopy();
        ((ObjectNode) statement.path("statements").get(0)).set("node", node.deepCopy());
        return Sql.strings(connection, "SELECT json_deserialize_sql(?::JSON)", statement.toString()).get(0);
    }

    /** The names and types of a query's columns, from DESCRIBE, as name NUL type. */
    List<String> describe(String sql) {
        return Sql.strings(connection, "SELECT column_name || chr(0) || column_type FROM (DESCRIBE " + sql + "\n)");
    }

    /** The SQL text of one expression tree, as DuckDB prints it. */
    String print(JsonNode expression) {
        ObjectNode statement = template.deepCopy();
        ObjectNode node = (ObjectNode) statement.path("statements").get(0).path("node");
        ObjectNode copy = expression.deepCopy();
        copy.put("alias", "");
        ArrayNode list = node.putArray("select_list");
        list.add(copy);
        String sql = Sql.strings(connection, "SELECT json_deserialize_sql(?::JSON)", statement.toString()).get(0);
        if (!sql.startsWith("SELECT ")) {
            throw new MallardException(ErrorCode.SYSTEM_INTERNAL, "DuckDB printed an expression as " + sql);
        }
        return sql.substring("SELECT ".length());
    }

    /** The parse tree of a text of SELECT statements, or null when DuckDB does not parse it as such (any other statement). */
    JsonNode parseOrNull(String sql) {
        String text = Sql.strings(connection, "SELECT json_serialize_sql(?)", sql).get(0);
        try {
            JsonNode tree = JSON.readTree(text);
            return tree.path("error").asBoolean(false) ? null : tree;
        } catch (IOException e) {
            throw new MallardException(ErrorCode.SYSTEM_INTERNAL, "DuckDB's parse tree is not JSON: " + e.getMessage(), e);
        }
    }

    private JsonNode serialize(String sql) {
        String text = Sql.strings(connection, "SELECT json_serialize_sql(?)", sql).get(0);
        JsonNode tree;
        try {
            tree = JSON.readTree(text);
        } catch (IOException e) {
            throw new MallardException(ErrorCode.SYSTEM_INTERNAL, "DuckDB's parse tree is not JSON: " + e.getMessage(), e);
        }
        if (tree.path("error").asBoolean(false)) {
            throw new MallardException(ErrorCode.USER_SQL_INVALID,
                    "the view's query does not parse: " + tree.path("error_message").asText());
        }
        return tree;
    }

    /** A copy without source positions and aliases, for comparing two expressions by structure. */
    static JsonNode shape(JsonNode node) {
        if (node.isObject()) {
            ObjectNode copy = JSON.createObjectNode();
            Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
            while (fields.hasNext()) {
                Map.Entry<String, JsonNode> field = fields.next();
                if (!List.of("query_location", "query_location_length", "alias").contains(field.getKey())) {
                    copy.set(field.getKey(), shape(field.getValue()));
                }
            }
            return copy;
        }
        if (node.isArray()) {
            ArrayNode copy = JSON.createArrayNode();
            node.forEach(element -> copy.add(shape(element)));
            return copy;
        }
        return node;
    }
}
