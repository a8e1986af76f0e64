// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.sql;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Reads what a SQL text is from DuckDB's own parse tree ({@code json_serialize_sql}): the kind of each statement,
 * every table and function it reaches (in subqueries, CTEs, set operations, and the texts it hands to
 * {@code query()} / {@code query_table()}, which are classified in turn), whether a CTE body writes, its prepared
 * parameters, and whether it is a single top-level function call. It fails closed: a node type or expression class
 * it does not know, a {@code query()} whose argument is not a string literal, or a text nested deeper than the bound
 * is refused with a coded error rather than classified.
 *
 * <pre>{@code
 * Classification c = new StatementClassifier().classify(connection, "WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x");
 * c.statement().kind();   // QUERY
 * c.statement().writes(); // true
 * }</pre>
 *
 * <p>DuckDB serialises SELECT statements only; any other statement is {@link StatementKind#OTHER}, except
 * {@code EXPLAIN [ANALYZE] <query>}: its leading keywords are read here and the rest must be one query DuckDB
 * serialises, or the text is OTHER as well. Thread-safe; each call uses the connection it is given.
 */
public final class StatementClassifier {
    /** How deeply brackets (and so subqueries) may nest: DuckDB's planner crashed the process at 700 nested subqueries. */
    public static final int DEFAULT_MAX_NESTING_DEPTH = 100;
    /** How deeply {@code query('... query(''...'') ...')} may nest. */
    static final int MAX_TEXT_NESTING = 8;
    /** Jackson's bound on the serialised tree's depth, far above what {@code max_expression_depth} lets DuckDB's parser give. */
    private static final int MAX_JSON_DEPTH = 5_000;

    private static final Set<String> QUERY_NODES = Set.of("SELECT_NODE", "SET_OPERATION_NODE", "RECURSIVE_CTE_NODE", "CTE_NODE");
    private static final Set<String> WRITING_NODES = Set.of("DELETE_QUERY_NODE", "INSERT_QUERY_NODE", "UPDATE_QUERY_NODE", "COPY_QUERY_NODE",
            "MERGE_INTO_QUERY_NODE");
    private static final Set<String> TABLE_REFS = Set.of("BASE_TABLE", "EMPTY", "EXPRESSION_LIST", "JOIN", "PIVOT", "SHOW_REF", "SUBQUERY",
            "TABLE_FUNCTION", "COLUMN_DATA");
    private static final Set<String> OTHER_TYPES = Set.of("DISTINCT_MODIFIER", "LIMIT_MODIFIER", "LIMIT_PERCENT_MODIFIER", "ORDER_MODIFIER",
            "ASCENDING", "DESCENDING", "ORDER_DEFAULT");
    private static final Set<String> EXPRESSION_CLASSES = Set.of("BETWEEN", "CASE", "CAST", "COLLATE", "COLUMN_REF", "COMPARISON", "CONJUNCTION",
            "CONSTANT", "DEFAULT", "FUNCTION", "LAMBDA", "LAMBDA_REF", "OPERATOR", "PARAMETER", "POSITIONAL_REFERENCE", "STAR", "SUBQUERY", "TYPE",
            "WINDOW");
    /** Table functions that run a SQL text given as an argument. */
    private static final String QUERY = "query";
    private static final String QUERY_TABLE = "query_table";
    /** Runs a serialised statement: nothing short of deserialising it tells what it does. */
    private static final Set<String> OPAQUE_FUNCTIONS = Set.of("json_execute_serialized_sql");

    private final ObjectMapper json;
    private final int maxNestingDepth;

    public StatementClassifier() {
        this(DEFAULT_MAX_NESTING_DEPTH);
    }

    /** @param maxNestingDepth how deeply brackets may nest in a text (and query nodes in its tree) */
    public StatementClassifier(int maxNestingDepth) {
        if (maxNestingDepth <= 0) {
            throw new IllegalArgumentException("maxNestingDepth must be positive");
        }
        this.maxNestingDepth = maxNestingDepth;
        this.json = new ObjectMapper(JsonFactory.builder()
                .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(MAX_JSON_DEPTH).maxStringLength(Integer.MAX_VALUE).build())
                .build());
    }

    public int maxNestingDepth() {
        return maxNestingDepth;
    }

    /**
     * Classifies {@code sql} with DuckDB's parser on {@code connection} (it runs {@code json_serialize_sql} there and
     * nothing of the text itself).
     *
     * @throws MallardException {@code user.sql.too_deep} when the text nests deeper than the bound (checked before
     *     DuckDB sees it); {@code user.sql.unsupported} when the tree holds something the classifier does not know,
     *     or {@code query()} is given anything but a string literal
     * @throws SQLException when DuckDB cannot run {@code json_serialize_sql} on the connection (a streaming result
     *     of it is still open, say)
     */
    public Classification classify(Connection connection, String sql) throws SQLException {
        requireNonNull(connection, "connection is null");
        return classify(connection, sql, text -> serialize(connection, text));
    }

    /**
     * As {@link #classify(Connection, String)}, with DuckDB's {@code json_serialize_sql} called through
     * {@code serializer}: a server's session keeps that call prepared on its connection, which saves DuckDB preparing
     * it for every statement (most of the call's cost).
     */
    public Classification classify(Connection connection, String sql, Serializer serializer) throws SQLException {
        requireNonNull(connection, "connection is null");
        requireNonNull(sql, "sql is null");
        requireNonNull(serializer, "serializer is null");
        return classify(connection, sql, 0, serializer);
    }

    /** DuckDB's {@code json_serialize_sql} of a text, as the JSON text it returns. */
    @FunctionalInterface
    public interface Serializer {
        String serialize(String sql) throws SQLException;
    }

    private Classification classify(Connection connection, String sql, int textDepth, Serializer serializer) throws SQLException {
        if (textDepth > MAX_TEXT_NESTING) {
            throw new MallardException(ErrorCode.USER_SQL_TOO_DEEP, "query() texts nest more than " + MAX_TEXT_NESTING + " deep; run the inner query directly");
        }
        int depth = SqlLexer.nestingDepth(sql);
        if (depth > maxNestingDepth) {
            throw tooDeep(depth);
        }
        JsonNode parsed = read(serializer.serialize(sql));
        if (parsed.path("error").asBoolean(false)) {
            String type = parsed.path("error_type").asText("");
            String message = parsed.path("error_message").asText("DuckDB could not serialise the statement");
            if (type.equals("parser")) {
                return new Classification(sql, List.of(ClassifiedStatement.opaque(StatementKind.UNPARSED, message)));
            }
            return new Classification(sql, List.of(explainOrOther(connection, sql, textDepth, message, serializer)));
        }
        JsonNode statements = parsed.path("statements");
        if (!statements.isArray() || statements.isEmpty()) {
            throw unsupported("DuckDB's parser gave no statement for the text");
        }
        List<ClassifiedStatement> out = new ArrayList<>();
        for (JsonNode statement : statements) {
            out.add(query(connection, statement, textDepth, serializer));
        }
        return new Classification(sql, out);
    }

    /** {@code EXPLAIN [ANALYZE] <one query>}; anything else DuckDB does not serialise is OTHER. */
    private ClassifiedStatement explainOrOther(Connection connection, String sql, int textDepth, String problem, Serializer serializer)
            throws SQLException {
        int start = SqlLexer.skipBlanks(sql, 0);
        int end = SqlLexer.wordEnd(sql, start);
        if (!sql.substring(start, end).equalsIgnoreCase("EXPLAIN")) {
            return ClassifiedStatement.opaque(StatementKind.OTHER, problem);
        }
        StatementKind kind = StatementKind.EXPLAIN;
        int next = SqlLexer.skipBlanks(sql, end);
        int nextEnd = SqlLexer.wordEnd(sql, next);
        if (sql.substring(next, nextEnd).equalsIgnoreCase("ANALYZE")) {
            kind = StatementKind.EXPLAIN_ANALYZE;
            end = nextEnd;
        }
        Classification explained = classify(connection, sql.substring(end), textDepth, serializer);
        if (!explained.single() || explained.statement().kind() != StatementKind.QUERY) {
            return ClassifiedStatement.opaque(StatementKind.OTHER, "EXPLAIN of something other than one query");
        }
        ClassifiedStatement query = explained.statement();
        return new ClassifiedStatement(kind, Optional.empty(), query.writes(), query.tables(), query.functions(), query.nested(), query.parameters(),
                Optional.of(explained), Optional.empty(), Optional.empty());
    }

    private ClassifiedStatement query(Connection connection, JsonNode statement, int textDepth, Serializer serializer) throws SQLException {
        Walk walk = new Walk();
        walk.run(statement.path("node"));
        List<Classification> nested = new ArrayList<>();
        for (FunctionCall call : walk.functions) {
            if (OPAQUE_FUNCTIONS.contains(call.name())) {
                throw unsupported(call.name() + "() runs a serialised statement the server cannot inspect; run the statement itself");
            }
            if (call.tableFunction() && call.name().equals(QUERY)) {
                String text = call.stringArgument(0).orElseThrow(() -> unsupported(
                        "query() takes a string literal here, so that the statement it runs can be checked; write the statement itself, or query('<literal>')"));
                nested.add(classify(connection, text, textDepth + 1, serializer));
            } else if (call.tableFunction() && call.name().equals(QUERY_TABLE)) {
                String table = call.stringArgument(0).orElseThrow(() -> unsupported(
                        "query_table() takes a string literal naming one table here, so that the table can be checked; write FROM <table> instead"));
                walk.tables.add(new TableReference("", "", table));
            }
        }
        return new ClassifiedStatement(StatementKind.QUERY, Optional.of(statement), walk.writes, walk.tables, walk.functions, nested, walk.parameters,
                Optional.empty(), topLevelCall(statement.path("node")), Optional.empty());
    }

    /** The statement's one call when it is {@code SELECT f(<constants>)} or {@code SELECT * FROM f(<constants>)} alone. */
    static Optional<FunctionCall> topLevelCall(JsonNode node) {
        if (!node.path("type").asText("").equals("SELECT_NODE") || !empty(node.path("modifiers")) || !empty(node.path("cte_map").path("map"))
                || !node.path("where_clause").isNull() || !empty(node.path("group_expressions")) || !empty(node.path("group_sets"))
                || !node.path("having").isNull() || !node.path("sample").isNull() || !node.path("qualify").isNull()
                || node.path("select_list").size() != 1) {
            return Optional.empty();
        }
        JsonNode item = node.path("select_list").get(0);
        JsonNode from = node.path("from_table");
        String fromType = from.path("type").asText("");
        if (fromType.equals("EMPTY") && item.path("class").asText("").equals("FUNCTION")) {
            return plainCall(item, false);
        }
        boolean plainStar = item.path("class").asText("").equals("STAR") && item.path("relation_name").asText("").isEmpty()
                && empty(item.path("exclude_list")) && empty(item.path("replace_list")) && empty(item.path("rename_list"))
                && empty(item.path("qualified_exclude_list")) && !item.path("columns").asBoolean(true) && item.path("expr").isNull()
                && item.path("alias").asText("").isEmpty();
        if (plainStar && fromType.equals("TABLE_FUNCTION") && from.path("alias").asText("").isEmpty() && empty(from.path("column_name_alias"))
                && from.path("sample").isNull() && from.path("with_ordinality").asText("").equals("WITHOUT_ORDINALITY")) {
            return plainCall(from.path("function"), true);
        }
        return Optional.empty();
    }

    private static Optional<FunctionCall> plainCall(JsonNode function, boolean table) {
        if (!function.path("alias").asText("").isEmpty() || function.path("distinct").asBoolean(true) || !function.path("filter").isNull()
                || !empty(function.path("order_bys").path("orders")) || function.path("export_state").asBoolean(true)
                || function.path("is_operator").asBoolean(true)) {
            return Optional.empty();
        }
        for (JsonNode argument : function.path("arguments")) {
            if (argument.has("expression") && !argument.path("name").asText("").isEmpty()) {
                return Optional.empty();
            }
        }
        FunctionCall call = call(function, table);
        return call.constantArguments() ? Optional.of(call) : Optional.empty();
    }

    private static boolean empty(JsonNode list) {
        return list.isArray() && list.isEmpty();
    }

    static FunctionCall call(JsonNode function, boolean table) {
        List<JsonNode> arguments = new ArrayList<>();
        JsonNode given = function.has("arguments") ? function.path("arguments") : function.path("children");
        for (JsonNode argument : given) {
            arguments.add(argument.has("expression") ? argument.path("expression") : argument);
        }
        return new FunctionCall(function.path("schema").asText(""), function.path("function_name").asText(""), table, arguments);
    }

    /**
     * DuckDB's SQL for one statement of a classified text ({@code json_deserialize_sql}): the text rewritten in the
     * one spelling DuckDB gives it.
     */
    public String toSql(Connection connection, ClassifiedStatement statement) throws SQLException {
        JsonNode tree = statement.tree().orElseThrow(() -> new IllegalArgumentException("only a QUERY statement has a tree"));
        ObjectNode wrapper = json.createObjectNode();
        wrapper.put("error", false);
        wrapper.putArray("statements").add(tree);
        try (PreparedStatement prepared = connection.prepareStatement("SELECT json_deserialize_sql(?::JSON)")) {
            prepared.setString(1, wrapper.toString());
            try (ResultSet rs = prepared.executeQuery()) {
                rs.next();
                return rs.getString(1);
            }
        }
    }

    private static String serialize(Connection connection, String sql) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement("SELECT json_serialize_sql(?::VARCHAR)")) {
            statement.setString(1, sql);
            try (ResultSet rs = statement.executeQuery()) {
                rs.next();
                return rs.getString(1);
            }
        }
    }

    private JsonNode read(String text) {
        try {
            return json.readTree(text);
        } catch (StreamConstraintsException e) {
            throw new MallardException(ErrorCode.USER_SQL_TOO_DEEP, "the statement's expressions nest too deeply to be checked; split it into smaller"
                    + " statements or CTEs");
        } catch (JsonProcessingException e) {
            throw new MallardException(ErrorCode.SYSTEM_INTERNAL, "json_serialize_sql gave JSON that does not parse", e);
        }
    }

    private MallardException tooDeep(int depth) {
        return new MallardException(ErrorCode.USER_SQL_TOO_DEEP, "the statement nests subqueries or brackets " + depth + " deep, more than the "
                + maxNestingDepth + " allowed; flatten it (CTEs, joins) or split it into several statements");
    }

    private static MallardException unsupported(String why) {
        return new MallardException(ErrorCode.USER_SQL_UNSUPPORTED, why);
    }

    /** One pass over a statement's tree, without recursion (an expression may nest a thousand deep). */
    private final class Walk {
        final Set<TableReference> tables = new HashSet<>();
        final List<FunctionCall> functions = new ArrayList<>();
        boolean writes;
        int parameters;

        private record Step(JsonNode node, int queryDepth) {}

        void run(JsonNode root) {
            Deque<Step> pending = new ArrayDeque<>();
            pending.push(new Step(root, 0));
            while (!pending.isEmpty()) {
                Step step = pending.pop();
                JsonNode node = step.node();
                int queryDepth = step.queryDepth();
                if (node.isArray()) {
                    for (int i = node.size() - 1; i >= 0; i--) {
                        pending.push(new Step(node.get(i), queryDepth));
                    }
                    continue;
                }
                if (!node.isObject()) {
                    continue;
                }
                JsonNode skipped = null;
                String expressionClass = node.path("class").isTextual() ? node.get("class").asText() : null;
                String type = node.path("type").isTextual() ? node.get("type").asText() : null;
                if (expressionClass != null) {
                    if (!EXPRESSION_CLASSES.contains(expressionClass)) {
                        throw unsupported("the statement holds a " + expressionClass.toLowerCase(Locale.ROOT)
                                + " expression, which the server's SQL gate does not know; write it another way");
                    }
                    if (expressionClass.equals("FUNCTION") || expressionClass.equals("WINDOW")) {
                        functions.add(call(node, false));
                    } else if (expressionClass.equals("PARAMETER")) {
                        parameters++;
                    }
                } else if (type != null) {
                    if (QUERY_NODES.contains(type) || WRITING_NODES.contains(type) || type.equals("JOIN")) {
                        queryDepth++;
                        if (queryDepth > maxNestingDepth) {
                            throw tooDeep(queryDepth);
                        }
                    }
                    if (WRITING_NODES.contains(type)) {
                        writes = true;
                        // An INSERT names its target as text, a COPY in its info; DELETE and UPDATE as a BASE_TABLE below.
                        JsonNode target = type.equals("COPY_QUERY_NODE") ? node.path("info") : node;
                        if (target.path("table").isTextual() && !target.path("table").asText().isEmpty()) {
                            tables.add(new TableReference(target.path("catalog").asText(""), target.path("schema").asText(""),
                                    target.path("table").asText()));
                        }
                    } else if (type.equals("BASE_TABLE")) {
                        tables.add(new TableReference(node.path("catalog_name").asText(""), node.path("schema_name").asText(""),
                                node.path("table_name").asText("")));
                    } else if (type.equals("TABLE_FUNCTION")) {
                        JsonNode function = node.path("function");
                        if (!function.path("class").asText("").equals("FUNCTION")) {
                            throw unsupported("a table function the server's SQL gate cannot read; call it by name");
                        }
                        functions.add(call(function, true));
                        skipped = function;
                        pending.push(new Step(function.path("arguments"), queryDepth));
                    } else if (!QUERY_NODES.contains(type) && !TABLE_REFS.contains(type) && !OTHER_TYPES.contains(type)) {
                        throw unsupported("the statement holds a " + type.toLowerCase(Locale.ROOT)
                                + ", which the server's SQL gate does not know; write it another way");
                    }
                }
                List<JsonNode> children = new ArrayList<>();
                Iterator<Map.Entry<String, JsonNode>> fields = node.properties().iterator();
                while (fields.hasNext()) {
                    JsonNode child = fields.next().getValue();
                    if (child != skipped && (child.isContainerNode())) {
                        children.add(child);
                    }
                }
                for (int i = children.size() - 1; i >= 0; i--) {
                    pending.push(new Step(children.get(i), queryDepth));
                }
            }
        }
    }
}
