// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlText;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Reads a view's query from DuckDB's parse tree and compiles it into a {@link DeltaProgram}, or refuses it
 * naming the operator it cannot maintain. The families it maintains: projection and filter with any
 * deterministic scalar expression over joins (inner, outer, semi, anti; any ON condition) of base tables, and GROUP BY or global
 * aggregates with SUM, COUNT, COUNT(*), AVG, MIN and MAX, expressions over them and HAVING; set operations;
 * linear WITH RECURSIVE; window functions and scalar subqueries; ORDER BY ... LIMIT; aggregating CTEs and
 * subqueries in FROM. A source may be another materialized view: its table is captured like any table.
 */
final class ViewCompiler {
    private final SqlTree tree;
    private final DuckDbCatalog catalog;
    private final RecursionLimit recursionLimit;

    ViewCompiler(SqlTree tree, DuckDbCatalog catalog, RecursionLimit recursionLimit) {
        this.tree = tree;
        this.catalog = catalog;
        this.recursionLimit = recursionLimit;
    }

    DeltaProgram compile(String view, String sql) {
        return compile(view, sql, ViewRegistry.LAYOUT);
    }

    /**
     * Compiles a view for state of the given catalog layout: a view built by an older Mallard keeps the state columns
     * it was built with (see {@link ViewRegistry#LAYOUT}).
     */
    DeltaProgram compile(String view, String sql, int layout) {
        JsonNode node = distinctOnAsQualify(view, spellGroupsOut(tree.parseQuery(sql).deepCopy()));
        Optional<String> sets = groupingSetsAsUnion(view, sql, node);
        if (sets.isPresent()) {
            node = tree.parseQuery(sets.get());
        }
        Compilation compilation = new Compilation(view, layout);
        try {
            DeltaProgram program = compilation.compile(node);
            return compilation.grouped.isEmpty() ? program : new GroupedRelationsProgram(program, compilation.grouped);
        } catch (MallardException refused) {
            if (!compilation.recomputeGroups || !"SELECT_NODE".equals(node.path("type").asText())) {
                throw refused;
            }
            // An aggregate that cannot move by the delta (median, quantile_cont, mode, string_agg(... ORDER BY ...),
            // ...) at the top level: the view is its query as a grouped subquery, whose touched groups are recomputed.
            Compilation wrapped = new Compilation(view, layout);
            try {
                DeltaProgram program = wrapped.compile(spellGroupsOut(tree.parseQuery("SELECT * FROM (" + sql + "\n) AS q").deepCopy()));
                return wrapped.grouped.isEmpty() ? program : new GroupedRelationsProgram(program, wrapped.grouped);
            } catch (MallardException alsoRefused) {
                refused.addSuppressed(alsoRefused);
                throw refused;
            }
        }
    }

    /**
     * Writes {@code GROUP BY ALL} and {@code GROUP BY <position>} out as the expressions they stand for, in every SELECT
     * of the tree, so the compiler sees plain grouping expressions: ALL groups by every select item without an
     * aggregate, a position by that select item (as DuckDB does).
     */
    private JsonNode spellGroupsOut(JsonNode node) {
        if (node.isObject() && "SELECT_NODE".equals(node.path("type").asText())) {
            ObjectNode select = (ObjectNode) node;
            JsonNode items = select.path("select_list");
            if ("FORCE_AGGREGATES".equals(select.path("aggregate_handling").asText())) {
                ArrayNode groups = select.putArray("group_expressions");
                ArrayNode set = JsonNodeFactory.instance.arrayNode();
                for (JsonNode item : items) {
                    if (!"STAR".equals(item.path("class").asText()) && !mentionsAggregate(item)) {
                        set.add(groups.size());
                        groups.add(unaliased(item));
                    }
                }
                ArrayNode sets = select.putArray("group_sets");
                if (!groups.isEmpty()) {
                    sets.add(set);
                }
                select.put("aggregate_handling", "STANDARD_HANDLING");
            } else {
                ArrayNode groups = (ArrayNode) select.path("group_expressions");
                for (int i = 0; groups != null && i < groups.size(); i++) {
                    JsonNode group = groups.get(i);
                    JsonNode literal = group.path("literal");
                    if ("CONSTANT".equals(group.path("class").asText()) && "INTEGER".equals(literal.path("kind").asText())) {
                        int position = Integer.parseInt(literal.path("text").asText());
                        if (position < 1 || position > items.size()) {
                            throw new MallardException(ErrorCode.USER_SQL_INVALID, "GROUP BY " + position
                                    + ": the SELECT list has " + items.size() + " items");
                        }
                        groups.set(i, unaliased(items.get(position - 1)));
                    }
                }
            }
        }
        node.forEach(this::spellGroupsOut);
        return node;
    }

    /**
     * {@code SELECT DISTINCT ON (keys) ... [ORDER BY ...]} as the view's own SELECT is the first row of each key by that
     * order: written as {@code QUALIFY row_number() OVER (PARTITION BY keys ORDER BY ...) = 1}, which the window family
     * keeps by recomputing the touched keys' rows. Without ORDER BY (or with ties in it) DuckDB may pick any of a key's
     * rows, and the view holds one of its answers, as for any window with ties.
     */
    private JsonNode distinctOnAsQualify(String view, JsonNode node) {
        if (!"SELECT_NODE".equals(node.path("type").asText())) {
            return node;
        }
        JsonNode targets = null;
        JsonNode orders = null;
        for (JsonNode modifier : node.path("modifiers")) {
            switch (modifier.path("type").asText()) {
                case "DISTINCT_MODIFIER" -> targets = modifier.path("distinct_on_targets");
                case "ORDER_MODIFIER" -> orders = modifier.path("orders");
                default -> {
                    return node; // LIMIT with DISTINCT ON: refused by the compiler as it is.
                }
            }
        }
        if (targets == null || targets.isEmpty() || !node.path("qualify").isNull() && !node.path("qualify").isMissingNode()) {
            return node;
        }
        List<String> keys = new ArrayList<>();
        targets.forEach(target -> keys.add(tree.print(target)));
        List<String> order = new ArrayList<>();
        if (orders != null) {
            for (JsonNode item : orders) {
                String direction = switch (item.path("type").asText()) {
                    case "ASCENDING" -> " ASC";
                    case "DESCENDING" -> " DESC";
                    case "ORDER_DEFAULT" -> "";
                    default -> throw Refusal.unsupported(view, "DISTINCT ON with ORDER BY " + item.path("type").asText(),
                            "order by expressions ASC or DESC");
                };
                String nulls = switch (item.path("null_order").asText()) {
                    case "NULLS FIRST", "NULLS_FIRST" -> " NULLS FIRST";
                    case "NULLS LAST", "NULLS_LAST" -> " NULLS LAST";
                    case "ORDER_DEFAULT" -> "";
                    default -> throw Refusal.unsupported(view, "DISTINCT ON with ORDER BY ... " + item.path("null_order").asText(),
                            "order NULLS FIRST or NULLS LAST");
                };
                order.add(tree.print(item.path("expression")) + direction + nulls);
            }
        }
        ObjectNode select = (ObjectNode) node;
        select.putArray("modifiers");
        select.set("qualify", tree.parseExpression("row_number() OVER (PARTITION BY " + String.join(", ", keys)
                + (order.isEmpty() ? "" : " ORDER BY " + String.join(", ", order)) + ") = 1"));
        return select;
    }

    /**
     * {@code GROUP BY GROUPING SETS (...)}, {@code ROLLUP (...)} or {@code CUBE (...)} as the view's own SELECT: a
     * {@code UNION ALL} of one grouped subquery per set, each select item that is a grouping expression outside the
     * set written as a typed NULL (as DuckDB shows it), so each set's groups are kept like any aggregating subquery.
     * Refused when a select item is neither a grouping expression nor an aggregate call, or uses {@code GROUPING()}.
     */
    private Optional<String> groupingSetsAsUnion(String view, String sql, JsonNode node) {
        JsonNode sets = node.path("group_sets");
        JsonNode groups = node.path("group_expressions");
        if (!"SELECT_NODE".equals(node.path("type").asText()) || sets.size() < 2 && (sets.size() != 1 || sets.get(0).size() == groups.size())) {
            return Optional.empty();
        }
        String alternative = "one view per grouping, or select only grouping expressions and aggregate calls";
        if (!node.path("modifiers").isEmpty()) {
            throw Refusal.unsupported(view, "GROUPING SETS, ROLLUP or CUBE with DISTINCT, ORDER BY or LIMIT", alternative);
        }
        List<String> columns = tree.describe(sql);
        JsonNode items = node.path("select_list");
        List<JsonNode> shapes = new ArrayList<>();
        groups.forEach(group -> shapes.add(SqlTree.shape(group)));
        List<String> branches = new ArrayList<>();
        for (JsonNode set : sets) {
            Set<Integer> in = new HashSet<>();
            set.forEach(index -> in.add(index.asInt()));
            ObjectNode branch = node.deepCopy();
            ArrayNode list = branch.putArray("select_list");
            for (int i = 0; i < items.size(); i++) {
                JsonNode item = items.get(i);
                String[] column = columns.get(i).split("\u0000", 2);
                int group = shapes.indexOf(SqlTree.shape(item));
                ObjectNode written;
                if (group >= 0) {
                    written = (in.contains(group) ? item : tree.parseExpression("CAST(NULL AS " + column[1] + ")")).deepCopy();
                } else if ("FUNCTION".equals(item.path("class").asText()) && catalog.isAggregate(item.path("function_name").asText())
                        && !item.path("function_name").asText().toLowerCase(Locale.ROOT).startsWith("grouping")) {
                    written = item.deepCopy();
                } else {
                    throw Refusal.unsupported(view, "GROUPING SETS, ROLLUP or CUBE with the select item " + tree.print(item), alternative);
                }
                written.put("alias", column[0]);
                list.add(written);
            }
            ArrayNode kept = branch.putArray("group_expressions");
            ArrayNode keptSet = JsonNodeFactory.instance.arrayNode();
            for (int index : new java.util.TreeSet<>(in)) {
                keptSet.add(kept.size());
                kept.add(groups.get(index).deepCopy());
            }
            ArrayNode oneSet = branch.putArray("group_sets");
            if (!kept.isEmpty()) {
                oneSet.add(keptSet);
            }
            branches.add("SELECT * FROM (" + tree.printQuery(branch) + ") AS " + SqlText.identifier("set" + branches.size()));
        }
        return Optional.of(String.join("\nUNION ALL ", branches));
    }

