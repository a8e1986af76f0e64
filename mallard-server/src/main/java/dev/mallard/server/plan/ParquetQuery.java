// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.plan;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.core.sql.SqlText;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * A query that splits over the files of its one Parquet call (see {@link ParquetSplits}), as its parse tree says:
 * the call, the file patterns it reads, and the SELECTs from the top down to the one reading the call, whose WHERE
 * clauses may prune Hive partitions.
 */
final class ParquetQuery {
    private static final Set<String> PARQUET_CALLS = Set.of("read_parquet", "parquet_scan");
    /** Expression classes a row-by-row query may hold; a function among them is checked by name. */
    private static final Set<String> ROW_WISE = Set.of("COLUMN_REF", "CONSTANT", "STAR", "CAST", "TYPE", "COMPARISON", "CONJUNCTION", "OPERATOR",
            "FUNCTION", "CASE", "BETWEEN", "COLLATE", "LAMBDA", "LAMBDA_REF");

    /**
     * One SELECT on the way down to the call.
     *
     * @param passesColumns whether a column this SELECT's FROM gives under a name is the call's column of that name
     *     (every SELECT below is a plain {@code *}, every UNION below matches by name or takes the call's branch first)
     */
    record Level(ObjectNode select, boolean passesColumns) {
        Level {
            requireNonNull(select, "select is null");
        }

        ObjectNode from() {
            return (ObjectNode) select.path("from_table");
        }
    }

    private final JsonNode statement;
    private final ObjectNode callFrom;
    private final List<String> patterns;
    private final boolean hivePartitioning;
    private final boolean hiveTypes;
    private final List<Level> levels;
    private final FunctionKinds kinds;

    private ParquetQuery(JsonNode statement, ObjectNode callFrom, List<String> patterns, boolean hivePartitioning, boolean hiveTypes,
            List<Level> levels, FunctionKinds kinds) {
        this.hiveTypes = hiveTypes;
        this.statement = statement;
        this.callFrom = callFrom;
        this.patterns = List.copyOf(patterns);
        this.hivePartitioning = hivePartitioning;
        this.levels = List.copyOf(levels);
        this.kinds = kinds;
    }

    /** The query, when it splits over its Parquet call's files; empty for any other. */
    static Optional<ParquetQuery> of(JsonNode statement, FunctionKinds kinds) throws SQLException {
        if (count(statement, "TABLE_FUNCTION") != 1 || count(statement, "BASE_TABLE") != 0 || count(statement, "JOIN") != 0
                || !statement.path("named_param_map").isEmpty()) {
            return Optional.empty();
        }
        Chain chain = walk(statement.path("node"), kinds);
        if (chain == null) {
            return Optional.empty();
        }
        ObjectNode callFrom = chain.levels().getLast().from();
        JsonNode call = callFrom.path("function");
        if (!PARQUET_CALLS.contains(call.path("function_name").asText("").toLowerCase(Locale.ROOT)) || !call.path("catalog").asText("").isEmpty()
                || !(call.path("schema").asText("").isEmpty() || call.path("schema").asText("").equals("main"))) {
            return Optional.empty();
        }
        List<JsonNode> arguments = arguments(call);
        if (arguments.isEmpty()) {
            return Optional.empty();
        }
        Optional<List<String>> patterns = patterns(arguments.getFirst());
        if (patterns.isEmpty() || patterns.get().isEmpty()) {
            return Optional.empty();
        }
        boolean hive = true;
        boolean hiveTypes = false;
        for (JsonNode argument : arguments.subList(1, arguments.size())) {
            hiveTypes |= argument.path("class").asText().equals("COMPARISON") && argument.path("left").path("column_names").size() == 1
                    && argument.path("left").path("column_names").get(0).asText().equalsIgnoreCase("hive_types");
            if (argument.path("class").asText().equals("COMPARISON") && argument.path("left").path("column_names").size() == 1
                    && argument.path("left").path("column_names").get(0).asText().equalsIgnoreCase("hive_partitioning")) {
                JsonNode value = argument.path("right");
                hive = value.path("class").asText().equals("CONSTANT") && value.path("literal").path("text").asText().equalsIgnoreCase("true");
            }
        }
        return Optional.of(new ParquetQuery(statement, callFrom, patterns.get(), hive, hiveTypes, chain.levels(), kinds));
    }

    List<Level> levels() {
        return levels;
    }

    ObjectNode callFrom() {
        return callFrom;
    }

    boolean hivePartitioning() {
        return hivePartitioning;
    }

    /** Whether the call names its partition columns' types ({@code hive_types}). */
    boolean hiveTypes() {
        return hiveTypes;
    }

    FunctionKinds kinds() {
        return kinds;
    }

    /** Every file the call reads, pattern by pattern, as DuckDB lists them. */
    List<ParquetSplits.DataFile> files(Connection connection) throws SQLException {
        List<ParquetSplits.DataFile> files = new ArrayList<>();
        try (Statement statement = connection.createStatement()) {
            for (String pattern : patterns) {
                try (ResultSet rs = statement.executeQuery("SELECT filename, size FROM read_blob(" + SqlText.literal(pattern) + ") ORDER BY filename")) {
                    while (rs.next()) {
                        files.add(new ParquetSplits.DataFile(rs.getString(1), rs.getLong(2)));
                    }
                }
            }
        }
        return files;
    }

