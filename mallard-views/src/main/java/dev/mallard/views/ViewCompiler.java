package dev.mallard.views;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Reads a view's query from DuckDB's parse tree and compiles it into a {@link DeltaProgram}, or refuses it
 * naming the operator it cannot maintain. The families it maintains: projection and filter with any
 * deterministic scalar expression over joins (inner, outer, semi, anti; any ON condition) of base tables, and GROUP BY or global
 * aggregates with SUM, COUNT, COUNT(*), AVG, MIN and MAX, expressions over them and HAVING. A source may be
 * another materialized view: its table is captured like any table.
 */
final class ViewCompiler {
    private final SqlTree tree;
    private final Catalog catalog;
    ViewCompiler(SqlTree tree, Catalog catalog) {
        this.tree = tree;
        this.catalog = catalog;
    }

    DeltaProgram compile(String view, String sql) {
        JsonNode node = tree.parseQuery(sql);
        return new Compilation(view).compile(node);
    }

    private final class Compilation {
        private final String view;
        /** Numbers the joins of the query, so each has an id of its own. */
        private int joins;

        Compilation(String view) {
            this.view = view;
        }

        DeltaProgram compile(JsonNode node) {
            if ("SET_OPERATION_NODE".equals(node.path("type").asText())) {
                return union(node);
            }
            checkQueryShape(node);
            Source source = source(node);
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

        /** UNION ALL of projections keeps every branch's rows; UNION keeps each row once. */
        private DeltaProgram union(JsonNode node) {
            String setop = node.path("setop_type").asText();
            if (!"UNION".equals(setop)) {
                throw Refusal.unsupported(view, setop.replace('_', ' '),
                        "create one materialized view per branch and combine them when reading");
            }
            checkModifiers(node);
            if (node.path("cte_map").path("map").size() > 0) {
                throw Refusal.unsupported(view, "WITH (a common table expression)",
                        "write the view as SELECTs with joins over base tables");
            }
            List<Branch> branches = new ArrayList<>();
            for (JsonNode child : node.path("children")) {
                if (!"SELECT_NODE".equals(child.path("type").asText())) {
                    throw Refusal.unsupported(view, "a UNION mixing UNION ALL and UNION, or EXCEPT/INTERSECT inside it",
                            "one materialized view per kind of set operation");
                }
                checkQueryShape(child);
                Source source = source(child);
                List<JsonNode> select = expandStars(child.path("select_list"), source);
                if (distinct(child) || child.path("group_expressions").size() > 0 || present(child.path("having"))
                        || select.stream().anyMatch(this::containsAggregate)) {
                    throw Refusal.unsupported(view, "a UNION branch with DISTINCT, GROUP BY or aggregates",
                            "one materialized view per aggregated branch; UNION branches must be projections and filters");
                }
                branches.add(new Branch(source, printed(select)));
            }
            return node.path("setop_all").asBoolean(false) ? new ProjectionProgram(branches) : distinctRows(branches);
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

        /** The FROM and WHERE of one SELECT. */
        private Source source(JsonNode node) {
            List<TableOccurrence> occurrences = new ArrayList<>();
            FromNode from = from(node.path("from_table"), occurrences);
            Optional<String> where = Optional.empty();
            if (present(node.path("where_clause"))) {
                inspect(node.path("where_clause"), false);
                where = Optional.of(tree.print(node.path("where_clause")));
            }
            return new Source(from, occurrences, where);
        }

        private DeltaProgram aggregate(Source source, JsonNode node, List<JsonNode> select, List<JsonNode> groups,
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
                if (call.path("distinct").asBoolean(false)) {
                    throw Refusal.unsupported(view, name + "(DISTINCT ...)",
                            "group by the argument in the view and aggregate the distinct values when reading it");
                }
                Optional<String> filter = Optional.empty();
                if (present(call.path("filter"))) {
                    inspect(call.path("filter"), false);
                    filter = Optional.of(tree.print(call.path("filter")));
                }
                if (call.path("order_bys").path("orders").size() > 0) {
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
                    default -> throw Refusal.unsupported(view, "the aggregate " + name + "()",
                            "the maintained aggregates are SUM, COUNT, COUNT(*), AVG, MIN and MAX; compute "
                                    + name + "() in the query that reads the view, or in a plain DuckDB view");
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
                for (AggregateSlot slot : all) {
                    if (slot.kind() == kind && slot.argument().equals(argument)) {
                        return slot;
                    }
                }
                AggregateSlot slot = new AggregateSlot(kind, argument, all.size());
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
            if (node.path("cte_map").path("map").size() > 0) {
                throw Refusal.unsupported(view, "WITH (a common table expression)",
                        "write the view as one SELECT with joins over base tables");
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
                    case "ORDER_MODIFIER" -> throw Refusal.unsupported(view, "ORDER BY",
                            "a view is an unordered bag of rows; order in the query that reads it");
                    default -> throw Refusal.unsupported(view, "LIMIT or OFFSET",
                            "apply the LIMIT in the query that reads the view");
                }
            }
        }

        private FromNode from(JsonNode table, List<TableOccurrence> occurrences) {
            String type = table.path("type").asText();
            return switch (type) {
                case "BASE_TABLE" -> baseTable(table, occurrences);
                case "JOIN" -> join(table, occurrences);
                case "SUBQUERY" -> throw Refusal.unsupported(view, "a subquery in FROM",
                        "join the base tables directly in the view's SELECT");
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
            if (present(table.path("sample")) || present(table.path("at_clause"))) {
                throw Refusal.unsupported(view, "TABLESAMPLE or AT (time travel) on " + written, "read the table plainly");
            }
            if (table.path("column_name_alias").size() > 0) {
                throw Refusal.unsupported(view, "column aliases on the table " + written,
                        "alias the columns in the SELECT list instead");
            }
            String database = table.path("catalog_name").asText("");
            if (!database.isEmpty() && !database.equalsIgnoreCase(catalog.currentDatabase())) {
                throw Refusal.unsupported(view, "the table " + database + "." + written + " of an ATTACHed database",
                        "define the view over tables of the database the view lives in");
            }
            String schema = table.path("schema_name").asText("");
            if (schema.isEmpty()) {
                schema = catalog.currentSchema();
            }
            if (schema.equalsIgnoreCase(TableName.VIEWS_SCHEMA)) {
                throw Refusal.unsupported(view, "Mallard's own table " + written, "define the view over your tables");
            }
            String finalSchema = schema;
            TableName name = catalog.table(schema, written).orElseThrow(() -> catalog.isView(finalSchema, written)
                    ? Refusal.unsupported(view, "the DuckDB view " + written + " as a source",
                            "define the materialized view over the tables the view reads")
                    : new MallardException(ErrorCode.USER_SQL_INVALID, "materialized view " + view
                            + ": no table " + finalSchema + "." + written + " (temporary tables cannot be sources)"));
            List<String> columns = catalog.columns(name);
            if (columns.stream().anyMatch(c -> c.equalsIgnoreCase(Source.WEIGHT))) {
                throw Refusal.unsupported(view, "the column " + Source.WEIGHT + " of " + name,
                        "rename it: Mallard's delta logs use that name for the weight");
            }
            String alias = table.path("alias").asText("");
            occurrences.add(new TableOccurrence(name, alias.isEmpty() ? written : alias, columns));
            return new FromNode.Mention(occurrences.size() - 1);
        }

        private List<JsonNode> expandStars(JsonNode selectList, Source source) {
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
                            expanded.add(tree.parseExpression(Sql.quote(occurrence.alias()) + "." + Sql.quote(column)));
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

        private boolean containsAggregate(JsonNode node) {
            if (node.has("class") && "FUNCTION".equals(node.path("class").asText())
                    && catalog.isAggregate(node.path("function_name").asText())) {
                return true;
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
                case "SUBQUERY" -> throw Refusal.unsupported(view, "a subquery (IN, EXISTS or scalar)",
                        "rewrite it as an inner join with the table it reads");
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
}