    private static JsonNode unaliased(JsonNode item) {
        ObjectNode copy = item.deepCopy();
        copy.put("alias", "");
        return copy;
    }

    private boolean mentionsAggregate(JsonNode node) {
        if ("FUNCTION".equals(node.path("class").asText()) && catalog.isAggregate(node.path("function_name").asText())) {
            return true;
        }
        if ("SUBQUERY".equals(node.path("class").asText()) || "WINDOW".equals(node.path("class").asText())) {
            return false;
        }
        for (JsonNode child : node) {
            if (child.isContainerNode() && mentionsAggregate(child)) {
                return true;
            }
        }
        return false;
    }

    /** A common table expression: its query and the CTEs it may read (those defined before it). */
    private record Cte(JsonNode query, List<String> aliases, Map<String, Cte> scope) {
        boolean recursive() {
            return "RECURSIVE_CTE_NODE".equals(query.path("type").asText());
        }
    }

    /** The recursive CTE being compiled: its mentions read the closure table. */
    private record Recursion(String name, TableName closure, List<String> columns) {}

    /**
     * A correlated scalar subquery: the outer expressions it is correlated on, the inner expressions they equal
     * (in the same order), and its FROM with the conditions that do not refer to the outer row.
     */
    private record Correlation(List<JsonNode> outer, List<String> inner, FilteredJoin source) {}

    private enum Side { INNER, OUTER }

    private final class Compilation {
        private final String view;
        /** The CTEs in scope where the compiler is reading. */
        private Map<String, Cte> ctes = Map.of();
        /** Numbers the joins of the query, so each has an id of its own. */
        private int joins;
        /** Set while compiling the parts of a WITH RECURSIVE that read the recursive CTE. */
        private Recursion recursion;
        /** The aggregating CTEs and subqueries read so far, inner ones first. */
        private final List<GroupedRelation> grouped = new ArrayList<>();
        /** The window calls and scalar subqueries of the SELECT being compiled by {@link #partitioned}. */
        private final Set<JsonNode> allowed = Collections.newSetFromMap(new IdentityHashMap<>());

        /** Whether SUM, AVG and COUNT of one argument share their state columns (layout 2 on). */
        private final boolean shareSlots;

        /**
         * Set when the view's own aggregates include one that cannot move by the delta: the view can still be kept by
         * recomputing its touched groups, as a grouped subquery.
         */
        private boolean recomputeGroups;

        private MallardException recomputed(MallardException refusal) {
            recomputeGroups = true;
            return refusal;
        }

        Compilation(String view, int layout) {
            this.view = view;
            this.shareSlots = layout >= 2;
        }

        DeltaProgram compile(JsonNode node) {
            Map<String, Cte> outer = ctes;
            ctes = withCtes(node);
            try {
                return compileScoped(node);
            } finally {
                ctes = outer;
            }
        }

        private DeltaProgram compileScoped(JsonNode node) {
            if ("SET_OPERATION_NODE".equals(node.path("type").asText())) {
                return union(node);
            }
            Optional<Map.Entry<String, Cte>> recursive = recursiveFrom(node);
            if (recursive.isPresent()) {
                return recursive(node, recursive.get().getKey(), recursive.get().getValue());
            }
            if (ordered(node)) {
                return topK(node);
            }
            List<JsonNode> special = new ArrayList<>();
            for (String part : List.of("select_list", "where_clause", "qualify")) {
                windowsAndScalarSubqueries(node.path(part), special);
            }
            if (!special.isEmpty()) {
                return partitioned(node, special);
            }
            checkQueryShape(node);
            FilteredJoin source = source(node);
            List<JsonNode> select = expandStars(node.path("select_list"), source);
            List<JsonNode> groups = new ArrayList<>();
            node.path("group_expressions").forEach(groups::add);
            JsonNode having = node.path("having");
            boolean aggregated = !groups.isEmpty() || present(having)
                    || select.stream().anyMatch(this::containsAggregate);
            if (distinct(node)) {
                if (aggregated) {
                    throw Refusal.unsupported(view, "SELECT DISTINCT over GROUP BY or aggregates",
                            "drop DISTINCT (grouped rows are already distinct by their keys) or group by more columns");
                }
                return distinctRows(List.of(new Branch(source, printed(select))));
            }
            if (!aggregated) {
                return new ProjectionProgram(List.of(new Branch(source, printed(select))));
            }
            return aggregate(source, node, select, groups, having);
        }

        /** Whether the SELECT ends in ORDER BY and LIMIT (a top-k). */
        private boolean ordered(JsonNode node) {
            Set<String> modifiers = new HashSet<>();
            node.path("modifiers").forEach(m -> modifiers.add(m.path("type").asText()));
            return modifiers.contains("ORDER_MODIFIER") && modifiers.contains("LIMIT_MODIFIER");
        }

        /**
         * {@code SELECT ... FROM <source> [WHERE ...] ORDER BY ... LIMIT k [OFFSET m]} with constant k and m: the
         * view holds the query's rows; a change whose rows rank below the current top k + m changes nothing.
         */
        private DeltaProgram topK(JsonNode node) {
            JsonNode orders = null;
            JsonNode limit = null;
            for (JsonNode modifier : node.path("modifiers")) {
                switch (modifier.path("type").asText()) {
                    case "ORDER_MODIFIER" -> orders = modifier.path("orders");
                    case "LIMIT_MODIFIER" -> {
                        // DuckDB 2.0 writes LIMIT 50 PERCENT (and LIMIT 50%) as limit_type PERCENTAGE; any type but a
                        // row count is refused.
                        if (!"ROW_COUNT".equals(modifier.path("limit_type").asText("ROW_COUNT"))) {
                            throw Refusal.unsupported(view, "LIMIT with a percentage (LIMIT n PERCENT, LIMIT n%)",
                                    "use LIMIT with a row count, or apply the percentage in the query that reads the view");
                        }
                        limit = modifier;
                    }
                    case "DISTINCT_MODIFIER" -> throw Refusal.unsupported(view, "SELECT DISTINCT with ORDER BY ... LIMIT",
                            "create the distinct rows as a materialized view and the top-k as a view over it");
                    default -> throw Refusal.unsupported(view, "LIMIT with a percentage", "use LIMIT with a row count");
                }
            }
            if (!present(limit.path("limit"))) {
                throw Refusal.unsupported(view, "OFFSET without LIMIT", "give the top-k a LIMIT");
            }
            long rows = constant(limit.path("limit"), "LIMIT");
            long offset = present(limit.path("offset")) ? constant(limit.path("offset"), "OFFSET") : 0;
            ObjectNode bare = ((ObjectNode) node).deepCopy();
            bare.putArray("modifiers");
            checkQueryShape(bare);
            List<JsonNode> special = new ArrayList<>();
            windowsAndScalarSubqueries(node, special);
            if (!special.isEmpty()) {
                throw Refusal.unsupported(view, "ORDER BY ... LIMIT together with window functions or scalar subqueries",
                        "create the rows as a materialized view and the top-k as a materialized view over it");
            }
            FilteredJoin source = source(node);
            List<JsonNode> select = expandStars(node.path("select_list"), source);
            if (node.path("group_expressions").size() > 0 || present(node.path("having"))
                    || select.stream().anyMatch(this::containsAggregate)) {
                throw Refusal.unsupported(view, "ORDER BY ... LIMIT over GROUP BY or aggregates",
                        "create the grouped rows as a materialized view and the top-k as a materialized view over it");
            }
            List<String> keys = new ArrayList<>();
            List<String> directions = new ArrayList<>();
            for (JsonNode order : orders) {
                JsonNode expression = orderExpression(order.path("expression"), select);
                inspect(expression, false);
                keys.add(tree.print(expression));
                String type = order.path("type").asText();
                String nulls = order.path("null_order").asText();
                directions.add(("DESCENDING".equals(type) ? " DESC" : "ASCENDING".equals(type) ? " ASC" : "")
                        + (nulls.contains("FIRST") ? " NULLS FIRST" : nulls.contains("LAST") ? " NULLS LAST" : ""));
            }
            return new TopKProgram(view, source, printed(select), keys, directions, rows, offset);
        }

        private long constant(JsonNode value, String clause) {
            if (!"CONSTANT".equals(value.path("class").asText())) {
                throw Refusal.unsupported(view, clause + " with an expression", "write the number itself");
            }
            try {
                long number = Long.parseLong(value.path("value").path("value").asText(value.path("literal").path("text").asText()));
                if (number >= 0) {
                    return number;
                }
            } catch (NumberFormatException e) {
                // Refused below.
            }
            throw Refusal.unsupported(view, clause + " " + tree.print(value), "write a whole number of rows");
        }

        /** An ORDER BY item as an expression over the source: a position or an output alias names a SELECT expression. */
        private JsonNode orderExpression(JsonNode expression, List<JsonNode> select) {
            if ("CONSTANT".equals(expression.path("class").asText())) {
                long position = constant(expression, "ORDER BY");
                if (position < 1 || position > select.size()) {
                    throw new MallardException(ErrorCode.USER_SQL_INVALID, "materialized view " + view + ": ORDER BY "
                            + position + " is not a column of the SELECT");
                }
                return select.get((int) position - 1);
            }
            JsonNode names = expression.path("column_names");
            if ("COLUMN_REF".equals(expression.path("class").asText()) && names.size() == 1) {
                for (JsonNode item : select) {
                    if (item.path("alias").asText("").equalsIgnoreCase(names.get(0).asText())) {
                        return item;
                    }
                }
            }
            return expression;
        }