    /**
     * The query's SQL with the call reading these files instead of its patterns.
     *
     * @param pinnedTypes the partition columns' types over all the files, given as {@code hive_types} so that every
     *     split types them alike (DuckDB would detect each split's types from its own values); empty to add none
     */
    String overFiles(Connection connection, List<String> paths, java.util.Map<String, String> pinnedTypes) throws SQLException {
        StringBuilder list = new StringBuilder("SELECT [");
        for (int i = 0; i < paths.size(); i++) {
            list.append(i == 0 ? "" : ", ").append(SqlText.literal(paths.get(i)));
        }
        JsonNode listExpression = ParquetSplits.serialize(connection, list.append("]").toString())
                .path("statements").get(0).path("node").path("select_list").get(0);
        JsonNode copy = statement.deepCopy();
        ObjectNode from = (ObjectNode) find(copy, "TABLE_FUNCTION");
        ObjectNode call = (ObjectNode) from.path("function");
        if (call.has("arguments")) {
            ((ObjectNode) call.path("arguments").get(0)).set("expression", listExpression);
        } else {
            ((ArrayNode) call.path("children")).set(0, listExpression);
        }
        // Only when DuckDB would type this split's partition columns otherwise: a plain call stays one that
        // RESTRICTED's rewriter admits (it takes no named parameters).
        if (!pinnedTypes.isEmpty() && !HivePruning.describeTypes(connection, from).entrySet().containsAll(pinnedTypes.entrySet())) {
            StringBuilder types = new StringBuilder("SELECT * FROM read_parquet('x', hive_types = {");
            int i = 0;
            for (java.util.Map.Entry<String, String> type : pinnedTypes.entrySet()) {
                types.append(i++ == 0 ? "" : ", ").append(SqlText.literal(type.getKey())).append(": ").append(type.getValue());
            }
            JsonNode typed = find(ParquetSplits.serialize(connection, types.append("})").toString()), "TABLE_FUNCTION").path("function");
            if (call.has("arguments")) {
                ((ArrayNode) call.path("arguments")).add(typed.path("arguments").get(1));
            } else {
                ((ArrayNode) call.path("children")).add(typed.path("children").get(1));
            }
        }
        return ParquetSplits.deserialize(connection, copy);
    }

    private record Chain(List<Level> levels, boolean plain) {}

    /** The SELECTs from {@code node} down to the call, or null when the query does not split there. */
    private static Chain walk(JsonNode node, FunctionKinds kinds) throws SQLException {
        switch (node.path("type").asText()) {
            case "SELECT_NODE" -> {
                if (!rowWiseSelect(node, kinds)) {
                    return null;
                }
                ObjectNode select = (ObjectNode) node;
                JsonNode from = node.path("from_table");
                boolean plainStar = plainStar(node);
                switch (from.path("type").asText()) {
                    case "TABLE_FUNCTION" -> {
                        return new Chain(List.of(new Level(select, true)), plainStar);
                    }
                    case "SUBQUERY" -> {
                        Chain below = walk(from.path("subquery").path("node"), kinds);
                        if (below == null) {
                            return null;
                        }
                        List<Level> levels = new ArrayList<>();
                        levels.add(new Level(select, below.plain()));
                        levels.addAll(below.levels());
                        return new Chain(levels, plainStar && below.plain());
                    }
                    default -> {
                        return null;
                    }
                }
            }
            case "SET_OPERATION_NODE" -> {
                String kind = node.path("setop_type").asText();
                if (!node.path("setop_all").asBoolean(false) || !(kind.equals("UNION") || kind.equals("UNION_BY_NAME")) || !onlyOrdering(node)
                        || !node.path("cte_map").path("map").isEmpty()) {
                    return null;
                }
                List<JsonNode> branches = new ArrayList<>();
                node.path("children").forEach(branches::add);
                if (branches.isEmpty()) {
                    branches.add(node.path("left"));
                    branches.add(node.path("right"));
                }
                int reading = -1;
                for (int i = 0; i < branches.size(); i++) {
                    if (count(branches.get(i), "TABLE_FUNCTION") > 0) {
                        reading = i;
                    } else if (!empty(branches.get(i))) {
                        // Each split would repeat this branch's rows.
                        return null;
                    }
                }
                if (reading < 0) {
                    return null;
                }
                Chain below = walk(branches.get(reading), kinds);
                if (below == null) {
                    return null;
                }
                return new Chain(below.levels(), below.plain() && (kind.equals("UNION_BY_NAME") || reading == 0));
            }
            default -> {
                return null;
            }
        }
    }

