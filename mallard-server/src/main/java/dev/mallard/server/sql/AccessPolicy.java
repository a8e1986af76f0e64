// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.sql;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.Classification;
import dev.mallard.core.sql.ClassifiedStatement;
import dev.mallard.core.sql.FunctionCall;
import dev.mallard.core.sql.StatementClassifier;
import dev.mallard.core.sql.StatementKind;
import dev.mallard.server.config.AccessMode;
import dev.mallard.server.session.Session;
import dev.mallard.views.ViewSql;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The one gate every statement passes on both listeners (Flight plain, prepared and DoPut; HTTP). It decides from
 * DuckDB's parse tree ({@link StatementClassifier}), never from the text: what kind of statement, which tables and
 * functions it reaches, through {@code query()} and {@code query_table()} too.
 *
 * <ul>
 *   <li>Every mode: a SELECT that calls {@code dbsp_*} functions runs through the views' front door, which runs
 *       each call with constant arguments on the session's thread before the statement and refuses the rest
 *       ({@code user.view.call_placement}); a call outside a single SELECT (an EXPLAIN, a write, a second statement)
 *       is refused with that code here, since inside DuckDB it would wait for the views' lock.
 *   <li>READ_ONLY: one statement per text, a query or an {@code EXPLAIN [ANALYZE]} of one, that writes nowhere in its
 *       tree (no {@code DELETE ... RETURNING} in a CTE), calls only table functions known to read, no sequence or
 *       seed function, and none of the {@code dbsp_*} writers: {@link #WRITING_VIEW_FUNCTIONS}, a setting of
 *       {@link #VIEW_SETTINGS} given an argument, {@code dbsp_check} given one. A {@code dbsp_*} name the gate does
 *       not know is refused in every mode ({@code user.sql.invalid}), so a new function is never admitted unjudged.
 *   <li>Unless {@code file_access} is all: {@code dbsp_save} and {@code dbsp_load} with a file, which the views
 *       module opens itself, outside DuckDB's file rules.
 * </ul>
 */
public final class AccessPolicy {
    /** Table functions a READ_ONLY session may call: each reads data, files (within file_access) or the catalog. */
    static final Set<String> READING_TABLE_FUNCTIONS = Set.of("range", "generate_series", "unnest", "repeat", "repeat_row", "glob",
            "read_blob", "read_text", "read_csv", "read_csv_auto", "read_json", "read_json_auto", "read_json_objects", "read_json_objects_auto",
            "read_ndjson", "read_ndjson_auto", "read_ndjson_objects", "read_parquet", "parquet_scan", "parquet_metadata", "parquet_schema",
            "parquet_file_metadata", "parquet_kv_metadata", "parquet_full_metadata", "parquet_bloom_probe", "sniff_csv", "json_each", "json_tree",
            "summary", "histogram", "histogram_values", "icu_calendar_names", "pg_timezone_names", "test_all_types", "test_vector_types", "query",
            "query_table", "duckdb_columns", "duckdb_constraints", "duckdb_databases", "duckdb_dependencies", "duckdb_extensions",
            "duckdb_functions", "duckdb_indexes", "duckdb_keywords", "duckdb_memory", "duckdb_optimizers", "duckdb_schemas", "duckdb_sequences",
            "duckdb_settings", "duckdb_tables", "duckdb_temporary_files", "duckdb_types", "duckdb_views", "duckdb_variables",
            "duckdb_approx_database_count", "duckdb_connection_count", "pragma_collations", "pragma_database_size", "pragma_metadata_info",
            "pragma_platform", "pragma_show", "pragma_storage_info", "pragma_table_info", "pragma_user_agent", "pragma_version");
    /** Scalar functions that change state: sequences, the random seed, the log. */
    static final Set<String> WRITING_FUNCTIONS = Set.of("nextval", "setval", "setseed", "write_log");
    /** The view functions that read, or bring views up to date with what committed. */
    static final Set<String> READING_VIEW_FUNCTIONS = Set.of("dbsp_sync", "dbsp_stats", "dbsp_query", "dbsp_changes", "dbsp_check");
    /**
     * The view functions that create, drop or reconfigure views, change which tables are tracked, or write or read a
     * view set file ({@code dbsp_save}, {@code dbsp_load}), whatever their arguments.
     */
    static final Set<String> WRITING_VIEW_FUNCTIONS = Set.of("dbsp_create_view", "dbsp_drop_view", "dbsp_drop", "dbsp_drop_view_cascade",
            "dbsp_drop_cascade", "dbsp_track", "dbsp_untrack", "dbsp_auto_sync", "dbsp_save", "dbsp_load");
    /**
     * The view settings: called without arguments each reports its value (a read); with any argument it sets the value
     * (a write), and a sync's memory bound and threads are DuckDB settings of the whole database.
     */
    static final Set<String> VIEW_SETTINGS = Set.of("dbsp_autopersist", "dbsp_spill", "dbsp_parallel", "dbsp_timing", "dbsp_recursion_limit");
    /** The view functions whose argument names a file, which the views module writes or reads itself (not DuckDB). */
    static final Set<String> VIEW_FILE_FUNCTIONS = Set.of("dbsp_save", "dbsp_load");
    private static final String VIEW_PREFIX = "dbsp_";
    /** Classifications by text: a client repeats its statements, and a classification depends on the text alone. */
    private static final int CACHED_MAX = 2_048;
    private static final int CACHED_TEXT_MAX = 8_192;

    private final AccessMode mode;
    private final FileAccess fileAccess;
    private final StatementClassifier classifier;
    private final Map<String, Classification> classified = new ConcurrentHashMap<>();

    /** A gate for a server with the default {@code file_access} (warehouse). */
    public AccessPolicy(AccessMode mode) {
        this(mode, FileAccess.DEFAULT);
    }

    public AccessPolicy(AccessMode mode, FileAccess fileAccess) {
        this(mode, fileAccess, new StatementClassifier());
    }

    public AccessPolicy(AccessMode mode, FileAccess fileAccess, StatementClassifier classifier) {
        this.mode = requireNonNull(mode, "mode is null");
        this.fileAccess = requireNonNull(fileAccess, "fileAccess is null");
        this.classifier = requireNonNull(classifier, "classifier is null");
    }

    public AccessMode mode() {
        return mode;
    }

    /**
     * @return the text as it runs, and whether through the views' front door
     * @throws MallardException {@code user.access.denied} when the mode refuses the text; {@code user.sql.invalid}
     *     when it does not parse (READ_ONLY); {@code user.view.call_placement} for a {@code dbsp_*} call outside a
     *     single SELECT; {@code user.sql.too_deep} / {@code user.sql.unsupported} from the classifier
     */
    public CheckedSql check(Session session, String sql) {
        requireNonNull(session, "session is null");
        requireNonNull(sql, "sql is null");
        Classification classification = classify(session, sql);
        Optional<String> viewText = viewCall(session, classification);
        if (viewText.isPresent()) {
            return new CheckedSql(viewText.get(), classification, true);
        }
        ClassifiedStatement first = classification.statements().getFirst();
        boolean notAQuery = first.kind() == StatementKind.UNPARSED || first.kind() == StatementKind.OTHER;
        if (notAQuery && ViewSql.recognizes(sql)) {
            // A statement of the views' own grammar (CREATE/DROP/REFRESH MATERIALIZED VIEW), which DuckDB parses or
            // not but cannot run. The front door matches the whole text to one statement of that form.
            if (mode != AccessMode.COMPLETE) {
                throw viewsRefused();
            }
            return new CheckedSql(sql, classification, true);
        }
        if (first.kind() == StatementKind.UNPARSED) {
            if (mode != AccessMode.COMPLETE) {
                throw new MallardException(ErrorCode.USER_SQL_INVALID, first.problem().orElse("the statement does not parse"));
            }
            return new CheckedSql(sql, classification, false);
        }
        if (mode != AccessMode.COMPLETE) {
            checkReadOnly(classification);
        }
        return new CheckedSql(sql, classification, false);
    }

    private Classification classify(Session session, String sql) {
        Classification known = classified.get(sql);
        if (known != null) {
            return known;
        }
        Classification classification = session.sql(connection -> classifier.classify(connection, sql, session.serializer()));
        if (sql.length() <= CACHED_TEXT_MAX) {
            if (classified.size() >= CACHED_MAX) {
                classified.clear();
            }
            classified.put(sql, classification);
        }
        return classification;
    }

    /**
     * The front door's text for a query that calls {@code dbsp_*} functions; empty when the text calls none. The front
     * door runs each call whose arguments are constant on the session's thread before the statement, wherever it
     * stands in the SELECT, and refuses the rest ({@code user.view.call_placement}), so DuckDB never calls one itself.
     * Which functions the text reaches, and so whether it writes, is decided here from the parse tree.
     */
    private Optional<String> viewCall(Session session, Classification classification) {
        java.util.List<FunctionCall> viewCalls = classification.functions().stream().filter(call -> call.name().startsWith(VIEW_PREFIX)).toList();
        if (viewCalls.isEmpty()) {
            return Optional.empty();
        }
        for (FunctionCall call : viewCalls) {
            if (!READING_VIEW_FUNCTIONS.contains(call.name()) && !WRITING_VIEW_FUNCTIONS.contains(call.name()) && !VIEW_SETTINGS.contains(call.name())) {
                throw new MallardException(ErrorCode.USER_SQL_INVALID, "there is no view function " + call.name() + "; the view functions are "
                        + new java.util.TreeSet<>(READING_VIEW_FUNCTIONS) + ", " + new java.util.TreeSet<>(WRITING_VIEW_FUNCTIONS)
                        + " and the settings " + new java.util.TreeSet<>(VIEW_SETTINGS));
            }
        }
        String name = viewCalls.getFirst().name();
        if (!classification.single() || classification.statement().kind() != StatementKind.QUERY) {
            // Outside a single SELECT (an EXPLAIN, an INSERT ... SELECT, a second statement) DuckDB would call it itself.
            throw new MallardException(ErrorCode.USER_VIEW_CALL_PLACEMENT, name + " cannot run here: view functions run in a single SELECT"
                    + " (not in an EXPLAIN, a write or a text of several statements); call it in a SELECT of its own, such as SELECT "
                    + name + "(...) or SELECT * FROM " + name + "(...), with constant arguments");
        }
        if (mode != AccessMode.COMPLETE) {
            for (FunctionCall call : viewCalls) {
                if (writes(call)) {
                    throw viewsRefused();
                }
            }
            checkReadOnly(classification);
        }
        for (FunctionCall call : viewCalls) {
            if (VIEW_FILE_FUNCTIONS.contains(call.name()) && !call.arguments().isEmpty() && fileAccess != FileAccess.ALL) {
                // The views module opens the file itself, where DuckDB's allowed_directories would not stop it.
                throw new MallardException(ErrorCode.USER_ACCESS_DENIED, call.name() + " with a file reads or writes a file of the server,"
                        + " outside what DuckDB's file_access rules, and this server's " + FileAccess.KEY + " is "
                        + fileAccess.name().toLowerCase(java.util.Locale.ROOT) + ": the views persist in the database already ("
                        + call.name() + "() without arguments reports them); to copy a view set, run dbsp_save('file') in mallard sql"
                        + " on the database file, or start the server with " + FileAccess.KEY + ": all");
            }
        }
        ClassifiedStatement statement = classification.statement();
        return Optional.of(session.sql(connection -> classifier.toSql(connection, statement)));
    }

    /** Whether a view call changes views, tracking, a setting or a file; an unknown name never reaches here. */
    static boolean writes(FunctionCall call) {
        if (WRITING_VIEW_FUNCTIONS.contains(call.name())) {
            return true;
        }
        if (VIEW_SETTINGS.contains(call.name()) || call.name().equals("dbsp_check")) {
            return !call.arguments().isEmpty();
        }
        return !READING_VIEW_FUNCTIONS.contains(call.name());
    }

    private void checkReadOnly(Classification classification) {
        if (!classification.single()) {
            throw refused("it runs one statement per request, and this text holds " + classification.statements().size()
                    + "; send them one at a time");
        }
        for (ClassifiedStatement statement : classification.reached()) {
            switch (statement.kind()) {
                case QUERY, EXPLAIN, EXPLAIN_ANALYZE -> {
                    // checked below
                }
                case OTHER, UNPARSED -> throw refused("it runs queries only (SELECT, set operations, CTEs, EXPLAIN of a query), and DuckDB's"
                        + " parser found another kind of statement");
            }
            if (statement.writes()) {
                throw refused("the query writes inside it (a DELETE, INSERT, UPDATE or COPY in a CTE)");
            }
            for (FunctionCall call : statement.functions()) {
                if (call.tableFunction() && !READING_TABLE_FUNCTIONS.contains(call.name()) && !call.name().startsWith(VIEW_PREFIX)) {
                    throw refused("its table function " + call.name() + "() is not one known to only read (checkpoint() and the logging and"
                            + " profiling functions change state)");
                }
                if (!call.tableFunction() && WRITING_FUNCTIONS.contains(call.name())) {
                    throw refused(call.name() + "() changes state");
                }
            }
        }
    }

    private MallardException refused(String why) {
        return new MallardException(ErrorCode.USER_ACCESS_DENIED, "this server is " + mode + ": " + why
                + "; connect to a COMPLETE server to change data or settings");
    }

    private MallardException viewsRefused() {
        return new MallardException(ErrorCode.USER_ACCESS_DENIED, "this server is " + mode + ": it does not create, drop, refresh or"
                + " reconfigure materialized views, track tables, save or load a view set, or set dbsp_spill, dbsp_parallel, dbsp_timing,"
                + " dbsp_autopersist or dbsp_recursion_limit (reading the views, dbsp_query, dbsp_changes, dbsp_stats, dbsp_check, dbsp_sync"
                + " and the settings without arguments work);"
                + " connect to a COMPLETE server to change them");
    }
}