        /** The window calls and scalar subqueries of an expression, not looking inside subqueries. */
        private void windowsAndScalarSubqueries(JsonNode node, List<JsonNode> found) {
            String type = node.path("class").asText();
            if ("SUBQUERY".equals(type)) {
                if ("SCALAR".equals(node.path("subquery_type").asText())) {
                    found.add(node);
                }
                return;
            }
            if ("WINDOW".equals(type)) {
                found.add(node);
            }
            for (JsonNode child : node) {
                if (child.isContainerNode()) {
                    windowsAndScalarSubqueries(child, found);
                }
            }
        }

        /**
         * Window functions and scalar subqueries: the view's rows are recomputed per partition, where a partition
         * is the rows sharing the keys every window partitions by and every correlated subquery is correlated on
         * (an equality in its WHERE clause). A change touches the partitions of its rows, on either side; an
         * uncorrelated subquery whose value changed touches all. Without windows and correlated subqueries every
         * row is its own partition, so the view moves by the source's delta.
         */
        private DeltaProgram partitioned(JsonNode node, List<JsonNode> special) {
            JsonNode qualify = node.path("qualify");
            ObjectNode bare = ((ObjectNode) node).deepCopy();
            bare.putNull("qualify");
            checkQueryShape(bare);
            allowed.addAll(special);
            try {
                FilteredJoin source = source(node);
                List<JsonNode> select = expandStars(node.path("select_list"), source);
                if (distinct(node) || node.path("group_expressions").size() > 0 || present(node.path("having"))
                        || select.stream().anyMatch(this::containsAggregate)) {
                    throw Refusal.unsupported(view, "window functions or scalar subqueries with GROUP BY, aggregates or DISTINCT",
                            "create the grouped rows as a materialized view and compute the window or subquery in a "
                                    + "materialized view over it");
                }
                List<String> outputs = printed(select);
                Optional<String> qualifying = Optional.empty();
                if (present(qualify)) {
                    inspect(qualify, false);
                    qualifying = Optional.of(tree.print(qualify));
                }
                List<List<JsonNode>> keySets = new ArrayList<>();
                List<PartitionProgram.Scalar> scalars = new ArrayList<>();
                List<Correlation> correlations = new ArrayList<>();
                for (JsonNode item : special) {
                    if ("WINDOW".equals(item.path("class").asText())) {
                        List<JsonNode> keys = new ArrayList<>();
                        item.path("partitions").forEach(keys::add);
                        keySets.add(keys);
                        continue;
                    }
                    JsonNode query = item.path("subquery").path("node");
                    Set<String> local = new HashSet<>();
                    collectCteNames(query, local);
                    Optional<String> cte = cteRead(query, local);
                    if (cte.isPresent()) {
                        throw Refusal.unsupported(view, "a scalar subquery that reads the CTE " + cte.get(),
                                "read a table or a materialized view in the subquery, or join the CTE");
                    }
                    String sql = tree.print(item);
                    if (catalog.binds("SELECT " + sql)) {
                        scalars.add(new PartitionProgram.Scalar(sql, tablesRead(item.path("subquery").path("node"))));
                    } else {
                        Correlation correlation = correlation(item.path("subquery").path("node"), source);
                        correlations.add(correlation);
                        keySets.add(correlation.outer());
                    }
                }
                if (keySets.isEmpty()) {
                    return new PartitionProgram(view, source, outputs, qualifying, Optional.empty(), List.of(), scalars);
                }
                List<JsonNode> keys = new ArrayList<>();
                for (JsonNode key : keySets.get(0)) {
                    JsonNode shape = SqlTree.shape(key);
                    if (keySets.stream().allMatch(set -> set.stream().anyMatch(k -> SqlTree.shape(k).equals(shape)))
                            && keys.stream().noneMatch(k -> SqlTree.shape(k).equals(shape))) {
                        keys.add(key);
                    }
                }
                List<String> partition = new ArrayList<>();
                for (JsonNode key : keys) {
                    inspect(key, false);
                    partition.add(tree.print(key));
                }
                List<PartitionProgram.Feed> feeds = new ArrayList<>();
                feeds.add(new PartitionProgram.Feed(new FilteredJoin(source.from(), source.occurrences(), Optional.empty()), partition));
                for (Correlation correlation : correlations) {
                    List<String> inner = new ArrayList<>();
                    for (JsonNode key : keys) {
                        JsonNode shape = SqlTree.shape(key);
                        for (int i = 0; i < correlation.outer().size(); i++) {
                            if (SqlTree.shape(correlation.outer().get(i)).equals(shape)) {
                                inner.add(correlation.inner().get(i));
                                break;
                            }
                        }
                    }
                    feeds.add(new PartitionProgram.Feed(correlation.source(), inner));
                }
                return new PartitionProgram(view, source, outputs, qualifying, Optional.of(partition), feeds, scalars);
            } finally {
                allowed.clear();
            }
        }

        /**
         * A correlated scalar subquery's correlation: {@code SELECT <one expression over its FROM> FROM ... WHERE
         * ...} where each condition that refers to the outer row is {@code inner = outer} AND-ed into the WHERE.
         */
        private Correlation correlation(JsonNode query, FilteredJoin outer) {
            String alternative = "write it as SELECT <one expression> FROM ... WHERE inner_column = outer_column AND ...";
            if (!"SELECT_NODE".equals(query.path("type").asText()) || query.path("cte_map").path("map").size() > 0
                    || query.path("modifiers").size() > 0 || query.path("group_expressions").size() > 0
                    || present(query.path("having")) || present(query.path("qualify")) || query.path("select_list").size() != 1) {
                throw Refusal.unsupported(view, "a correlated scalar subquery with WITH, GROUP BY, HAVING, QUALIFY, ORDER BY, "
                        + "LIMIT, DISTINCT, a set operation or several columns", alternative);
            }
            List<TableOccurrence> occurrences = new ArrayList<>();
            FromNode from = from(query.path("from_table"), occurrences);
            List<JsonNode> conjuncts = new ArrayList<>();
            if (present(query.path("where_clause"))) {
                conjuncts(query.path("where_clause"), conjuncts);
            }
            List<JsonNode> outerKeys = new ArrayList<>();
            List<String> innerKeys = new ArrayList<>();
            List<String> filters = new ArrayList<>();
            for (JsonNode conjunct : conjuncts) {
                Set<Side> sides = sides(conjunct, occurrences, outer);
                if (!sides.contains(Side.OUTER)) {
                    inspect(conjunct, false);
                    filters.add("(" + tree.print(conjunct) + ")");
                    continue;
                }
                if ("COMPARE_EQUAL".equals(conjunct.path("type").asText())) {
                    Set<Side> left = sides(conjunct.path("left"), occurrences, outer);
                    Set<Side> right = sides(conjunct.path("right"), occurrences, outer);
                    JsonNode inner = left.equals(Set.of(Side.INNER)) && right.equals(Set.of(Side.OUTER)) ? conjunct.path("left")
                            : right.equals(Set.of(Side.INNER)) && left.equals(Set.of(Side.OUTER)) ? conjunct.path("right") : null;
                    if (inner != null) {
                        JsonNode outerSide = inner == conjunct.path("left") ? conjunct.path("right") : conjunct.path("left");
                        inspect(inner, false);
                        inspect(outerSide, false);
                        innerKeys.add(tree.print(inner));
                        outerKeys.add(outerSide);
                        continue;
                    }
                }
                throw Refusal.unsupported(view, "a correlated scalar subquery whose condition " + tree.print(conjunct)
                        + " refers to the outer query other than by an equality", alternative);
            }
            if (sides(query.path("select_list"), occurrences, outer).contains(Side.OUTER)) {
                throw Refusal.unsupported(view, "a correlated scalar subquery whose SELECT refers to the outer query", alternative);
            }
            Optional<String> where = filters.isEmpty() ? Optional.empty() : Optional.of(String.join(" AND ", filters));
            return new Correlation(outerKeys, innerKeys, new FilteredJoin(from, occurrences, where));
        }

        /** Which query the column references of an expression belong to: the subquery's FROM first, as SQL binds. */
        private Set<Side> sides(JsonNode expression, List<TableOccurrence> inner, FilteredJoin outer) {
            Set<Side> sides = new HashSet<>();
            if ("SUBQUERY".equals(expression.path("class").asText())) {
                throw Refusal.unsupported(view, "a subquery inside a correlated scalar subquery",
                        "join its tables in the subquery's FROM");
            }
            if ("COLUMN_REF".equals(expression.path("class").asText())) {
                JsonNode names = expression.path("column_names");
                String column = names.get(names.size() - 1).asText();
                String relation = names.size() > 1 ? names.get(names.size() - 2).asText() : "";
                if (owns(inner, relation, column)) {
                    sides.add(Side.INNER);
                } else if (owns(outer.visible(), relation, column)) {
                    sides.add(Side.OUTER);
                } else {
                    throw new MallardException(ErrorCode.USER_SQL_INVALID, "materialized view " + view + ": the column "
                            + tree.print(expression) + " in a scalar subquery belongs to no table in reach");
                }
            }
            for (JsonNode child : expression) {
                if (child.isContainerNode()) {
                    sides.addAll(sides(child, inner, outer));
                }
            }
            return sides;
        }

        private static boolean owns(List<TableOccurrence> occurrences, String relation, String column) {
            return occurrences.stream().anyMatch(o -> (relation.isEmpty() || o.alias().equalsIgnoreCase(relation))
                    && o.columns().stream().anyMatch(column::equalsIgnoreCase));
        }

