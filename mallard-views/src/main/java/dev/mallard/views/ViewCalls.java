// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlText;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The {@code dbsp_*} calls of a SELECT, run by the front door on the caller's own thread before the statement and
 * replaced in DuckDB's parse tree by what they returned: a scalar call by a constant, a table function by a subquery
 * of its rows. The statement DuckDB then runs calls no Java function, so no DuckDB worker ever waits for the views
 * (whose maintenance is one thread's at a time) while the thread that waits for the statement holds them.
 *
 * <p>A call anywhere in a SELECT (its projection, WHERE, a subquery, a CTE) is run this way when its arguments are
 * constant expressions; a call whose arguments depend on rows ({@code dbsp_create_view('v' || range, ...) FROM
 * range(2, 4)}), a call inside {@code query('...')}/{@code query_table}, and {@code dbsp_changes} anywhere but as the
 * whole statement are refused with {@code user.view.call_placement}, before DuckDB runs anything.
 */
final class ViewCalls {
    /** Functions that return one value; each has a table spelling too ({@code SELECT * FROM dbsp_sync()}). */
    private static final Set<String> SCALARS = Set.of("dbsp_sync", "dbsp_auto_sync", "dbsp_create_view", "dbsp_drop_view",
            "dbsp_drop_view_cascade", "dbsp_drop", "dbsp_drop_cascade", "dbsp_track", "dbsp_untrack", "dbsp_save", "dbsp_load",
            "dbsp_autopersist", "dbsp_spill", "dbsp_parallel", "dbsp_timing", "dbsp_recursion_limit");
    /** Functions that return rows. */
    private static final Set<String> TABLES = Set.of("dbsp_stats", "dbsp_query", "dbsp_check", "dbsp_changes");
    /** DuckDB's table functions that run SQL given as text. */
    private static final Set<String> RUNS_TEXT = Set.of("query", "query_table");

    private final MaterializedViews views;
    private final ViewSql front;

    ViewCalls(MaterializedViews views, ViewSql front) {
        this.views = views;
        this.front = front;
    }

    static Set<String> functionNames() {
        Set<String> names = new TreeSet<>(SCALARS);
        names.addAll(TABLES);
        return Collections.unmodifiableSet(names);
    }

    /** Whether a word of the text (not a comment) names a {@code dbsp_} function, or a string holds such a name. */
    static boolean mentionsViewFunction(List<SqlTokens.Token> tokens) {
        for (SqlTokens.Token token : tokens) {
            String value = token.value().toLowerCase(Locale.ROOT);
            if ((token.kind() == SqlTokens.Kind.WORD || token.kind() == SqlTokens.Kind.QUOTED) && value.startsWith("dbsp_")
                    || token.kind() == SqlTokens.Kind.STRING && value.contains("dbsp_")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Runs the statement's view calls and then the statement without them; empty when the text is not one SELECT
     * that calls a view function (DuckDB runs it as it is).
     */
    Optional<ViewSql.Result> run(String sql) {
        JsonNode tree = views.parseTree(sql);
        if (tree == null) {
            return Optional.empty(); // Not a SELECT: DuckDB runs it (and knows no dbsp_* function of its own).
        }
        JsonNode statements = tree.path("statements");
        List<JsonNode> found = new ArrayList<>();
        statements.forEach(statement -> collect(statement, found));
        if (found.isEmpty()) {
            return Optional.empty();
        }
        if (statements.size() != 1) {
            throw placement("a text of " + statements.size() + " statements", "run each statement on its own");
        }
        Optional<ViewSql.Result> changes = wholeChanges(statements.get(0).path("node"));
        if (changes.isPresent()) {
            return changes;
        }
        ObjectNode copy = (ObjectNode) tree.deepCopy();
        replace(copy.path("statements").get(0), false);
        String rewritten = Sql.strings(views.connection(), "SELECT json_deserialize_sql(?::JSON)", copy.toString()).get(0);
        return Optional.of(front.rows(rewritten));
    }

    /** {@code SELECT * FROM dbsp_changes('v')}, the one form of it: the rows live on the views' own connection. */
    private Optional<ViewSql.Result> wholeChanges(JsonNode node) {
        JsonNode from = node.path("from_table");
        if (!"TABLE_FUNCTION".equals(from.path("type").asText())
                || !"dbsp_changes".equalsIgnoreCase(from.path("function").path("function_name").asText())) {
            return Optional.empty();
        }
        boolean bare = node.path("select_list").size() == 1 && "STAR".equals(node.path("select_list").get(0).path("class").asText())
                && node.path("where_clause").isNull() && node.path("modifiers").isEmpty()
                && node.path("group_expressions").isEmpty() && node.path("cte_map").path("map").isEmpty();
        if (!bare) {
            return Optional.empty(); // Refused as it is found in the tree.
        }
        List<String> arguments = arguments(from.path("function"), "dbsp_changes", 1);
        ResultSet rows = views.changes(arguments.get(0));
        try {
            return Optional.of(ViewSql.Result.of(rows.getStatement(), rows));
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "reading the changes failed: " + e.getMessage(), e);
        }
    }

    /** Every view-function call of the tree (scalar and table functions), and refuses those inside SQL given as text. */
    private void collect(JsonNode node, List<JsonNode> found) {
        if (node.isObject()) {
            if ("FUNCTION".equals(node.path("class").asText()) && isViewFunction(node.path("function_name").asText())) {
                found.add(node);
            }
            if ("TABLE_FUNCTION".equals(node.path("type").asText())) {
                JsonNode function = node.path("function");
                String name = function.path("function_name").asText().toLowerCase(Locale.ROOT);
                if (isViewFunction(name)) {
                    found.add(node);
                } else if (RUNS_TEXT.contains(name)) {
                    refuseCallsInText(function);
                }
            }
        }
        node.forEach(child -> collect(child, found));
    }

    private void refuseCallsInText(JsonNode function) {
        for (JsonNode argument : function.path("arguments")) {
            JsonNode expression = argument.path("expression");
            JsonNode literal = expression.path("literal");
            if ("CONSTANT".equals(expression.path("class").asText()) && "STRING".equals(literal.path("kind").asText())) {
                JsonNode inner = views.parseTree(literal.path("text").asText());
                if (inner != null) {
                    List<JsonNode> found = new ArrayList<>();
                    collect(inner, found);
                    if (!found.isEmpty()) {
                        throw placement("a dbsp_* function inside query('...')",
                                "call it at the top level of the statement (SELECT * FROM dbsp_stats(), SELECT dbsp_sync())");
                    }
                }
            }
        }
    }

    private static boolean isViewFunction(String name) {
        String lower = name.toLowerCase(Locale.ROOT);
        return SCALARS.contains(lower) || TABLES.contains(lower);
    }

    /** Replaces each call under {@code node} by its result, running the calls in the order the tree holds them. */
    private void replace(JsonNode node, boolean selectList) {
        if (node.isArray()) {
            ArrayNode array = (ArrayNode) node;
            for (int i = 0; i < array.size(); i++) {
                JsonNode child = array.get(i);
                JsonNode replacement = replacement(child, selectList);
                if (replacement != null) {
                    array.set(i, replacement);
                } else {
                    replace(child, false);
                }
            }
            return;
        }
        if (!node.isObject()) {
            return;
        }
        ObjectNode object = (ObjectNode) node;
        List<String> fields = new ArrayList<>();
        object.fieldNames().forEachRemaining(fields::add);
        for (String field : fields) {
            JsonNode child = object.get(field);
            JsonNode replacement = child.isObject() ? replacement(child, false) : null;
            if (replacement != null) {
                object.set(field, replacement);
            } else {
                replace(child, field.equals("select_list"));
            }
        }
    }

    /** The node that takes a call's place, or null when {@code node} is no view call. */
    private JsonNode replacement(JsonNode node, boolean inSelectList) {
        if ("FUNCTION".equals(node.path("class").asText()) && isViewFunction(node.path("function_name").asText())) {
            String name = node.path("function_name").asText().toLowerCase(Locale.ROOT);
            if (!SCALARS.contains(name)) {
                throw placement(name + "() as a value", "read it as a table: SELECT * FROM " + name + "(...)");
            }
            String value = scalar(name, node, false);
            JsonNode constant = views.parseTree("SELECT " + value).path("statements").get(0).path("node").path("select_list").get(0);
            ObjectNode copy = (ObjectNode) constant.deepCopy();
            String alias = node.path("alias").asText();
            copy.put("alias", !alias.isEmpty() ? alias : inSelectList ? name : "");
            return copy;
        }
        if ("TABLE_FUNCTION".equals(node.path("type").asText()) && isViewFunction(node.path("function").path("function_name").asText())) {
            JsonNode function = node.path("function");
            String name = function.path("function_name").asText().toLowerCase(Locale.ROOT);
            String rows = SCALARS.contains(name) ? "SELECT " + scalar(name, function, true) + " AS result" : table(name, function);
            JsonNode from = views.parseTree("SELECT * FROM (" + rows + ") AS " + name).path("statements").get(0)
                    .path("node").path("from_table");
            ObjectNode copy = (ObjectNode) from.deepCopy();
            if (!node.path("alias").asText().isEmpty()) {
                copy.put("alias", node.path("alias").asText());
            }
            if (!node.path("column_name_alias").isEmpty()) {
                copy.set("column_name_alias", node.path("column_name_alias").deepCopy());
            }
            return copy;
        }
        return null;
    }

    /**
     * Runs a scalar view function; its result as a typed SQL literal. The status strings are the seed's
     * ({@link ViewStatus}); {@code asTable}: the spelling {@code SELECT * FROM f(...)}, where {@code dbsp_sync()} answers
     * the seed's string instead of Mallard's count of view rows changed.
     */
    private String scalar(String name, JsonNode function, boolean asTable) {
        switch (name) {
            case "dbsp_sync" -> {
                List<String> arguments = arguments(function, name, 0, 1);
                if (arguments.isEmpty()) {
                    long rows = views.sync();
                    return asTable ? SqlText.literal(ViewStatus.syncedAll()) : rows + "::BIGINT";
                }
                String table = arguments.get(0);
                views.requireTracked(table);
                views.sync();
                return SqlText.literal(ViewStatus.synced(table));
            }
            case "dbsp_auto_sync" -> {
                List<String> arguments = arguments(function, name, 0, 1);
                if (arguments.isEmpty()) {
                    return SqlText.literal(ViewStatus.autoSyncIs(front.autoSync()));
                }
                boolean value = ViewStatus.bool(name, arguments.get(0));
                front.autoSync(value);
                if (value) {
                    views.sync();
                }
                return SqlText.literal(ViewStatus.autoSync(value));
            }
            case "dbsp_create_view" -> {
                List<String> arguments = arguments(function, name, 2, 2);
                views.createView(arguments.get(0), arguments.get(1));
                return SqlText.literal(ViewStatus.created(arguments.get(0), views.sources(arguments.get(0))));
            }
            case "dbsp_drop_view", "dbsp_drop" -> {
                views.dropView(arguments(function, name, 1, 1).get(0));
                return SqlText.literal(ViewStatus.dropped());
            }
            case "dbsp_drop_view_cascade", "dbsp_drop_cascade" -> {
                String view = arguments(function, name, 1, 1).get(0);
                return SqlText.literal(ViewStatus.droppedCascade(view, views.dropViewCascade(view)));
            }
            case "dbsp_track" -> {
                String table = arguments(function, name, 1, 1).get(0);
                String tracked = views.track(table);
                return SqlText.literal(ViewStatus.tracking(table, views.columnCount(tracked)));
            }
            case "dbsp_untrack" -> {
                return String.valueOf(views.untrack(arguments(function, name, 1, 1).get(0)));
            }
            case "dbsp_save" -> {
                List<String> arguments = arguments(function, name, 0, 1);
                if (arguments.isEmpty()) {
                    return SqlText.literal(ViewStatus.savedInDatabase(views.names().size()));
                }
                int saved = views.save(ViewStatus.relativePath(name, arguments.get(0)));
                return SqlText.literal(ViewStatus.savedToFile(arguments.get(0), saved));
            }
            case "dbsp_load" -> {
                List<String> arguments = arguments(function, name, 0, 2);
                if (arguments.isEmpty()) {
                    return SqlText.literal(ViewStatus.loadedFromDatabase(views.names().size()));
                }
                if (arguments.size() == 2 && !arguments.get(1).equalsIgnoreCase("json")) {
                    throw new MallardException(ErrorCode.USER_SQL_INVALID, "dbsp_load's second argument is the format, "
                            + "which must be 'json', got " + arguments.get(1));
                }
                int loaded = views.load(ViewStatus.relativePath(name, arguments.get(0)));
                return SqlText.literal(ViewStatus.loadedFromFile(arguments.get(0), loaded));
            }
            case "dbsp_autopersist" -> {
                List<String> arguments = arguments(function, name, 0, 1);
                if (arguments.isEmpty()) {
                    return SqlText.literal(ViewStatus.autopersistIs(front.autopersist()));
                }
                boolean value = ViewStatus.bool(name, arguments.get(0));
                front.autopersist(value);
                return SqlText.literal(ViewStatus.autopersist(value));
            }
            case "dbsp_spill" -> {
                List<String> arguments = arguments(function, name, 0, 1);
                if (arguments.isEmpty()) {
                    return SqlText.literal(ViewStatus.spillIs(views.spillBytes()));
                }
                views.spill(ViewStatus.bytes(arguments.get(0)));
                return SqlText.literal(ViewStatus.spill(views.spillBytes()));
            }
            case "dbsp_parallel" -> {
                List<String> arguments = arguments(function, name, 0, 1);
                if (arguments.isEmpty()) {
                    return SqlText.literal(ViewStatus.parallelIs(views.parallelism()));
                }
                views.parallel(ViewStatus.threads(arguments.get(0)));
                return SqlText.literal(ViewStatus.parallel(views.parallelism()));
            }
            case "dbsp_timing" -> {
                List<String> arguments = arguments(function, name, 0, 1);
                if (arguments.isEmpty()) {
                    return SqlText.literal(ViewStatus.timingIs(views.timing()));
                }
                views.timing(ViewStatus.bool(name, arguments.get(0)));
                return SqlText.literal(ViewStatus.timing(views.timing()));
            }
            case "dbsp_recursion_limit" -> {
                List<String> arguments = arguments(function, name, 0, 2);
                if (arguments.size() == 1) {
                    throw new MallardException(ErrorCode.USER_SQL_INVALID, "dbsp_recursion_limit takes no argument (to "
                            + "read it) or two: rounds and seconds, e.g. dbsp_recursion_limit(10000, 60)");
                }
                if (arguments.size() == 2) {
                    try {
                        views.recursionLimit(Long.parseLong(arguments.get(0).trim()),
                                java.time.Duration.ofSeconds(Long.parseLong(arguments.get(1).trim())));
                    } catch (NumberFormatException e) {
                        throw new MallardException(ErrorCode.USER_SQL_INVALID, "dbsp_recursion_limit takes whole numbers: "
                                + "rounds and seconds, got " + arguments, e);
                    }
                }
                return SqlText.literal(ViewStatus.recursionLimit(views.recursionRounds(), views.recursionTime().toSeconds()));
            }
            default -> throw new MallardException(ErrorCode.SYSTEM_INTERNAL, "no scalar view function " + name);
        }
    }

    /** Runs a view table function; a query of its rows. */
    private String table(String name, JsonNode function) {
        switch (name) {
            case "dbsp_stats" -> {
                arguments(function, name, 0);
                List<String> rows = new ArrayList<>();
                for (SqlFunctions.Metric metric : SqlFunctions.metrics(views.stats())) {
                    rows.add("(" + SqlText.literal(metric.name()) + ", " + metric.value() + "::BIGINT, " + SqlText.literal(metric.detail()) + ")");
                }
                return "SELECT * FROM (VALUES " + String.join(", ", rows) + ") AS s(metric, value, detail)";
            }
            case "dbsp_query" -> {
                String view = arguments(function, name, 1).get(0);
                // After the sync, which may have broken the view (its database detached) or brought it back.
                views.syncAfterWrite();
                views.definition(view);
                return "SELECT * FROM " + SqlText.identifier(view);
            }
            case "dbsp_check" -> {
                arguments(function, name, 0);
                views.reconcile();
                List<String> rows = new ArrayList<>();
                for (String view : views.names()) {
                    long differing = views.check(view);
                    if (differing > 0) {
                        views.refresh(view); // Repaired; the row reports what differed.
                    }
                    rows.add("(" + SqlText.literal(view) + ", " + differing + "::BIGINT)");
                }
                return rows.isEmpty() ? "SELECT NULL::VARCHAR AS view, NULL::BIGINT AS differing_rows WHERE false"
                        : "SELECT * FROM (VALUES " + String.join(", ", rows) + ") AS c(view, differing_rows)";
            }
            default -> throw placement("dbsp_changes('v') inside a larger query",
                    "run SELECT * FROM dbsp_changes('v') on its own (its rows live on the views' connection)");
        }
    }

    /**
     * The call's arguments as text, each a constant expression (evaluated by DuckDB); a call whose arguments read rows,
     * columns or subqueries is refused, since it would have to run once per row inside DuckDB.
     */
    private List<String> arguments(JsonNode function, String name, int count) {
        return arguments(function, name, count, count);
    }

    private List<String> arguments(JsonNode function, String name, int least, int most) {
        JsonNode arguments = function.path("arguments");
        int count = arguments.size();
        if (count < least || count > most) {
            String wanted = least == most ? String.valueOf(least) : least + " to " + most;
            throw new MallardException(ErrorCode.USER_SQL_INVALID, name + " takes " + wanted + " argument"
                    + (most == 1 ? "" : "s") + ", got " + count);
        }
        List<String> values = new ArrayList<>();
        for (JsonNode argument : arguments) {
            JsonNode expression = argument.has("expression") ? argument.path("expression") : argument;
            if (!constant(expression)) {
                throw placement(name + " with an argument that is not a constant",
                        "call it at the top level with constant arguments, e.g. SELECT " + name + "("
                                + (count == 0 ? "" : count == 1 ? "'v'" : "'v', 'SELECT ...'") + "), once per view");
            }
            JsonNode literal = expression.path("literal");
            if ("CONSTANT".equals(expression.path("class").asText()) && "STRING".equals(literal.path("kind").asText())) {
                values.add(literal.path("text").asText());
            } else {
                values.add(Sql.strings(views.connection(), "SELECT (" + views.printExpression(expression) + ")::VARCHAR").get(0));
            }
        }
        return values;
    }

    /** Whether an expression's value depends on nothing but itself: no column, subquery, parameter or star. */
    private static boolean constant(JsonNode node) {
        if (node.isObject()) {
            String kind = node.path("class").asText();
            if (List.of("COLUMN_REF", "SUBQUERY", "PARAMETER", "STAR", "LAMBDA", "WINDOW", "LAMBDA_REF").contains(kind)) {
                return false;
            }
            if ("FUNCTION".equals(kind) && isViewFunction(node.path("function_name").asText())) {
                return false;
            }
        }
        for (JsonNode child : node) {
            if (!constant(child)) {
                return false;
            }
        }
        return true;
    }

    private static MallardException placement(String what, String instead) {
        return new MallardException(ErrorCode.USER_VIEW_CALL_PLACEMENT, what + " cannot run: view functions run on "
                + "the caller's thread before the statement, never inside DuckDB; " + instead);
    }
}