    /** A SELECT whose rows are computed row by row from its FROM's. */
    private static boolean rowWiseSelect(JsonNode node, FunctionKinds kinds) throws SQLException {
        return onlyOrdering(node) && node.path("cte_map").path("map").isEmpty() && node.path("group_expressions").isEmpty()
                && node.path("group_sets").isEmpty() && isNull(node.path("having")) && isNull(node.path("qualify")) && isNull(node.path("sample"))
                && isNull(node.path("from_table").path("sample")) && node.path("aggregate_handling").asText().equals("STANDARD_HANDLING")
                && rowWise(node.path("select_list"), kinds) && rowWise(node.path("where_clause"), kinds) && rowWiseOrdering(node, kinds);
    }

    private static boolean onlyOrdering(JsonNode node) {
        for (JsonNode modifier : node.path("modifiers")) {
            if (!modifier.path("type").asText().equals("ORDER_MODIFIER")) {
                return false;
            }
        }
        return true;
    }

    /** Whether the ORDER BY expressions are row by row too (an aggregate there would make the SELECT one). */
    private static boolean rowWiseOrdering(JsonNode node, FunctionKinds kinds) throws SQLException {
        for (JsonNode modifier : node.path("modifiers")) {
            if (!rowWise(modifier.path("orders"), kinds)) {
                return false;
            }
        }
        return true;
    }

    /** Whether every expression in the subtree is computed from one row alone. */
    static boolean rowWise(JsonNode node, FunctionKinds kinds) throws SQLException {
        if (node.isArray()) {
            for (JsonNode child : node) {
                if (!rowWise(child, kinds)) {
                    return false;
                }
            }
            return true;
        }
        if (!node.isObject()) {
            return true;
        }
        if (node.has("class")) {
            String kind = node.path("class").asText();
            if (!ROW_WISE.contains(kind)) {
                return false;
            }
            if (kind.equals("FUNCTION") && (kinds.of(node.path("function_name").asText()) == FunctionKinds.Kind.OTHER
                    || node.path("distinct").asBoolean(false) || !isNull(node.path("filter")) || !node.path("order_bys").path("orders").isEmpty())) {
                return false;
            }
        }
        for (JsonNode child : node) {
            if (!rowWise(child, kinds)) {
                return false;
            }
        }
        return true;
    }

    /** {@code SELECT *} with nothing excluded, replaced, renamed or qualified. */
    private static boolean plainStar(JsonNode select) {
        JsonNode list = select.path("select_list");
        if (list.size() != 1) {
            return false;
        }
        JsonNode star = list.get(0);
        return star.path("class").asText().equals("STAR") && star.path("relation_name").asText("").isEmpty() && star.path("exclude_list").isEmpty()
                && star.path("replace_list").isEmpty() && star.path("rename_list").isEmpty() && star.path("qualified_exclude_list").isEmpty()
                && isNull(star.path("expr")) && !star.path("columns").asBoolean(false);
    }

    /** A SELECT that never gives a row: {@code WHERE false}. */
    private static boolean empty(JsonNode branch) {
        JsonNode where = branch.path("where_clause");
        return branch.path("type").asText().equals("SELECT_NODE") && where.path("class").asText().equals("CONSTANT")
                && where.path("literal").path("kind").asText().equals("BOOLEAN") && where.path("literal").path("text").asText().equalsIgnoreCase("false");
    }

    private static List<JsonNode> arguments(JsonNode call) {
        List<JsonNode> arguments = new ArrayList<>();
        JsonNode given = call.has("arguments") ? call.path("arguments") : call.path("children");
        for (JsonNode argument : given) {
            if (argument.has("name") && !argument.path("name").asText("").isEmpty()) {
                arguments.add(argument);
            } else {
                arguments.add(argument.has("expression") ? argument.path("expression") : argument);
            }
        }
        return arguments;
    }

    /** The file patterns of the call's first argument: a string, or a list of strings. */
    private static Optional<List<String>> patterns(JsonNode argument) {
        if (string(argument).isPresent()) {
            return Optional.of(List.of(string(argument).get()));
        }
        if (argument.path("class").asText().equals("FUNCTION") && argument.path("function_name").asText().equals("list_value")) {
            List<String> patterns = new ArrayList<>();
            for (JsonNode element : arguments(argument)) {
                Optional<String> text = string(element);
                if (text.isEmpty()) {
                    return Optional.empty();
                }
                patterns.add(text.get());
            }
            return Optional.of(patterns);
        }
        return Optional.empty();
    }

    private static Optional<String> string(JsonNode node) {
        return node.path("class").asText().equals("CONSTANT") && node.path("literal").path("kind").asText().equals("STRING")
                ? Optional.of(node.path("literal").path("text").asText()) : Optional.empty();
    }

    static boolean isNull(JsonNode node) {
        return node.isMissingNode() || node.isNull();
    }

    /** How many objects of the subtree have {@code "type": type} (table references, joins). */
    private static int count(JsonNode node, String type) {
        int found = node.isObject() && node.path("type").asText("").equals(type) ? 1 : 0;
        for (JsonNode child : node) {
            found += count(child, type);
        }
        return found;
    }

    private static JsonNode find(JsonNode node, String type) {
        if (node.isObject() && node.path("type").asText("").equals(type)) {
            return node;
        }
        for (JsonNode child : node) {
            JsonNode found = find(child, type);
            if (found != null) {
                return found;
            }
        }
        return null;
    }
}
