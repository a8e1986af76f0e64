// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.rls;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlText;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.concurrent.ConcurrentHashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Rewrites one SQL text on DuckDB's parse tree so that it reads only what a token's grants allow, and refuses
 * whatever it does not know. Every base-table reference, wherever it stands (FROM, a JOIN arm, a subquery in any
 * clause, a CTE, a set operation's branch, a lateral join), becomes a derived table that reads the resolved,
 * fully qualified table with the grant's filter; a view, or a materialized view, is replaced by its defining
 * query, rewritten the same way, so it never reads a table unfiltered. Under {@link Mode#RESTRICTED} the one
 * granted datasource is the only thing a statement may read; under {@link Mode#RESTRICT_READ_ONLY} a table no
 * grant names reads as empty, and table functions are refused. A grant with a projection other than {@code *} exposes
 * only those columns: its derived table selects them alone (its filter still reads every column), and a column
 * reference naming one it leaves out is refused with {@code No access to column ...}.
 *
 * <p>Fails closed: a statement that is not one SELECT, a query node, table reference or expression class not
 * listed here, a macro or user-defined function (which could read tables inside), or a view nested deeper than
 * {@link #MAX_VIEW_DEPTH} is refused with a coded error, never passed through.
 */
final class RowFilterRewriter {
    /** The rewriter's modes, named as the server's access modes. */
    enum Mode { RESTRICTED, RESTRICT_READ_ONLY }

    static final int MAX_VIEW_DEPTH = 16;
    /** The alias the filtered derived table gives the table it reads; the filter's columns are qualified with it. */
    static final String ROW_ALIAS = "__mallard_rls_row";

    private static final Set<String> QUERY_NODES = Set.of("SELECT_NODE", "SET_OPERATION_NODE", "RECURSIVE_CTE_NODE");
    private static final Set<String> TABLE_REFS = Set.of("BASE_TABLE", "JOIN", "SUBQUERY", "TABLE_FUNCTION", "EXPRESSION_LIST", "EMPTY",
            "PIVOT", "SHOW_REF", "COLUMN_DATA", "DELIM_GET", "BOUND_TABLE_REF", "CTE");
    private static final Set<String> EXPRESSIONS = Set.of("COLUMN_REF", "CONSTANT", "FUNCTION", "OPERATOR", "COMPARISON", "CONJUNCTION",
            "CASE", "CAST", "BETWEEN", "SUBQUERY", "WINDOW", "STAR", "PARAMETER", "LAMBDA", "COLLATE", "POSITIONAL_REFERENCE", "LAMBDA_REF",
            "DEFAULT", "TYPE");
    /** Keys that hold a query or a table wherever they stand; met outside the places handled, they are refused. */
    private static final Set<String> READING_KEYS = Set.of("node", "query_node", "from_table", "subquery", "table_name", "source", "cte_map");
    /** DuckDB's file readers, the table functions a {@code path} grant admits. */
    private static final Set<String> FILE_READERS = Set.of("read_parquet", "parquet_scan", "read_csv", "read_csv_auto", "read_json",
            "read_json_auto", "read_ndjson", "read_ndjson_auto", "read_json_objects", "read_ndjson_objects", "read_text", "read_blob");

    /**
     * The named parameters of a file reader RESTRICTED admits: each only says how the files named by the (checked)
     * path are read. Anything else (a rejects table that is written, an encryption key, ...) is refused: fail closed.
     */
    private static final Set<String> FORMAT_OPTIONS = Set.of("hive_partitioning", "hive_types", "hive_types_autocast", "union_by_name", "filename",
            "file_row_number", "binary_as_string", "header", "delim", "sep", "quote", "escape", "new_line", "columns", "types", "dtypes", "names",
            "column_names", "auto_detect", "sample_size", "all_varchar", "dateformat", "timestampformat", "nullstr", "skip", "compression",
            "normalize_names", "null_padding", "allow_quoted_nulls", "comment", "decimal_separator", "format", "records", "maximum_depth",
            "maximum_object_size");

    private final Mode mode;
    private final RlsClaims claims;
    private final CatalogCache catalogCache;
    private volatile CatalogSnapshot.SessionDefaults sessionDefaults;
    /** The session's part of every cache key, made with {@link #sessionDefaults}. */
    private volatile RewriteCache.Context context;
    private volatile ParseTree parser;
    private volatile JsonNode falseWhere;
    /** Parsed once per session: SQL texts the rewriter made itself, a grant's table name, a grant's filter. */
    private final Map<String, ObjectNode> templates = new ConcurrentHashMap<>();
    private final Map<String, List<String>> grantNames = new ConcurrentHashMap<>();
    private final Map<AccessGrant, Optional<JsonNode>> filters = new ConcurrentHashMap<>();
    /** A grant's projected column names, as written, read once from DuckDB's parse tree of {@code SELECT <projection>}. */
    private final Map<AccessGrant, List<String>> projections = new ConcurrentHashMap<>();

    RowFilterRewriter(Mode mode, RlsClaims claims, CatalogCache catalogCache) {
        this.mode = requireNonNull(mode, "mode is null");
        this.claims = requireNonNull(claims, "claims is null");
        this.catalogCache = requireNonNull(catalogCache, "catalogCache is null");
        if (claims.grants().isEmpty()) {
            throw RlsClaims.invalid("the token grants no datasource; " + mode + " needs " + RlsClaims.ACCESS + " (or the legacy "
                    + RlsClaims.TABLE + "/" + RlsClaims.PATH + " with " + RlsClaims.FILTER + ")");
        }
        if (mode == Mode.RESTRICTED && claims.fromAccess() && claims.grants().size() != 1) {
            throw RlsClaims.invalid("RESTRICTED mode takes exactly one entry in " + RlsClaims.ACCESS + "; the token gives " + claims.grants().size());
        }
        if (mode == Mode.RESTRICT_READ_ONLY) {
            if (!claims.fromAccess() && claims.grants().stream().anyMatch(grant -> grant.filter().isEmpty())) {
                throw RlsClaims.invalid("RESTRICT_READ_ONLY needs a row filter: give " + RlsClaims.FILTER + " with " + RlsClaims.TABLE
                        + ", or use " + RlsClaims.ACCESS);
            }
            for (AccessGrant grant : claims.grants()) {
                if (grant.kind() != AccessGrant.Kind.TABLE) {
                    throw RlsClaims.invalid("RESTRICT_READ_ONLY takes table grants only, and " + RlsClaims.ACCESS + " grants "
                            + grant.kind().name().toLowerCase(Locale.ROOT) + " " + grant.name());
                }
            }
        }
    }

    /**
     * The text to run in place of {@code sql}.
     *
     * @throws MallardException {@code user.access.denied} for what the grants do not allow ({@code No access to ...}),
     *     {@code user.access.statement_unsupported} for what the rewriter does not know, {@code user.sql.invalid} when
     *     the text does not parse
     */
    String rewrite(Connection connection, String sql) throws SQLException {
        requireNonNull(sql, "sql is null");
        ParseTree parser = parser(connection);
        RewriteCache.Context session = context;
        if (session == null) {
            sessionDefaults = CatalogSnapshot.SessionDefaults.read(connection);
            session = new RewriteCache.Context(mode, claims, sessionDefaults);
            context = session;
        }
        // Shared by the sessions of this catalog; the key holds all the rewrite depends on (see RewriteCache).
        RewriteCache cache = catalogCache.rewrites();
        RewriteCache.Key key = new RewriteCache.Key(session, sql);
        Optional<String> known = cache.find(key);
        if (known.isPresent()) {
            return known.get();
        }
        JsonNode tree = parser.serialize(sql);
        ObjectNode statement = statement(tree);
        ObjectNode rewritten = cache.shapes() ? throughShape(connection, parser, statement) : rewritten(connection, parser, statement);
        ((ArrayNode) tree.get("statements")).set(0, rewritten);
        String result = parser.deserialize(tree);
        cache.put(key, result);
        return result;
    }

    /** The session's connection's parse tree calls, prepared once (a session keeps its connection). */
    private ParseTree parser(Connection connection) {
        ParseTree current = parser;
        if (current == null || !current.on(connection)) {
            current = new ParseTree(connection);
            parser = current;
        }
        return current;
    }

    /** The one statement of a text's tree, or the refusal of a text that is not one SELECT. */
    private ObjectNode statement(JsonNode tree) {
        if (tree.path("error").asBoolean(false)) {
            if (tree.path("error_type").asText("").equals("parser")) {
                throw new MallardException(ErrorCode.USER_SQL_INVALID, tree.path("error_message").asText("the statement does not parse"));
            }
            throw new MallardException(ErrorCode.USER_ACCESS_DENIED, "this server is " + mode + ": it runs one SELECT per request (set"
                    + " operations, CTEs and subqueries included), and DuckDB's parser found another kind of statement");
        }
        JsonNode statements = tree.path("statements");
        if (!statements.isArray() || statements.size() != 1) {
            throw new MallardException(ErrorCode.USER_ACCESS_DENIED, "this server is " + mode + ": send one statement per request, not "
                    + statements.size());
        }
        return (ObjectNode) statements.get(0);
    }

    /**
     * The statement rewritten through its shape: the shape's rewrite as the cache keeps it, or made now (on the shape,
     * so it sees no constant) and kept; then this statement's constants put back into it.
     */
    private ObjectNode throughShape(Connection connection, ParseTree parser, ObjectNode statement) throws SQLException {
        Optional<StatementShape> shape = StatementShape.of(statement);
        if (shape.isEmpty()) {
            return rewritten(connection, parser, statement);
        }
        RewriteCache.Key key = new RewriteCache.Key(context, shape.get().key());
        Optional<ObjectNode> template = catalogCache.rewrites().findShape(key);
        ObjectNode rewritten;
        if (template.isPresent()) {
            rewritten = template.get().deepCopy();
        } else {
            rewritten = rewritten(connection, parser, shape.get().masked());
            catalogCache.rewrites().putShape(key, rewritten.deepCopy(), rewritten.toString().length());
        }
        return shape.get().fill(rewritten);
    }

    /** One statement's tree rewritten, in place. */
    private ObjectNode rewritten(Connection connection, ParseTree parser, ObjectNode statement) throws SQLException {
        known(statement, "statement", Set.of("node", "named_param_map"));
        Pass pass = new Pass(connection, parser, CatalogSnapshot.read(connection, claims.database(), claims.schema(), catalogCache, sessionDefaults));
        statement.set("node", pass.query(statement.get("node"), Scope.EMPTY, 0));
        return statement;
    }

    /** The CTE names visible at a place of a query: a bare table name among them reads the CTE, not a table. */
    private record Scope(Set<String> ctes) {
        static final Scope EMPTY = new Scope(Set.of());

        Scope with(String name) {
            Set<String> more = new HashSet<>(ctes);
            more.add(name.toLowerCase(Locale.ROOT));
            return new Scope(Set.copyOf(more));
        }

        boolean has(String name) {
            return ctes.contains(name.toLowerCase(Locale.ROOT));
        }
    }

    /** One statement's rewrite: the catalog as of now, and the trees made from it. */
    private final class Pass {
        private final Connection connection;
        private final ParseTree parser;
        private final CatalogSnapshot catalog;
        /**
         * Columns a projected grant's datasource has and its projection leaves out (lower case), with the datasource:
         * a column reference naming one is refused with {@code No access to column ...} rather than left to fail to bind.
         */
        private final Map<String, String> hidden = new java.util.HashMap<>();

        Pass(Connection connection, ParseTree parser, CatalogSnapshot catalog) {
            this.connection = connection;
            this.parser = parser;
            this.catalog = catalog;
        }

        JsonNode query(JsonNode node, Scope scope, int depth) throws SQLException {
            if (!(node instanceof ObjectNode object)) {
                throw unsupported("a query that is not a query node");
            }
            String type = object.path("type").asText("");
            Scope inner = ctes(object, scope, depth);
            switch (type) {
                case "SELECT_NODE" -> {
                    known(object, type, Set.of("type", "modifiers", "cte_map", "select_list", "from_table", "where_clause", "group_expressions",
                            "group_sets", "aggregate_handling", "having", "sample", "qualify"));
                    object.set("from_table", table(object.get("from_table"), inner, depth));
                    for (String key : List.of("modifiers", "select_list", "where_clause", "group_expressions", "group_sets", "having", "sample",
                            "qualify")) {
                        scan(object.get(key), inner, depth);
                    }
                }
                case "SET_OPERATION_NODE" -> {
                    known(object, type, Set.of("type", "modifiers", "cte_map", "setop_type", "left", "right", "setop_all", "children"));
                    for (String key : List.of("left", "right")) {
                        if (object.hasNonNull(key)) {
                            object.set(key, query(object.get(key), inner, depth));
                        }
                    }
                    if (object.has("children")) {
                        ArrayNode children = (ArrayNode) object.get("children");
                        for (int i = 0; i < children.size(); i++) {
                            children.set(i, query(children.get(i), inner, depth));
                        }
                    }
                    scan(object.get("modifiers"), inner, depth);
                }
                case "RECURSIVE_CTE_NODE" -> {
                    known(object, type, Set.of("type", "modifiers", "cte_map", "cte_name", "union_all", "left", "right", "aliases", "key_targets"));
                    Scope recursive = inner.with(object.path("cte_name").asText(""));
                    object.set("left", query(object.get("left"), recursive, depth));
                    object.set("right", query(object.get("right"), recursive, depth));
                    scan(object.get("modifiers"), inner, depth);
                    scan(object.get("key_targets"), inner, depth);
                }
                default -> throw unsupported("the query node " + type);
            }
            return object;
        }

        /** Rewrites a node's CTEs, each seeing the ones before it; the scope of the node's body sees them all. */
        private Scope ctes(ObjectNode node, Scope scope, int depth) throws SQLException {
            JsonNode map = node.path("cte_map").path("map");
            if (map.isMissingNode()) {
                return scope;
            }
            known((ObjectNode) node.get("cte_map"), "cte_map", Set.of("map"));
            Scope visible = scope;
            for (JsonNode entry : map) {
                known((ObjectNode) entry, "CTE", Set.of("key", "value"));
                ObjectNode value = (ObjectNode) entry.get("value");
                known(value, "CTE", Set.of("aliases", "materialized", "key_targets", "payload_aggregates", "query_node"));
                value.set("query_node", query(value.get("query_node"), visible, depth));
                scan(value.get("key_targets"), visible, depth);
                scan(value.get("payload_aggregates"), visible, depth);
                visible = visible.with(entry.path("key").asText(""));
            }
            return visible;
        }

        /** A table reference rewritten: what it reads replaced by what the grants allow. */
        JsonNode table(JsonNode ref, Scope scope, int depth) throws SQLException {
            if (!(ref instanceof ObjectNode object)) {
                throw unsupported("a FROM clause that is not a table reference");
            }
            String type = object.path("type").asText("");
            switch (type) {
                case "EMPTY" -> {
                    return object;
                }
                case "BASE_TABLE" -> {
                    return baseTable(object, scope, depth);
                }
                case "JOIN" -> {
                    known(object, type, Set.of("type", "alias", "sample", "left", "right", "condition", "join_type", "ref_type", "using_columns",
                            "delim_flipped", "duplicate_eliminated_columns", "is_implicit", "ranking_expression", "nearest_count",
                            "nearest_order_type", "nearest_approx"));
                    object.set("left", table(object.get("left"), scope, depth));
                    object.set("right", table(object.get("right"), scope, depth));
                    checkColumn(object.path("using_columns"));
                    for (String key : List.of("condition", "ranking_expression", "duplicate_eliminated_columns", "sample")) {
                        scan(object.get(key), scope, depth);
                    }
                    return object;
                }
                case "SUBQUERY" -> {
                    known(object, type, Set.of("type", "alias", "sample", "subquery", "column_name_alias"));
                    subquery((ObjectNode) object.get("subquery"), scope, depth);
                    scan(object.get("sample"), scope, depth);
                    return object;
                }
                case "EXPRESSION_LIST" -> {
                    known(object, type, Set.of("type", "alias", "sample", "expected_names", "expected_types", "values"));
                    scan(object.get("values"), scope, depth);
                    return object;
                }
                case "TABLE_FUNCTION" -> {
                    return tableFunction(object, scope, depth);
                }
                default -> throw unsupported("the table reference " + type);
            }
        }

        private void subquery(ObjectNode statement, Scope scope, int depth) throws SQLException {
            known(statement, "subquery", Set.of("node", "named_param_map"));
            statement.set("node", query(statement.get("node"), scope, depth));
        }

        private JsonNode baseTable(ObjectNode ref, Scope scope, int depth) throws SQLException {
            known(ref, "BASE_TABLE", Set.of("type", "alias", "sample", "schema_name", "table_name", "column_name_alias", "catalog_name", "at_clause",
                    "qualified_name"));
            String catalogName = ref.path("catalog_name").asText("");
            String schemaName = ref.path("schema_name").asText("");
            String tableName = ref.path("table_name").asText("");
            JsonNode path = ref.path("qualified_name").path("path");
            boolean bare = catalogName.isEmpty() && schemaName.isEmpty()
                    && (path.isMissingNode() || path.size() == 1 && path.get(0).asText().equals(tableName));
            if (bare && scope.has(tableName)) {
                return ref;
            }
            if (ref.hasNonNull("at_clause")) {
                throw unsupported("a time-travel AT clause on " + tableName);
            }
            CatalogObject object = catalog.resolve(catalogName, schemaName, tableName);
            String alias = ref.path("alias").asText("").isEmpty() ? tableName : ref.path("alias").asText();
            if (mode == Mode.RESTRICTED) {
                AccessGrant grant = grantFor(object).orElseThrow(() -> CatalogSnapshot.noAccess(object.toString()));
                if (grant.projection().isPresent()) {
                    hide(grant, viewColumns(object), object.toString());
                }
                return derived(alias, ref, filtered(fromTemplate(object.sql()), grant));
            }
            if (object.kind() != CatalogObject.Kind.TABLE) {
                if (depth >= MAX_VIEW_DEPTH) {
                    throw unsupported("views nested deeper than " + MAX_VIEW_DEPTH + " (at " + object + ")");
                }
                ObjectNode derived = derived(alias, ref, (ObjectNode) query(definition(object), Scope.EMPTY, depth + 1));
                if (ref.path("column_name_alias").isEmpty()) {
                    derived.set("column_name_alias", viewColumns(object));
                }
                return derived;
            }
            Optional<AccessGrant> grant = grantFor(object);
            ObjectNode select = fromTemplate(object.sql());
            if (grant.isPresent()) {
                if (grant.get().projection().isPresent()) {
                    hide(grant.get(), viewColumns(object), object.toString());
                }
                return derived(alias, ref, filtered(select, grant.get()));
            }
            select.set("where_clause", falseExpression());
            return derived(alias, ref, select);
        }

        /** In RESTRICTED, a table function is admitted by a path grant (a file reader under its prefix) or a function grant. */
        private JsonNode tableFunction(ObjectNode ref, Scope scope, int depth) throws SQLException {
            known(ref, "TABLE_FUNCTION", Set.of("type", "alias", "sample", "function", "column_name_alias", "with_ordinality"));
            JsonNode function = ref.path("function");
            String name = function.path("function_name").asText("");
            String written = name + "(" + arguments(function) + ")";
            if (mode == Mode.RESTRICT_READ_ONLY) {
                throw new MallardException(ErrorCode.USER_ACCESS_DENIED, "No access to " + written
                        + ": RESTRICT_READ_ONLY reads tables only, never table functions");
            }
            if (!function.path("schema").asText("").isEmpty() || !function.path("catalog").asText("").isEmpty()) {
                throw CatalogSnapshot.noAccess(written);
            }
            for (JsonNode argument : function.path("arguments")) {
                Optional<String> option = optionName(argument.path("expression"));
                if (option.isPresent()) {
                    formatOption(option.get(), argument.path("expression").path("right"), name, written);
                } else {
                    constantsOnly(argument.path("expression"), written);
                }
            }
            AccessGrant grant = claims.grants().stream().filter(candidate -> admits(candidate, name, function)).findFirst()
                    .orElseThrow(() -> CatalogSnapshot.noAccess(written));
            if (catalog.isUserFunction(name)) {
                throw unsupported("the user-defined table function " + name);
            }
            ObjectNode select = fromTemplate("(SELECT 1)");
            ObjectNode inner = ref.deepCopy();
            inner.put("alias", ROW_ALIAS);
            inner.set("column_name_alias", ref.path("column_name_alias").deepCopy());
            inner.putNull("sample");
            select.set("from_table", inner);
            if (grant.projection().isPresent()) {
                hide(grant, resultColumns(select), written);
            }
            String alias = ref.path("alias").asText("").isEmpty() ? name : ref.path("alias").asText();
            ObjectNode outer = derived(alias, ref, filtered(select, grant));
            outer.set("column_name_alias", JsonNodeFactory.instance.arrayNode());
            return outer;
        }

        private boolean admits(AccessGrant grant, String function, JsonNode call) {
            String name = function.toLowerCase(Locale.ROOT);
            return switch (grant.kind()) {
                case TABLE -> false;
                case FUNCTION -> grant.name().toLowerCase(Locale.ROOT).equals(name);
                case PATH -> FILE_READERS.contains(name) && paths(call).map(paths -> !paths.isEmpty()
                        && paths.stream().allMatch(path -> underPrefix(path, grant.name()))).orElse(false);
            };
        }

        /** The first positional argument of a file reader: a string, or a list of strings. */
        private Optional<List<String>> paths(JsonNode call) {
            JsonNode arguments = call.path("arguments");
            if (!arguments.isArray() || arguments.isEmpty() || !arguments.get(0).path("name").asText("").isEmpty()) {
                return Optional.empty();
            }
            JsonNode first = arguments.get(0).path("expression");
            List<String> found = new ArrayList<>();
            if (stringConstant(first).isPresent()) {
                found.add(stringConstant(first).get());
            } else if (first.path("class").asText().equals("FUNCTION") && first.path("function_name").asText().equals("list_value")) {
                for (JsonNode element : first.path("arguments")) {
                    Optional<String> text = stringConstant(element.path("expression"));
                    if (text.isEmpty()) {
                        return Optional.empty();
                    }
                    found.add(text.get());
                }
            } else {
                return Optional.empty();
            }
            return Optional.of(found);
        }

        /**
         * Whether a path lies under a grant's prefix: compared as normalised paths (no {@code ..} escapes), a URL
         * ({@code s3://...}) as text; a glob is admitted when its fixed part lies under the prefix.
         */
        private boolean underPrefix(String path, String prefix) {
            if (path.contains("..")) {
                return false;
            }
            if (prefix.contains("://") || path.contains("://")) {
                return path.startsWith(prefix);
            }
            java.nio.file.Path granted = java.nio.file.Path.of(prefix).toAbsolutePath().normalize();
            java.nio.file.Path asked = java.nio.file.Path.of(path).toAbsolutePath().normalize();
            return asked.startsWith(granted);
        }

        private Optional<String> stringConstant(JsonNode expression) {
            if (expression.path("class").asText().equals("CONSTANT") && expression.path("literal").path("kind").asText().equals("STRING")) {
                return Optional.of(expression.path("literal").path("text").asText());
            }
            return Optional.empty();
        }

        /** A named parameter of a table function, {@code name = value} in DuckDB's parse tree: its name. */
        private Optional<String> optionName(JsonNode expression) {
            JsonNode left = expression.path("left");
            if (expression.path("class").asText().equals("COMPARISON") && expression.path("type").asText().equals("COMPARE_EQUAL")
                    && left.path("class").asText().equals("COLUMN_REF") && left.path("column_names").size() == 1) {
                return Optional.of(left.path("column_names").get(0).asText().toLowerCase(Locale.ROOT));
            }
            return Optional.empty();
        }

        /**
         * A file reader's named parameter: admitted when it only says how the granted files are read (one of
         * {@link #FORMAT_OPTIONS}) and its value is built of constants; a struct's member may be a type name
         * ({@code hive_types = {'dt': DATE}}), which DuckDB reads as the type, never as a column.
         */
        private void formatOption(String option, JsonNode value, String function, String written) {
            if (!FILE_READERS.contains(function.toLowerCase(Locale.ROOT)) || !FORMAT_OPTIONS.contains(option)) {
                throw new MallardException(ErrorCode.USER_ACCESS_DENIED, "No access to " + written + ": under RESTRICTED a file reader takes only"
                        + " the named parameters that say how its files are read, not " + option);
            }
            if (value.path("class").asText().equals("FUNCTION") && value.path("function_name").asText().equals("struct_pack")
                    && value.path("schema").asText("").isEmpty()) {
                for (JsonNode member : value.path("arguments")) {
                    JsonNode memberValue = member.path("expression");
                    if (!(memberValue.path("class").asText().equals("COLUMN_REF") && memberValue.path("column_names").size() == 1)) {
                        constantsOnly(memberValue, written);
                    }
                }
                return;
            }
            constantsOnly(value, written);
        }

        private void constantsOnly(JsonNode expression, String written) {
            String type = expression.path("class").asText("");
            if (type.equals("CONSTANT")) {
                return;
            }
            if (type.equals("FUNCTION") && expression.path("function_name").asText().equals("list_value")
                    || type.equals("COMPARISON") || type.equals("CAST")) {
                for (JsonNode child : expression) {
                    if (child.isContainerNode()) {
                        child.forEach(grand -> {
                            if (grand.has("class")) {
                                constantsOnly(grand, written);
                            } else if (grand.has("expression")) {
                                constantsOnly(grand.get("expression"), written);
                            }
                        });
                        if (child.has("class")) {
                            constantsOnly(child, written);
                        }
                    }
                }
                return;
            }
            throw new MallardException(ErrorCode.USER_ACCESS_DENIED, "No access to " + written + ": under RESTRICTED a table function's"
                    + " arguments must be constants");
        }

        private String arguments(JsonNode function) {
            List<String> texts = new ArrayList<>();
            for (JsonNode argument : function.path("arguments")) {
                texts.add(stringConstant(argument.path("expression")).map(SqlText::literal).orElse("..."));
            }
            return String.join(", ", texts);
        }

        private Optional<AccessGrant> grantFor(CatalogObject object) {
            for (AccessGrant grant : claims.grants()) {
                if (grant.kind() == AccessGrant.Kind.TABLE && names(grant, object)) {
                    return Optional.of(grant);
                }
            }
            return Optional.empty();
        }

        /** A grant's name, read as a table reference and qualified by the {@code database}/{@code schema} claims or the defaults. */
        private boolean names(AccessGrant grant, CatalogObject object) {
            List<String> parts = grantNames.get(grant.name());
            if (parts == null) {
                parts = grantName(grant.name());
                grantNames.put(grant.name(), parts);
            }
            return object.is(parts.get(0).isEmpty() ? catalog.defaultDatabase() : parts.get(0), parts.get(1).isEmpty() ? catalog.defaultSchema() : parts.get(1),
                    parts.get(2));
        }

        /** Catalog, schema and table of a grant's name, the first two empty when not written. */
        private List<String> grantName(String name) {
            JsonNode ref;
            try {
                JsonNode tree = parser.serialize("SELECT * FROM " + name);
                JsonNode statements = tree.path("statements");
                ref = statements.size() == 1 ? statements.get(0).path("node").path("from_table") : JsonNodeFactory.instance.objectNode();
            } catch (SQLException e) {
                throw RlsClaims.invalid("the grant's table name '" + name + "' is not a table name: " + e.getMessage());
            }
            if (!ref.path("type").asText().equals("BASE_TABLE") || !ref.path("alias").asText("").isEmpty()) {
                throw RlsClaims.invalid("the grant's table name '" + name + "' is not a table name; give table, schema.table or"
                        + " catalog.schema.table");
            }
            return List.of(ref.path("catalog_name").asText(""), ref.path("schema_name").asText(""), ref.path("table_name").asText());
        }

        /** A select that reads the grant's rows: the filter, its columns qualified with the row alias, as its WHERE. */
        private ObjectNode filtered(ObjectNode select, AccessGrant grant) throws SQLException {
            Optional<JsonNode> filter = filters.get(grant);
            if (filter == null) {
                filter = grant.filter().isEmpty() ? Optional.empty() : Optional.of(parseFilter(grant.filter().get()));
                filters.put(grant, filter);
            }
            filter.ifPresent(expression -> select.set("where_clause", expression.deepCopy()));
            if (grant.projection().isPresent()) {
                ArrayNode columns = JsonNodeFactory.instance.arrayNode();
                for (String column : projected(grant)) {
                    ObjectNode reference = JsonNodeFactory.instance.objectNode();
                    reference.put("class", "COLUMN_REF");
                    reference.put("type", "COLUMN_REF");
                    reference.put("alias", "");
                    reference.putArray("column_names").add(ROW_ALIAS).add(column);
                    columns.add(reference);
                }
                select.set("select_list", columns);
            }
            return select;
        }

        /** The columns a grant's projection names, read from DuckDB's parse tree: plain column names only. */
        private List<String> projected(AccessGrant grant) throws SQLException {
            List<String> known = projections.get(grant);
            if (known != null) {
                return known;
            }
            String projection = grant.projection().orElseThrow();
            JsonNode tree = parser.serialize("SELECT " + projection);
            JsonNode statements = tree.path("statements");
            JsonNode node = statements.size() == 1 ? statements.get(0).path("node") : JsonNodeFactory.instance.objectNode();
            boolean plain = !tree.path("error").asBoolean(false) && node.path("type").asText().equals("SELECT_NODE")
                    && node.path("from_table").path("type").asText().equals("EMPTY") && node.path("where_clause").isNull()
                    && node.path("modifiers").isEmpty() && node.path("cte_map").path("map").isEmpty() && node.path("group_expressions").isEmpty()
                    && node.path("having").isNull() && node.path("qualify").isNull() && node.path("select_list").size() >= 1;
            List<String> columns = new ArrayList<>();
            Set<String> seen = new HashSet<>();
            for (JsonNode item : plain ? node.path("select_list") : JsonNodeFactory.instance.arrayNode()) {
                if (!item.path("class").asText().equals("COLUMN_REF") || item.path("column_names").size() != 1
                        || !item.path("alias").asText("").isEmpty()) {
                    plain = false;
                    break;
                }
                String column = item.path("column_names").get(0).asText();
                if (seen.add(column.toLowerCase(Locale.ROOT))) {
                    columns.add(column);
                }
            }
            if (!plain || columns.isEmpty()) {
                throw RlsClaims.invalid("the projection '" + projection + "' of the grant on " + grant.name() + " is not * nor a list of"
                        + " column names such as \"id, amount\"");
            }
            List<String> result = List.copyOf(columns);
            projections.put(grant, result);
            return result;
        }

        /**
         * Notes the columns of a datasource a projected grant leaves out; a projection naming a column the datasource
         * lacks is refused, as a filter naming one would fail.
         */
        private void hide(AccessGrant grant, JsonNode datasourceColumns, String datasource) throws SQLException {
            if (grant.projection().isEmpty()) {
                return;
            }
            Set<String> exposed = new HashSet<>();
            for (String column : projected(grant)) {
                exposed.add(column.toLowerCase(Locale.ROOT));
            }
            Set<String> all = new HashSet<>();
            for (JsonNode column : datasourceColumns) {
                String name = column.asText().toLowerCase(Locale.ROOT);
                all.add(name);
                if (!exposed.contains(name)) {
                    hidden.putIfAbsent(name, datasource);
                }
            }
            for (String column : exposed) {
                if (!all.contains(column)) {
                    throw RlsClaims.invalid("the projection of the grant on " + grant.name() + " names the column " + column + ", which "
                            + datasource + " does not have");
                }
            }
        }

        /** The column names a select over a table function returns, from DuckDB's prepared statement (the function is bound, not run). */
        private ArrayNode resultColumns(ObjectNode select) throws SQLException {
            ObjectNode tree = JsonNodeFactory.instance.objectNode();
            tree.put("error", false);
            ObjectNode statement = tree.putArray("statements").addObject();
            statement.set("node", select.deepCopy());
            statement.putArray("named_param_map");
            ArrayNode names = JsonNodeFactory.instance.arrayNode();
            try (java.sql.PreparedStatement prepared = connection.prepareStatement(parser.deserialize(tree))) {
                java.sql.ResultSetMetaData meta = prepared.getMetaData();
                for (int i = 1; i <= meta.getColumnCount(); i++) {
                    names.add(meta.getColumnName(i));
                }
            }
            return names;
        }

        /** Refuses a column reference that names a column a projected grant hides. */
        private void checkColumn(JsonNode names) {
            if (hidden.isEmpty()) {
                return;
            }
            for (JsonNode part : names) {
                String datasource = hidden.get(part.asText().toLowerCase(Locale.ROOT));
                if (datasource != null) {
                    throw new MallardException(ErrorCode.USER_ACCESS_DENIED, "No access to column " + part.asText() + " of " + datasource
                            + ": the token's grant exposes only the columns of its projection");
                }
            }
        }

        private JsonNode parseFilter(String filter) throws SQLException {
            JsonNode tree = parser.serialize("SELECT 1 WHERE " + filter);
            JsonNode statements = tree.path("statements");
            if (tree.path("error").asBoolean(false) || statements.size() != 1) {
                throw RlsClaims.invalid("the row filter '" + filter + "' is not one SQL expression");
            }
            JsonNode node = statements.get(0).path("node");
            boolean plain = node.path("type").asText().equals("SELECT_NODE") && node.path("from_table").path("type").asText().equals("EMPTY")
                    && node.path("modifiers").isEmpty() && node.path("cte_map").path("map").isEmpty() && node.path("group_expressions").isEmpty()
                    && node.path("having").isNull() && node.path("qualify").isNull() && node.path("select_list").size() == 1;
            if (!plain || !node.hasNonNull("where_clause")) {
                throw RlsClaims.invalid("the row filter '" + filter + "' is not one SQL expression");
            }
            JsonNode expression = node.get("where_clause").deepCopy();
            qualifyFilter(expression, filter);
            return expression;
        }

        /** Qualifies the filter's columns with the row alias (so none binds to an outer query) and refuses subqueries in it. */
        private void qualifyFilter(JsonNode node, String filter) {
            if (node instanceof ObjectNode object) {
                String type = object.path("class").asText("");
                if (object.has("class") && !EXPRESSIONS.contains(type)) {
                    throw RlsClaims.invalid("the row filter '" + filter + "' holds a " + type + " expression, which a row filter may not");
                }
                if (type.equals("SUBQUERY") || type.equals("WINDOW")) {
                    throw RlsClaims.invalid("the row filter '" + filter + "' holds a " + type.toLowerCase(Locale.ROOT)
                            + "; a row filter reads the row's own columns, constants and getvariable() only");
                }
                if (object.has("function_name") && catalog.isUserFunction(object.path("function_name").asText(""))) {
                    throw RlsClaims.invalid("the row filter '" + filter + "' calls the user-defined function "
                            + object.path("function_name").asText() + ", which row-level security cannot see into");
                }
                if (type.equals("COLUMN_REF")) {
                    ArrayNode names = JsonNodeFactory.instance.arrayNode().add(ROW_ALIAS);
                    object.path("column_names").forEach(names::add);
                    object.set("column_names", names);
                    return;
                }
                for (JsonNode child : object) {
                    qualifyFilter(child, filter);
                }
            } else if (node instanceof ArrayNode array) {
                for (JsonNode child : array) {
                    qualifyFilter(child, filter);
                }
            }
        }

        /** {@code SELECT * FROM <from> AS __mallard_rls_row}, parsed once per statement. */
        private ObjectNode fromTemplate(String from) throws SQLException {
            ObjectNode template = templates.get(from);
            if (template == null) {
                JsonNode tree = parser.serialize("SELECT * FROM " + from + " AS " + ROW_ALIAS);
                if (tree.path("error").asBoolean(false)) {
                    throw new MallardException(ErrorCode.SYSTEM_INTERNAL, "cannot parse the rewriter's own template: " + tree.path("error_message"));
                }
                template = (ObjectNode) tree.path("statements").get(0).get("node");
                templates.put(from, template);
            }
            return template.deepCopy();
        }

        /** {@code false}, the WHERE of a table no grant names, parsed once per session. */
        private JsonNode falseExpression() throws SQLException {
            JsonNode parsed = falseWhere;
            if (parsed == null) {
                JsonNode tree = parser.serialize("SELECT 1 WHERE false");
                parsed = tree.path("statements").get(0).path("node").path("where_clause");
                falseWhere = parsed;
            }
            return parsed.deepCopy();
        }

        /** A derived table in place of a reference: the reference's alias, column aliases and sample over the select given. */
        private ObjectNode derived(String alias, ObjectNode ref, ObjectNode select) {
            ObjectNode derived = JsonNodeFactory.instance.objectNode();
            derived.put("type", "SUBQUERY");
            derived.put("alias", alias);
            derived.set("sample", ref.path("sample").isMissingNode() ? JsonNodeFactory.instance.nullNode() : ref.get("sample"));
            ObjectNode statement = derived.putObject("subquery");
            statement.set("node", select);
            statement.putArray("named_param_map");
            derived.set("column_name_alias", ref.path("column_name_alias").isMissingNode() ? JsonNodeFactory.instance.arrayNode()
                    : ref.get("column_name_alias").deepCopy());
            return derived;
        }

        /**
         * A view's defining query as a tree. A materialized view keeps its SELECT; DuckDB keeps a view's CREATE VIEW
         * text, whose query is the longest tail after an {@code AS} that parses as one SELECT. Whatever the tail, the
         * rewrite filters every table it reads, so a mistaken split can cost an error, never a leak.
         */
        private JsonNode definition(CatalogObject object) throws SQLException {
            String sql = object.definition().orElseThrow();
            if (object.kind() == CatalogObject.Kind.MATERIALIZED_VIEW) {
                return select(sql).orElseThrow(() -> unsupported("the materialized view " + object + " whose definition does not parse"));
            }
            String text = sql.strip();
            if (text.endsWith(";")) {
                text = text.substring(0, text.length() - 1);
            }
            String upper = text.toUpperCase(Locale.ROOT);
            for (int at = upper.indexOf(" AS "); at >= 0; at = upper.indexOf(" AS ", at + 1)) {
                Optional<JsonNode> query = select(text.substring(at + 4));
                if (query.isPresent()) {
                    return query.get();
                }
            }
            throw unsupported("the view " + object + " whose definition DuckDB does not serialise");
        }

        private Optional<JsonNode> select(String sql) throws SQLException {
            JsonNode tree = parser.serialize(sql);
            if (tree.path("error").asBoolean(false) || tree.path("statements").size() != 1) {
                return Optional.empty();
            }
            return Optional.of(tree.path("statements").get(0).path("node"));
        }

        private ArrayNode viewColumns(CatalogObject object) throws SQLException {
            ArrayNode names = JsonNodeFactory.instance.arrayNode();
            try (java.sql.PreparedStatement statement = connection.prepareStatement("SELECT column_name FROM system.main.duckdb_columns() WHERE database_name = ?"
                    + " AND schema_name = ? AND table_name = ? ORDER BY column_index")) {
                statement.setString(1, object.database());
                statement.setString(2, object.schema());
                statement.setString(3, object.name());
                try (java.sql.ResultSet rs = statement.executeQuery()) {
                    while (rs.next()) {
                        names.add(rs.getString(1));
                    }
                }
            }
            return names;
        }

        /**
         * Walks an expression (or a clause holding expressions): every subquery in it is rewritten; an expression class
         * not listed, a user-defined function, or a query or table found where none is expected is refused.
         */
        void scan(JsonNode node, Scope scope, int depth) throws SQLException {
            if (node == null || node.isNull() || node.isValueNode()) {
                return;
            }
            if (node instanceof ArrayNode array) {
                for (JsonNode child : array) {
                    scan(child, scope, depth);
                }
                return;
            }
            ObjectNode object = (ObjectNode) node;
            if (object.has("class")) {
                String type = object.path("class").asText("");
                if (!EXPRESSIONS.contains(type)) {
                    throw unsupported("the expression class " + type);
                }
                if (object.has("function_name") && catalog.isUserFunction(object.path("function_name").asText(""))) {
                    throw unsupported("the user-defined function " + object.path("function_name").asText()
                            + " (a macro or UDF, which could read tables row-level security cannot see)");
                }
                if (type.equals("SUBQUERY")) {
                    subquery((ObjectNode) object.get("subquery"), scope, depth);
                }
                if (type.equals("COLUMN_REF")) {
                    checkColumn(object.path("column_names"));
                }
                for (Iterator<Map.Entry<String, JsonNode>> fields = object.fields(); fields.hasNext();) {
                    Map.Entry<String, JsonNode> field = fields.next();
                    if (!field.getKey().equals("subquery")) {
                        scan(field.getValue(), scope, depth);
                    }
                }
                return;
            }
            String type = object.path("type").asText("");
            if (QUERY_NODES.contains(type) || TABLE_REFS.contains(type)) {
                throw unsupported("a " + type + " where the rewriter expects an expression");
            }
            for (Iterator<Map.Entry<String, JsonNode>> fields = object.fields(); fields.hasNext();) {
                Map.Entry<String, JsonNode> field = fields.next();
                if (READING_KEYS.contains(field.getKey()) && !field.getValue().isNull()) {
                    throw unsupported("a '" + field.getKey() + "' where the rewriter expects an expression");
                }
                scan(field.getValue(), scope, depth);
            }
        }
    }

    /** Refuses a node with a key the rewriter does not know: a newer DuckDB may have put a query or a table there. */
    private static void known(ObjectNode node, String what, Set<String> keys) {
        for (Iterator<String> names = node.fieldNames(); names.hasNext();) {
            String name = names.next();
            if (!keys.contains(name) && !name.startsWith("query_location")) {
                throw unsupported("the field '" + name + "' of " + what);
            }
        }
    }

    static MallardException unsupported(String what) {
        return new MallardException(ErrorCode.USER_ACCESS_STATEMENT_UNSUPPORTED, "row-level security refuses this statement: it does not know "
                + what + ", so it cannot tell what the statement reads; rewrite the query without it");
    }

    @SuppressWarnings("unused")
    private static TextNode text(String value) {
        return TextNode.valueOf(value);
    }
}