        /** The tables an uncorrelated subquery reads, anywhere in it (its own CTEs are not tables). */
        private List<TableName> tablesRead(JsonNode query) {
            Set<String> local = new HashSet<>();
            collectCteNames(query, local);
            List<TableOccurrence> occurrences = new ArrayList<>();
            collectTables(query, local, occurrences);
            Set<TableName> tables = new LinkedHashSet<>();
            occurrences.forEach(o -> tables.addAll(o.tables()));
            return List.copyOf(tables);
        }

        /** A CTE of the enclosing query that a subquery reads (the subquery's SQL is run as printed, without them). */
        private Optional<String> cteRead(JsonNode node, Set<String> local) {
            if ("BASE_TABLE".equals(node.path("type").asText()) && node.path("schema_name").asText("").isEmpty()) {
                String name = node.path("table_name").asText().toLowerCase(Locale.ROOT);
                return ctes.containsKey(name) && !local.contains(name) ? Optional.of(node.path("table_name").asText()) : Optional.empty();
            }
            for (JsonNode child : node) {
                if (child.isContainerNode()) {
                    Optional<String> found = cteRead(child, local);
                    if (found.isPresent()) {
                        return found;
                    }
                }
            }
            return Optional.empty();
        }

        private void collectCteNames(JsonNode node, Set<String> names) {
            node.path("cte_map").path("map").forEach(entry -> names.add(entry.path("key").asText().toLowerCase(Locale.ROOT)));
            for (JsonNode child : node) {
                if (child.isContainerNode()) {
                    collectCteNames(child, names);
                }
            }
        }

        private void collectTables(JsonNode node, Set<String> local, List<TableOccurrence> occurrences) {
            if ("BASE_TABLE".equals(node.path("type").asText()) && node.has("table_name")) {
                boolean own = local.contains(node.path("table_name").asText().toLowerCase(Locale.ROOT))
                        && node.path("schema_name").asText("").isEmpty();
                if (!own) {
                    baseTable(node, occurrences);
                }
                return;
            }
            if ("FUNCTION".equals(node.path("class").asText()) && catalog.isUnstable(node.path("function_name").asText())) {
                checkScalar(node);
            }
            for (JsonNode child : node) {
                if (child.isContainerNode()) {
                    collectTables(child, local, occurrences);
                }
            }
        }

        /** The recursive CTE that is the whole FROM clause of {@code node}, if it is one. */
        private Optional<Map.Entry<String, Cte>> recursiveFrom(JsonNode node) {
            JsonNode from = node.path("from_table");
            if (!"BASE_TABLE".equals(from.path("type").asText()) || !from.path("schema_name").asText("").isEmpty()) {
                return Optional.empty();
            }
            String name = from.path("table_name").asText();
            Cte cte = ctes.get(name.toLowerCase(Locale.ROOT));
            return cte != null && cte.recursive() ? Optional.of(Map.entry(name, cte)) : Optional.empty();
        }

        /**
         * {@code WITH RECURSIVE r AS (base UNION step) SELECT ... FROM r [WHERE ...]}: the base and each step are
         * inner joins of tables, each step reads r once, and the SELECT over r is a projection and filter.
         */
        private DeltaProgram recursive(JsonNode node, String name, Cte cte) {
            JsonNode definition = cte.query();
            String alternative = "write the recursion as base UNION step, where the step joins r once with tables";
            if (definition.path("union_all").asBoolean(false)) {
                throw Refusal.unsupported(view, "WITH RECURSIVE ... UNION ALL (a recursion that keeps duplicates)",
                        "use UNION: the view keeps the recursion's set of rows, which also ends on a cyclic graph; or carry a depth "
                                + "column and bound it in the step's WHERE (WHERE r.depth < 10)");
            }
            checkModifiers(definition);
            checkQueryShape(node);
            Map<String, Cte> outer = ctes;
            try {
                ctes = cte.scope();
                List<String> names = new ArrayList<>();
                List<Branch> base = new ArrayList<>();
                for (JsonNode select : unionOperands(definition.path("left"))) {
                    List<String> branchNames = new ArrayList<>();
                    base.addAll(linearBranches(select, branchNames));
                    if (names.isEmpty()) {
                        names.addAll(branchNames);
                    }
                }
                for (int i = 0; i < cte.aliases().size() && i < names.size(); i++) {
                    names.set(i, cte.aliases().get(i));
                }
                TableName closure = new TableName(TableName.VIEWS_SCHEMA, "state$" + view + "$closure");
                Map<String, Cte> withSelf = new HashMap<>(cte.scope());
                withSelf.put(name.toLowerCase(Locale.ROOT), cte);
                ctes = Map.copyOf(withSelf);
                recursion = new Recursion(name, closure, names);
                List<Branch> steps = new ArrayList<>();
                for (JsonNode select : unionOperands(definition.path("right"))) {
                    if (containsAggregate(select.path("select_list")) || select.path("group_expressions").size() > 0
                            || present(select.path("having")) || distinct(select)) {
                        throw Refusal.unsupported(view, "aggregates, GROUP BY or DISTINCT in the recursive part of WITH RECURSIVE",
                                "aggregate in a materialized view over the recursion's view");
                    }
                    steps.addAll(linearBranches(select, new ArrayList<>()));
                }
                for (Branch branch : base) {
                    requireInner(branch, alternative);
                }
                for (Branch branch : steps) {
                    requireInner(branch, alternative);
                    long mentions = branch.source().occurrences().stream()
                            .filter(o -> o.table().filter(closure::equals).isPresent()).count();
                    if (mentions != 1) {
                        throw Refusal.unsupported(view, mentions == 0 ? "a recursive branch that does not read " + name
                                : "non-linear recursion (a step that reads " + name + " " + mentions + " times)", alternative);
                    }
                }
                ctes = outer;
                FilteredJoin source = source(node);
                List<JsonNode> select = expandStars(node.path("select_list"), source);
                if (source.occurrences().size() != 1 || !source.requirements().isEmpty() || distinct(node)
                        || node.path("group_expressions").size() > 0 || present(node.path("having"))
                        || select.stream().anyMatch(this::containsAggregate)) {
                    throw Refusal.unsupported(view, "joins, subqueries, DISTINCT or aggregates over a recursive CTE",
                            "create the recursion as a materialized view (SELECT ... FROM " + name
                                    + ") and join or aggregate it in a materialized view over that view");
                }
                return new RecursiveProgram(closure, names, base, steps, new Branch(source, printed(select)), view, recursionLimit);
            } finally {
                ctes = outer;
                recursion = null;
            }
        }

        /** The SELECTs of a UNION (with or without ALL: the recursion keeps a set either way). */
        private List<JsonNode> unionOperands(JsonNode node) {
            if ("SET_OPERATION_NODE".equals(node.path("type").asText()) && "UNION".equals(node.path("setop_type").asText())) {
                checkModifiers(node);
                List<JsonNode> operands = new ArrayList<>();
                node.path("children").forEach(child -> operands.addAll(unionOperands(child)));
                return operands;
            }
            return List.of(node);
        }

        private void requireInner(Branch branch, String alternative) {
            if (!branch.source().innerOnly()) {
                throw Refusal.unsupported(view, "outer, semi or anti joins, IN/EXISTS subqueries, CTEs or subqueries in FROM "
                        + "inside WITH RECURSIVE", alternative);
            }
        }

        /**
         * UNION ALL of projections keeps every branch's rows; UNION keeps each row once; EXCEPT and INTERSECT
         * (and their ALL forms) keep per row the number of copies on each side.
         */
        private DeltaProgram union(JsonNode node) {
            String setop = node.path("setop_type").asText();
            boolean all = node.path("setop_all").asBoolean(false);
            checkModifiers(node);
            if ("UNION".equals(setop) && all) {
                return new ProjectionProgram(linearBranches(node, new ArrayList<>()));
            }
            List<List<Branch>> sides = new ArrayList<>();
            for (JsonNode child : node.path("children")) {
                sides.add(linearBranches(child, new ArrayList<>()));
            }
            return switch (setop) {
                case "UNION" -> distinctRows(sides.stream().flatMap(List::stream).toList());
                case "EXCEPT", "INTERSECT" -> {
                    if (sides.size() != 2) {
                        throw Refusal.unsupported(view, setop + " of " + sides.size() + " inputs",
                                "write it as one " + setop + " of two SELECTs");
                    }
                    yield setDifference(setop, all, sides.get(0), sides.get(1));
                }
                default -> throw Refusal.unsupported(view, setop.replace('_', ' '),
                        "create one materialized view per branch and combine them when reading");
            };
        }

        /**
         * EXCEPT and INTERSECT: the distinct-rows program with two counts per row, its copies on the left (n0)
         * and on the right (n1). EXCEPT keeps a row when n0 > 0 and n1 = 0, INTERSECT when both are positive;
         * EXCEPT ALL keeps n0 - n1 copies and INTERSECT ALL least(n0, n1), as DuckDB does.
         */
        private DeltaProgram setDifference(String setop, boolean all, List<Branch> left, List<Branch> right) {
            List<Branch> keyed = new ArrayList<>();
            for (Branch branch : left) {
                keyed.add(marked(branch, "1", "NULL"));
            }
            for (Branch branch : right) {
                keyed.add(marked(branch, "NULL", "1"));
            }
            int width = left.get(0).columns().size();
            List<String> outputs = new ArrayList<>();
            for (int j = 0; j < width; j++) {
                outputs.add("k" + j);
            }
            // The keyed branches supply the slots' argument columns a0 (1 on the left) and a1 (1 on the right).
            List<AggregateSlot> slots = List.of(new AggregateSlot(AggregateSlot.Kind.COUNT, Optional.of("a0"), 0),
                    new AggregateSlot(AggregateSlot.Kind.COUNT, Optional.of("a1"), 1));
            boolean except = "EXCEPT".equals(setop);
            Optional<String> having = all ? Optional.empty()
                    : Optional.of(except ? "n0 > 0 AND n1 = 0" : "n0 > 0 AND n1 > 0");
            Optional<String> copies = all ? Optional.of(except ? "n0 - n1" : "least(n0, n1)") : Optional.empty();
            return new AggregateProgram(view, keyed, width, slots, outputs, having, copies);
        }

        private Branch marked(Branch branch, String left, String right) {
            List<String> columns = new ArrayList<>();
            for (int j = 0; j < branch.columns().size(); j++) {
                columns.add(branch.columns().get(j) + " AS k" + j);
            }
            columns.add("CAST(" + left + " AS INTEGER) AS a0");
            columns.add("CAST(" + right + " AS INTEGER) AS a1");
            return new Branch(branch.source(), columns);
        }

        /** Each distinct row once: a GROUP BY over all columns with no aggregate. */
        private DeltaProgram distinctRows(List<Branch> branches) {
            int width = branches.get(0).columns().size();
            List<Branch> keyed = new ArrayList<>();
            for (Branch branch : branches) {
                if (branch.columns().size() != width) {
                    throw new MallardException(ErrorCode.USER_SQL_INVALID, "materialized view " + view
                            + ": the UNION branches select different numbers of columns");
                }
                List<String> keys = new ArrayList<>();
                for (int j = 0; j < width; j++) {
                    keys.add(branch.columns().get(j) + " AS k" + j);
                }
                keyed.add(new Branch(branch.source(), keys));
            }
            List<String> outputs = new ArrayList<>();
            for (int j = 0; j < width; j++) {
                outputs.add("k" + j);
            }
            return new AggregateProgram(view, keyed, width, List.of(), outputs, Optional.empty());
        }

        private boolean distinct(JsonNode node) {
            for (JsonNode modifier : node.path("modifiers")) {
                if ("DISTINCT_MODIFIER".equals(modifier.path("type").asText())) {
                    if (modifier.path("distinct_on_targets").size() > 0) {
                        throw Refusal.unsupported(view, "SELECT DISTINCT ON (...)",
                                "use GROUP BY with MIN or MAX for the other columns");
                    }
                    return true;
                }
            }
            return false;
        }

        private List<String> printed(List<JsonNode> select) {
            List<String> outputs = new ArrayList<>();
            for (JsonNode expression : select) {
                inspect(expression, false);
                outputs.add(tree.print(expression));
            }
            return outputs;
        }

        /**
         * The FROM and WHERE of one SELECT. Conjuncts of the WHERE clause that are {@code [NOT] EXISTS (...)} or
         * {@code x [NOT] IN (...)} over a subquery become requirements on the subquery's rows (a semi or anti
         * join, maintained like the padded side of an outer join); any other subquery is refused.
         */
        private FilteredJoin source(JsonNode node) {
            List<TableOccurrence> occurrences = new ArrayList<>();
            FromNode from = from(node.path("from_table"), occurrences);
            FilteredJoin outer = new FilteredJoin(from, occurrences, Optional.empty());
            List<String> filters = new ArrayList<>();
            List<FilteredJoin.Requirement> requirements = new ArrayList<>();
            List<JsonNode> conjuncts = new ArrayList<>();
            if (present(node.path("where_clause"))) {
                conjuncts(node.path("where_clause"), conjuncts);
            }
            for (JsonNode conjunct : conjuncts) {
                List<FilteredJoin.Requirement> required = requirements(conjunct, outer);
                if (!required.isEmpty()) {
                    requirements.addAll(required);
                } else {
                    inspect(conjunct, false);
                    filters.add(tree.print(conjunct));
                }
            }
            Optional<String> where = filters.isEmpty() ? Optional.empty() : Optional.of(filters.size() == 1 ? filters.get(0)
                    : filters.stream().map(f -> "(" + f + ")").collect(Collectors.joining(" AND ")));
            return new FilteredJoin(from, occurrences, where, requirements);
        }

        private void conjuncts(JsonNode expression, List<JsonNode> out) {
            if ("CONJUNCTION_AND".equals(expression.path("type").asText())) {
                expression.path("children").forEach(child -> conjuncts(child, out));
            } else {
                out.add(expression);
            }
        }

        /**
         * {@code EXISTS (q)} needs some row of q, {@code NOT EXISTS (q)} none. {@code x IN (SELECT e ...)} is
         * EXISTS with {@code e = x} added to q's WHERE (a NULL comparison filters the row either way), and
         * {@code x NOT IN (SELECT e ...)} is false or NULL as soon as q holds an e equal to x, or a NULL e, or x
         * is NULL and q is not empty: three requirements, no row with {@code e = x}, no row with {@code e IS
         * NULL}, and no row at all unless {@code x IS NOT NULL}. (One requirement with {@code e = x OR e IS NULL
         * OR x IS NULL} says the same, but DuckDB can only run an OR condition as a nested loop.) Empty when
         * the conjunct is not such a subquery.
         */
        private List<FilteredJoin.Requirement> requirements(JsonNode conjunct, FilteredJoin outer) {
            boolean negated = false;
            JsonNode expression = conjunct;
            if ("OPERATOR_NOT".equals(expression.path("type").asText()) && expression.path("children").size() == 1) {
                negated = true;
                expression = expression.path("children").get(0);
            }
            if (!"SUBQUERY".equals(expression.path("class").asText())) {
                return List.of();
            }
            String type = expression.path("subquery_type").asText();
            if (!"EXISTS".equals(type) && !"ANY".equals(type)) {
                return List.of();
            }
            JsonNode query = expression.path("subquery").path("node");
            Map<String, Cte> enclosing = ctes;
            ctes = withCtes(query);
            try {
                if (!"SELECT_NODE".equals(query.path("type").asText())) {
                    throw Refusal.unsupported(view, "a set operation inside an IN or EXISTS subquery",
                            "create the set operation as a materialized view of its own and read that view in the subquery");
                }
                checkQueryShape(query);
                FilteredJoin inner = source(query);
                List<JsonNode> select = expandStars(query.path("select_list"), inner);
                if (query.path("group_expressions").size() > 0 || present(query.path("having"))
                        || select.stream().anyMatch(this::containsAggregate)) {
                    throw Refusal.unsupported(view, "an IN or EXISTS subquery with GROUP BY or aggregates",
                            "create the subquery as a materialized view of its own and read that view in the subquery");
                }
                // Existence ignores duplicates, so DISTINCT changes nothing; distinct() still refuses DISTINCT ON.
                distinct(query);
                if (!"ANY".equals(type)) {
                    return List.of(new FilteredJoin.Requirement(inner, negated, Optional.empty(), correlated(inner)));
                }
                if (!"COMPARE_EQUAL".equals(expression.path("comparison_type").asText()) || select.size() != 1) {
                    throw Refusal.unsupported(view, "a comparison with ANY or ALL over a subquery",
                            "use x IN (SELECT y ...) or EXISTS");
                }
                JsonNode tested = qualified(expression.path("child"), outer);
                inspect(tested, false);
                // x moves into the subquery's WHERE: a name the subquery also defines would rebind it.
                for (String relation : relations(tested)) {
                    if (relation.isEmpty() || inner.occurrences().stream().anyMatch(o -> o.alias().equalsIgnoreCase(relation))) {
                        throw Refusal.unsupported(view, "x IN (subquery) where the subquery's FROM reuses the name "
                                + (relation.isEmpty() ? "of a column of x" : relation),
                                "give the subquery's table an alias of its own (FROM t AS t2) and qualify x's columns");
                    }
                }
                String x = "(" + tree.print(tested) + ")";
                String e = "(" + printed(select).get(0) + ")";
                FilteredJoin.Requirement equal = new FilteredJoin.Requirement(inner.restricted(e + " = " + x), negated);
                if (!negated) {
                    return List.of(equal);
                }
                FilteredJoin nulls = inner.restricted(e + " IS NULL");
                return List.of(equal, new FilteredJoin.Requirement(nulls, true, Optional.empty(), correlated(nulls)),
                        new FilteredJoin.Requirement(inner, true, Optional.of(x + " IS NOT NULL"), correlated(inner)));
            } finally {
                ctes = enclosing;
            }
        }

        /** Whether a subquery's rows depend on the enclosing row (it does not bind on its own). */
        private boolean correlated(FilteredJoin inner) {
            return !catalog.binds(inner.current(List.of()));
        }

        /** The relation names that the column references of an expression start with ("" for an unqualified one). */
        private List<String> relations(JsonNode expression) {
            List<String> relations = new ArrayList<>();
            if ("COLUMN_REF".equals(expression.path("class").asText())) {
                JsonNode names = expression.path("column_names");
                relations.add(names.size() > 1 ? names.get(names.size() - 2).asText() : "");
            }
            for (JsonNode child : expression) {
                if (child.isContainerNode()) {
                    relations.addAll(relations(child));
                }
            }
            return relations;
        }

        /**
         * The expression with each one-part column name that belongs to a mention of {@code outer} qualified by
         * that mention's alias, so it keeps its meaning when moved into the subquery's WHERE.
         */
        private JsonNode qualified(JsonNode expression, FilteredJoin outer) {
            if ("COLUMN_REF".equals(expression.path("class").asText()) && expression.path("column_names").size() == 1) {
                String column = expression.path("column_names").get(0).asText();
                List<TableOccurrence> owners = outer.visible().stream()
                        .filter(o -> o.columns().stream().anyMatch(column::equalsIgnoreCase)).toList();
                if (owners.size() == 1) {
                    ObjectNode copy = ((ObjectNode) expression).deepCopy();
                    ArrayNode names = copy.putArray("column_names");
                    names.add(owners.get(0).alias());
                    names.add(column);
                    return copy;
                }
                return expression;
            }
            if (expression.isObject()) {
                ObjectNode copy = ((ObjectNode) expression).deepCopy();
                Iterator<Map.Entry<String, JsonNode>> fields = expression.fields();
                while (fields.hasNext()) {
                    Map.Entry<String, JsonNode> field = fields.next();
                    if (field.getValue().isContainerNode()) {
                        copy.set(field.getKey(), qualified(field.getValue(), outer));
                    }
                }
                return copy;
            }
            if (expression.isArray()) {
                ArrayNode copy = JsonNodeFactory.instance.arrayNode();
                expression.forEach(element -> copy.add(qualified(element, outer)));
                return copy;
            }
            return expression;
        }

        private DeltaProgram aggregate(FilteredJoin source, JsonNode node, List<JsonNode> select, List<JsonNode> groups,
                JsonNode having) {
            JsonNode sets = node.path("group_sets");
            if (sets.size() > 1 || (sets.size() == 1 && sets.get(0).size() != groups.size())) {
                throw Refusal.unsupported(view, "GROUPING SETS, ROLLUP or CUBE",
                        "create one materialized view per grouping and combine them when reading");
            }
            List<String> columns = new ArrayList<>();
            List<JsonNode> keyShapes = new ArrayList<>();
            for (JsonNode group : groups) {
                if ("CONSTANT".equals(group.path("class").asText())) {
                    throw Refusal.unsupported(view, "GROUP BY a position or a constant",
                            "write the grouping expression itself in GROUP BY");
                }
                inspect(group, false);
                columns.add(tree.print(group) + " AS k" + columns.size());
                keyShapes.add(SqlTree.shape(group));
            }
            Slots slots = new Slots();
            List<String> outputs = new ArrayList<>();
            for (JsonNode expression : select) {
                outputs.add(tree.print(overState(expression, keyShapes, slots)));
            }
            Optional<String> havingSql = present(having)
                    ? Optional.of(tree.print(overState(having, keyShapes, slots)))
                    : Optional.empty();
            for (AggregateSlot slot : slots.all) {
                slot.argument().ifPresent(argument -> columns.add(argument + " AS " + slot.argumentColumn()));
            }
            return new AggregateProgram(view, List.of(new Branch(source, columns)), groups.size(), slots.all, outputs,
                    havingSql);
        }

        /** The expression with grouping expressions and aggregate calls replaced by state columns. */
        private JsonNode overState(JsonNode node, List<JsonNode> keyShapes, Slots slots) {
            if (node.has("class")) {
                int key = keyShapes.indexOf(SqlTree.shape(node));
                if (key >= 0) {
                    return tree.parseExpression("k" + key);
                }
                String type = node.path("class").asText();
                if ("FUNCTION".equals(type) && catalog.isAggregate(node.path("function_name").asText())) {
                    return tree.parseExpression(slots.slot(node).output());
                }
                if ("COLUMN_REF".equals(type)) {
                    throw new MallardException(ErrorCode.USER_SQL_INVALID, "materialized view " + view + ": column "
                            + tree.print(node) + " is neither inside an aggregate nor written exactly as in GROUP BY");
                }
                checkScalar(node);
            }
            if (node.isObject()) {
                ObjectNode copy = ((ObjectNode) node).deepCopy();
                Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
                while (fields.hasNext()) {
                    Map.Entry<String, JsonNode> field = fields.next();
                    if (field.getValue().isContainerNode()) {
                        copy.set(field.getKey(), overState(field.getValue(), keyShapes, slots));
                    }
                }
                return copy;
            }
            if (node.isArray()) {
                ArrayNode copy = JsonNodeFactory.instance.arrayNode();
                node.forEach(element -> copy.add(overState(element, keyShapes, slots)));
                return copy;
            }
            return node;
        }

        private final class Slots {
            private final List<AggregateSlot> all = new ArrayList<>();

            AggregateSlot slot(JsonNode call) {
                String name = call.path("function_name").asText().toLowerCase(Locale.ROOT);
                Optional<String> filter = Optional.empty();
                if (present(call.path("filter"))) {
                    inspect(call.path("filter"), false);
                    filter = Optional.of(tree.print(call.path("filter")));
                }
                if (call.path("order_bys").path("orders").size() > 0) {
                    recomputeGroups = true;
                    throw Refusal.unsupported(view, name + "(... ORDER BY ...)", "drop the ORDER BY inside the aggregate");
                }
                List<JsonNode> arguments = arguments(call);
                AggregateSlot.Kind kind = switch (name) {
                    case "sum" -> AggregateSlot.Kind.SUM;
                    case "count_star" -> AggregateSlot.Kind.COUNT_STAR;
                    case "count" -> arguments.isEmpty() ? AggregateSlot.Kind.COUNT_STAR : AggregateSlot.Kind.COUNT;
                    case "avg", "mean" -> AggregateSlot.Kind.AVG;
                    case "min" -> AggregateSlot.Kind.MIN;
                    case "max" -> AggregateSlot.Kind.MAX;
                    default -> throw recomputed(Refusal.unsupported(view, "the aggregate " + name + "()",
                            "the maintained aggregates are SUM, COUNT, COUNT(*), AVG, MIN and MAX; compute "
                                    + name + "() in the query that reads the view, or in a plain DuckDB view"));
                };
                if (arguments.size() > (kind == AggregateSlot.Kind.COUNT_STAR ? 0 : 1)) {
                    throw Refusal.unsupported(view, name + "() with " + arguments.size() + " arguments",
                            "use the one-argument form");
                }
                Optional<String> argument = Optional.empty();
                if (!arguments.isEmpty()) {
                    inspect(arguments.get(0), false);
                    argument = Optional.of(tree.print(arguments.get(0)));
                }
                if (filter.isPresent()) {
                    // agg(x) FILTER (WHERE c) is agg(CASE WHEN c THEN x END): every maintained aggregate skips NULLs.
                    if (kind == AggregateSlot.Kind.COUNT_STAR) {
                        kind = AggregateSlot.Kind.COUNT;
                        argument = Optional.of("1");
                    }
                    argument = Optional.of("CASE WHEN (" + filter.get() + ") THEN (" + argument.get() + ") END");
                }
                // MIN and MAX of the distinct values are MIN and MAX; COUNT(DISTINCT *) does not parse.
                boolean distinct = call.path("distinct").asBoolean(false)
                        && kind != AggregateSlot.Kind.MIN && kind != AggregateSlot.Kind.MAX;
                for (AggregateSlot slot : all) {
                    if (slot.kind() == kind && slot.argument().equals(argument) && slot.distinct() == distinct) {
                        return slot;
                    }
                }
                int storage = all.size();
                for (AggregateSlot slot : all) {
                    if (shareSlots && slot.sharesStateWith(kind, argument, distinct)) {
                        storage = slot.storage();
                        break;
                    }
                }
                AggregateSlot slot = new AggregateSlot(kind, argument, all.size(), distinct, storage);
                all.add(slot);
                return slot;
            }
        }

        private void checkQueryShape(JsonNode node) {
            String type = node.path("type").asText();
            if (!"SELECT_NODE".equals(type)) {
                throw Refusal.unsupported(view, "a " + type.toLowerCase(Locale.ROOT).replace('_', ' ') + " query",
                        "write the view as one SELECT over tables");
            }
            checkModifiers(node);
            if (present(node.path("qualify"))) {
                throw Refusal.unsupported(view, "QUALIFY", "filter in the query that reads the view");
            }
            if (present(node.path("sample"))) {
                throw Refusal.unsupported(view, "USING SAMPLE", "sample in the query that reads the view");
            }
            if (!"STANDARD_HANDLING".equals(node.path("aggregate_handling").asText("STANDARD_HANDLING"))) {
                throw Refusal.unsupported(view, "GROUP BY ALL", "list the grouping expressions in GROUP BY");
            }
        }

        private void checkModifiers(JsonNode node) {
            for (JsonNode modifier : node.path("modifiers")) {
                switch (modifier.path("type").asText()) {
                    case "DISTINCT_MODIFIER" -> {
                        // Maintained: see distinct().
                    }
                    case "ORDER_MODIFIER" -> throw Refusal.unsupported(view, "ORDER BY without LIMIT (here)",
                            "a view is an unordered bag of rows; order in the query that reads it, or give the view's own "
                                    + "SELECT ORDER BY ... LIMIT k for a top-k");
                    default -> throw Refusal.unsupported(view, "LIMIT without ORDER BY, or LIMIT inside a subquery, CTE "
                            + "or set operation", "a top-k is SELECT ... ORDER BY ... LIMIT k as the view's own SELECT; "
                            + "for anything else apply the LIMIT in the query that reads the view");
                }
            }
        }

        private FromNode from(JsonNode table, List<TableOccurrence> occurrences) {
            String type = table.path("type").asText();
            return switch (type) {
                case "BASE_TABLE" -> baseTable(table, occurrences);
                case "JOIN" -> join(table, occurrences);
                case "SUBQUERY" -> {
                    String alias = table.path("alias").asText("");
                    List<String> aliases = new ArrayList<>();
                    table.path("column_name_alias").forEach(a -> aliases.add(a.asText()));
                    occurrences.add(derived(table.path("subquery").path("node"), ctes,
                            alias.isEmpty() ? "unnamed_subquery" : alias, aliases));
                    yield new FromNode.Mention(occurrences.size() - 1);
                }
                case "TABLE_FUNCTION" -> throw Refusal.unsupported(view, "a table function in FROM",
                        "load its rows into a table and define the view over that table");
                case "EMPTY", "EMPTY_FROM" -> throw Refusal.unsupported(view, "a query without FROM",
                        "a materialized view must read at least one table");
                default -> throw Refusal.unsupported(view, "a " + type.toLowerCase(Locale.ROOT).replace('_', ' ')
                        + " in FROM", "define the view over base tables");
            };
        }

        private FromNode join(JsonNode join, List<TableOccurrence> occurrences) {
            String joinType = join.path("join_type").asText();
            String refType = join.path("ref_type").asText();
            boolean cross = "CROSS".equals(refType);
            if (!("REGULAR".equals(refType) || cross)) {
                throw Refusal.unsupported(view, "a " + refType + " JOIN",
                        "inner, outer, semi and anti joins with ON, comma joins and CROSS JOIN are maintained; "
                                + "natural, ASOF, positional and lateral joins are not yet");
            }
            FromNode.Kind kind = switch (joinType) {
                case "INNER" -> FromNode.Kind.INNER;
                case "LEFT" -> FromNode.Kind.LEFT;
                case "RIGHT" -> FromNode.Kind.RIGHT;
                case "FULL", "OUTER" -> FromNode.Kind.FULL;
                case "SEMI" -> FromNode.Kind.SEMI;
                case "ANTI" -> FromNode.Kind.ANTI;
                default -> throw Refusal.unsupported(view, "a " + joinType + " JOIN",
                        "write it as an inner, outer, semi or anti join with ON");
            };
            if (join.path("using_columns").size() > 0) {
                throw Refusal.unsupported(view, "JOIN ... USING", "write the join condition with ON a.x = b.x");
            }
            FromNode left = from(join.path("left"), occurrences);
            FromNode right = from(join.path("right"), occurrences);
            Optional<String> condition = Optional.empty();
            if (present(join.path("condition"))) {
                inspect(join.path("condition"), false);
                condition = Optional.of(tree.print(join.path("condition")));
            }
            if (kind != FromNode.Kind.INNER && condition.isEmpty()) {
                throw Refusal.unsupported(view, "a " + kind.keyword() + " without ON", "write the join condition with ON");
            }
            return new FromNode.Join(joins++, kind, left, right, condition);
        }

        private FromNode baseTable(JsonNode table, List<TableOccurrence> occurrences) {
            String written = table.path("table_name").asText();
            String alias = table.path("alias").asText("");
            Cte cte = ctes.get(written.toLowerCase(Locale.ROOT));
            if (cte != null && cte.recursive() && table.path("schema_name").asText("").isEmpty()) {
                if (recursion == null || !recursion.name().equalsIgnoreCase(written)) {
                    throw Refusal.unsupported(view, "the recursive CTE " + written + " read other than as the whole FROM "
                            + "of the view's SELECT", "create the recursion as a materialized view (SELECT ... FROM " + written
                            + ") and read that view");
                }
                occurrences.add(TableOccurrence.table(recursion.closure(), alias.isEmpty() ? written : alias, recursion.columns()));
                return new FromNode.Mention(occurrences.size() - 1);
            }
            if (cte != null && table.path("schema_name").asText("").isEmpty() && table.path("catalog_name").asText("").isEmpty()) {
                if (table.path("column_name_alias").size() > 0) {
                    throw Refusal.unsupported(view, "column aliases on the CTE " + written,
                            "name the columns in the CTE (WITH " + written + "(x, y) AS ...) or alias them in the SELECT list");
                }
                occurrences.add(derived(cte.query(), cte.scope(), alias.isEmpty() ? written : alias, cte.aliases()));
                return new FromNode.Mention(occurrences.size() - 1);
            }
            if (present(table.path("sample")) || present(table.path("at_clause"))) {
                throw Refusal.unsupported(view, "TABLESAMPLE or AT (time travel) on " + written, "read the table plainly");
            }
            if (table.path("column_name_alias").size() > 0) {
                throw Refusal.unsupported(view, "column aliases on the table " + written,
                        "alias the columns in the SELECT list instead");
            }
            String database = table.path("catalog_name").asText("");
            String schema = table.path("schema_name").asText("");
            if (!database.isEmpty() && !catalog.databaseExists(database)) {
                throw new DetachedDatabase("materialized view " + view + " reads " + database
                        + "." + schema + "." + written + " but no database " + database + " is attached; ATTACH it AS "
                        + database + " (the view comes back at the next sync)");
            }
            if (database.isEmpty() && !schema.isEmpty() && catalog.table(schema, written).isEmpty()
                    && catalog.databaseExists(schema)) {
                database = schema; // db.t: the table t in the main schema of the attached database db
                schema = "main";
            }
            if (schema.isEmpty()) {
                schema = catalog.currentSchema();
            }
            if (schema.equalsIgnoreCase(TableName.VIEWS_SCHEMA)) {
                throw Refusal.unsupported(view, "Mallard's own table " + written, "define the view over your tables");
            }
            String finalDatabase = database;
            String finalSchema = schema;
            TableName name = catalog.table(database, schema, written).orElseThrow(() -> catalog.isView(finalDatabase, finalSchema, written)
                    ? Refusal.unsupported(view, "the DuckDB view " + written + " as a source",
                            "define the materialized view over the tables the view reads")
                    : new MallardException(ErrorCode.USER_SQL_INVALID, "materialized view " + view
                            + ": no table " + finalSchema + "." + written + " (temporary tables cannot be sources; a table of an "
                            + "ATTACHed database needs that database attached)"));
            List<String> columns = catalog.columns(name);
            if (columns.stream().anyMatch(c -> c.equalsIgnoreCase(FilteredJoin.WEIGHT))) {
                throw Refusal.unsupported(view, "the column " + FilteredJoin.WEIGHT + " of " + name,
                        "rename it: Mallard's delta logs use that name for the weight");
            }
            occurrences.add(TableOccurrence.table(name, alias.isEmpty() ? written : alias, columns));
            return new FromNode.Mention(occurrences.size() - 1);
        }

        /** The CTEs visible in {@code node}: the enclosing ones, then its own, each seeing those before it. */
        private Map<String, Cte> withCtes(JsonNode node) {
            Map<String, Cte> scope = new HashMap<>(ctes);
            for (JsonNode entry : node.path("cte_map").path("map")) {
                JsonNode definition = entry.path("value");
                if (!definition.path("key_targets").isEmpty() || !definition.path("query_node").path("key_targets").isEmpty()) {
                    // USING KEY replaces a key's row at each round instead of adding rows: not the set recursion kept here.
                    throw Refusal.unsupported(view, "WITH RECURSIVE ... USING KEY",
                            "write the recursion without USING KEY (base UNION step keeps the set of rows), or materialize "
                                    + "its result in a table");
                }
                List<String> aliases = new ArrayList<>();
                definition.path("aliases").forEach(a -> aliases.add(a.asText()));
                Map<String, Cte> before = Map.copyOf(scope);
                scope.put(entry.path("key").asText().toLowerCase(Locale.ROOT),
                        new Cte(definition.path("query_node"), aliases, before));
            }
            return Map.copyOf(scope);
        }

        /**
         * A CTE or subquery in FROM, inlined: its branches (it must be a projection over joins, or a UNION ALL of
         * those) and the column names the query gives it.
         */
        private TableOccurrence derived(JsonNode node, Map<String, Cte> scope, String alias, List<String> columnAliases) {
            Map<String, Cte> outer = ctes;
            ctes = scope;
            try {
                if (aggregating(node)) {
                    return groupedRelation(node, alias, columnAliases);
                }
                List<String> names = new ArrayList<>();
                List<Branch> branches = linearBranches(node, names);
                rename(names, columnAliases, alias);
                // A relation that reads an aggregating one reads its state, which exists only once the view does.
                boolean readsGrouped = branches.stream().flatMap(b -> b.source().occurrences().stream())
                        .anyMatch(o -> o.grouped().isPresent());
                if (!readsGrouped && !catalog.binds(Branch.current(branches))) {
                    // A subquery in FROM that reads a column of the tables beside it is a lateral join: its rows
                    // depend on the other side row by row, which the derived relation's own delta does not follow.
                    throw Refusal.unsupported(view, "the lateral (correlated) subquery " + alias + " in FROM",
                            "join its table directly and move its condition into ON or WHERE");
                }
                return TableOccurrence.derived(branches, alias, names);
            } finally {
                ctes = outer;
            }
        }

        private void rename(List<String> names, List<String> columnAliases, String alias) {
            for (int i = 0; i < columnAliases.size() && i < names.size(); i++) {
                names.set(i, columnAliases.get(i));
            }
            Set<String> seen = new HashSet<>();
            for (String name : names) {
                if (!seen.add(name.toLowerCase(Locale.ROOT))) {
                    throw Refusal.unsupported(view, "two columns named " + name + " in the CTE or subquery " + alias,
                            "alias the columns so that each has a name of its own");
                }
            }
        }

        private boolean aggregating(JsonNode node) {
            return "SELECT_NODE".equals(node.path("type").asText()) && (distinct(node) || node.path("group_expressions").size() > 0
                    || present(node.path("having")) || containsAggregate(node.path("select_list")));
        }

        /**
         * A CTE or subquery in FROM with GROUP BY, aggregates, HAVING or DISTINCT, over joins like a view's: kept by
         * a {@link GroupedRelation} that recomputes the groups a change touches.
         */
        private TableOccurrence groupedRelation(JsonNode node, String alias, List<String> columnAliases) {
            Map<String, Cte> outer = ctes;
            ctes = withCtes(node);
            try {
                checkQueryShape(node);
                FilteredJoin source = source(node);
                List<JsonNode> select = expandStars(node.path("select_list"), source);
                List<JsonNode> groups = new ArrayList<>();
                node.path("group_expressions").forEach(groups::add);
                JsonNode sets = node.path("group_sets");
                if (sets.size() > 1 || (sets.size() == 1 && sets.get(0).size() != groups.size())) {
                    throw Refusal.unsupported(view, "GROUPING SETS, ROLLUP or CUBE in the CTE or subquery " + alias,
                            "one CTE per grouping");
                }
                if (distinct(node) && (!groups.isEmpty() || present(node.path("having"))
                        || select.stream().anyMatch(this::containsAggregate))) {
                    throw Refusal.unsupported(view, "SELECT DISTINCT over GROUP BY or aggregates in the CTE or subquery " + alias,
                            "drop DISTINCT (grouped rows are already distinct by their keys)");
                }
                // DISTINCT groups by its columns; a constant one groups nothing (and in GROUP BY would be a position).
                List<JsonNode> keys = distinct(node)
                        ? select.stream().filter(e -> !"CONSTANT".equals(e.path("class").asText())).toList() : groups;
                if (distinct(node) && keys.isEmpty()) {
                    throw Refusal.unsupported(view, "SELECT DISTINCT of constants only in the CTE or subquery " + alias,
                            "select a column of its tables too");
                }
                List<String> keySql = new ArrayList<>();
                for (JsonNode key : keys) {
                    if ("CONSTANT".equals(key.path("class").asText())) {
                        throw Refusal.unsupported(view, "GROUP BY a position or a constant", "write the grouping expression itself in GROUP BY");
                    }
                    inspect(key, false);
                    keySql.add(tree.print(key));
                }
                List<String> columns = new ArrayList<>();
                List<String> names = new ArrayList<>();
                for (JsonNode expression : select) {
                    inspect(expression, true);
                    columns.add(tree.print(expression));
                    String name = expression.path("alias").asText("");
                    JsonNode parts = expression.path("column_names");
                    names.add(!name.isEmpty() ? name : "COLUMN_REF".equals(expression.path("class").asText()) && parts.size() > 0
                            ? parts.get(parts.size() - 1).asText() : columns.get(columns.size() - 1));
                }
                rename(names, columnAliases, alias);
                Optional<String> having = Optional.empty();
                if (present(node.path("having"))) {
                    inspect(node.path("having"), true);
                    having = Optional.of(tree.print(node.path("having")));
                }
                for (JsonNode part : List.of(node.path("select_list"), node.path("where_clause"), node.path("group_expressions"),
                        node.path("having"))) {
                    checkOwnColumns(part, source, alias);
                }
                GroupedRelation relation = new GroupedRelation(view, grouped.size(), source, keySql, columns, having, names);
                grouped.add(relation);
                return TableOccurrence.grouped(relation, alias);
            } finally {
                ctes = outer;
            }
        }

        /** Refuses a column reference that none of the relation's own tables has (lateral, or an output alias). */
        private void checkOwnColumns(JsonNode expression, FilteredJoin source, String alias) {
            if ("SUBQUERY".equals(expression.path("class").asText())) {
                return;
            }
            if ("COLUMN_REF".equals(expression.path("class").asText())) {
                JsonNode names = expression.path("column_names");
                String column = names.get(names.size() - 1).asText();
                String relation = names.size() > 1 ? names.get(names.size() - 2).asText() : "";
                if (!owns(source.occurrences(), relation, column)) {
                    throw Refusal.unsupported(view, "the column " + tree.print(expression) + " in the aggregating CTE or subquery "
                            + alias + ", which none of its tables has (a lateral subquery, or an output alias in GROUP BY or HAVING)",
                            "join the outer table directly, and write the grouping expression itself");
                }
            }
            for (JsonNode child : expression) {
                if (child.isContainerNode()) {
                    checkOwnColumns(child, source, alias);
                }
            }
        }

        /** The branches of a projection over joins, or of a UNION ALL of those, and the first branch's column names. */
        private List<Branch> linearBranches(JsonNode node, List<String> names) {
            Map<String, Cte> outer = ctes;
            ctes = withCtes(node);
            try {
                String type = node.path("type").asText();
                if ("RECURSIVE_CTE_NODE".equals(type)) {
                    throw Refusal.unsupported(view, "WITH RECURSIVE", "materialize the recursion's result in a table");
                }
                if ("SET_OPERATION_NODE".equals(type)) {
                    if (!"UNION".equals(node.path("setop_type").asText()) || !node.path("setop_all").asBoolean(false)) {
                        throw Refusal.unsupported(view, "a " + node.path("setop_type").asText().replace('_', ' ')
                                + (node.path("setop_all").asBoolean(false) ? " ALL" : "") + " inside a CTE, a subquery or another set operation",
                                "create the set operation as a materialized view of its own and read that view");
                    }
                    checkModifiers(node);
                    List<Branch> branches = new ArrayList<>();
                    for (JsonNode child : node.path("children")) {
                        List<String> childNames = new ArrayList<>();
                        branches.addAll(linearBranches(child, childNames));
                        if (names.isEmpty()) {
                            names.addAll(childNames);
                        }
                    }
                    return branches;
                }
                checkQueryShape(node);
                FilteredJoin source = source(node);
                List<JsonNode> select = expandStars(node.path("select_list"), source);
                if (distinct(node) || node.path("group_expressions").size() > 0 || present(node.path("having"))
                        || select.stream().anyMatch(this::containsAggregate)) {
                    throw Refusal.unsupported(view, "a CTE, subquery or set-operation branch with DISTINCT, GROUP BY or aggregates",
                            "create it as a materialized view of its own and read that view");
                }
                List<String> columns = printed(select);
                for (int i = 0; i < select.size(); i++) {
                    JsonNode expression = select.get(i);
                    String alias = expression.path("alias").asText("");
                    JsonNode parts = expression.path("column_names");
                    names.add(!alias.isEmpty() ? alias
                            : "COLUMN_REF".equals(expression.path("class").asText()) && parts.size() > 0
                                    ? parts.get(parts.size() - 1).asText() : columns.get(i));
                }
                return List.of(new Branch(source, columns));
            } finally {
                ctes = outer;
            }
        }

        private List<JsonNode> expandStars(JsonNode selectList, FilteredJoin source) {
            List<JsonNode> expanded = new ArrayList<>();
            for (JsonNode expression : selectList) {
                if (!"STAR".equals(expression.path("class").asText())) {
                    expanded.add(expression);
                    continue;
                }
                if (expression.path("exclude_list").size() > 0 || expression.path("replace_list").size() > 0
                        || expression.path("columns").asBoolean(false) || present(expression.path("expr"))
                        || expression.path("rename_list").size() > 0) {
                    throw Refusal.unsupported(view, "* EXCLUDE/REPLACE/RENAME or COLUMNS(...)",
                            "list the columns in the SELECT");
                }
                String relation = expression.path("relation_name").asText("");
                boolean matched = false;
                for (TableOccurrence occurrence : source.visible()) {
                    if (relation.isEmpty() || relation.equalsIgnoreCase(occurrence.alias())) {
                        matched = true;
                        for (String column : occurrence.columns()) {
                            expanded.add(tree.parseExpression(SqlText.identifier(occurrence.alias()) + "." + SqlText.identifier(column)));
                        }
                    }
                }
                if (!matched) {
                    throw new MallardException(ErrorCode.USER_SQL_INVALID,
                            "materialized view " + view + ": no table " + relation + " in FROM for " + relation + ".*");
                }
            }
            return expanded;
        }

        /** Whether an expression calls an aggregate (one inside a subquery belongs to the subquery). */
        private boolean containsAggregate(JsonNode node) {
            if (node.has("class") && "FUNCTION".equals(node.path("class").asText())
                    && catalog.isAggregate(node.path("function_name").asText())) {
                return true;
            }
            if ("SUBQUERY".equals(node.path("class").asText())) {
                return false;
            }
            for (JsonNode child : node) {
                if (child.isContainerNode() && containsAggregate(child)) {
                    return true;
                }
            }
            return false;
        }

        /** Refuses what no family maintains anywhere in an expression; aggregates only where allowed. */
        private void inspect(JsonNode node, boolean aggregatesAllowed) {
            if (allowed.contains(node)) {
                if ("SUBQUERY".equals(node.path("class").asText())) {
                    // Kept as DuckDB prints it: the program evaluates it, with DuckDB's own semantics.
                    return;
                }
                for (JsonNode child : node) {
                    if (child.isContainerNode()) {
                        inspect(child, false);
                    }
                }
                return;
            }
            if (node.has("class")) {
                if (!aggregatesAllowed && "FUNCTION".equals(node.path("class").asText())
                        && catalog.isAggregate(node.path("function_name").asText())) {
                    throw new MallardException(ErrorCode.USER_SQL_INVALID, "materialized view " + view
                            + ": the aggregate " + node.path("function_name").asText() + "() cannot appear here");
                }
                checkScalar(node);
            }
            for (JsonNode child : node) {
                if (child.isContainerNode()) {
                    inspect(child, aggregatesAllowed);
                }
            }
        }

        private void checkScalar(JsonNode node) {
            String type = node.path("class").asText();
            switch (type) {
                case "SUBQUERY" -> throw Refusal.unsupported(view, "a scalar subquery, or an IN or EXISTS subquery outside "
                        + "the AND-ed conditions of a WHERE clause", "rewrite it as a join, or as [NOT] IN / [NOT] EXISTS "
                        + "conditions AND-ed into the WHERE clause");
                case "WINDOW" -> throw Refusal.unsupported(view, "the window function "
                        + node.path("function_name").asText().toLowerCase(Locale.ROOT) + "() OVER (...)",
                        "compute the window in the query that reads the view");
                case "PARAMETER" -> throw Refusal.unsupported(view, "a prepared-statement parameter",
                        "write the value into the view's SQL");
                case "STAR", "COLUMNS" -> throw Refusal.unsupported(view, "* or COLUMNS(...) inside an expression",
                        "list the columns");
                case "FUNCTION" -> {
                    String function = node.path("function_name").asText();
                    if (catalog.isUnstable(function)) {
                        throw Refusal.unsupported(view, "the function " + function + "()",
                                "its value changes from call to call (or with the clock), so a view kept current by its "
                                        + "tables' changes would go stale; apply it in the query that reads the view");
                    }
                }
                default -> {
                    // Constants, column references, operators, CASE, CAST, comparisons: deterministic row-wise.
                }
            }
        }

        private List<JsonNode> arguments(JsonNode call) {
            List<JsonNode> arguments = new ArrayList<>();
            JsonNode list = call.has("arguments") ? call.path("arguments") : call.path("children");
            for (JsonNode argument : list) {
                arguments.add(argument.has("expression") && !argument.has("class") ? argument.path("expression") : argument);
            }
            return arguments;
        }
    }

    private static boolean present(JsonNode node) {
        return !node.isMissingNode() && !node.isNull();
    }

    /** A view reads a table of a database that is not attached: broken until it is attached again, nothing to drop. */
    static final class DetachedDatabase extends MallardException {
        DetachedDatabase(String message) {
            super(ErrorCode.USER_VIEW_BROKEN, message);
        }
    }
}
