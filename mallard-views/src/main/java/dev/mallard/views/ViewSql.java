package dev.mallard.views;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The SQL front door: recognises the view statements DuckDB's grammar does not have and the {@code dbsp_*}
 * calls, and passes every other statement to DuckDB on the attached connection. With auto-sync on (the
 * default), every statement that is not a query is followed by a sync, so in auto-commit mode each write
 * leaves every view equal to its query.
 *
 * <p>Recognised: {@code CREATE [OR REPLACE] MATERIALIZED VIEW [IF NOT EXISTS] v AS <query>},
 * {@code DROP MATERIALIZED VIEW [IF EXISTS] v [CASCADE | RESTRICT]}, {@code SELECT dbsp_drop_view_cascade('v')}, {@code REFRESH MATERIALIZED VIEW v}, and as whole statements
 * {@code SELECT dbsp_sync()}, {@code SELECT dbsp_auto_sync(true|false)}, {@code SELECT * FROM dbsp_stats()},
 * {@code SELECT * FROM dbsp_query('v')}, {@code SELECT * FROM dbsp_changes('v')}, {@code SELECT * FROM dbsp_check()}, {@code SELECT dbsp_create_view('v', '<query>')},
 * {@code SELECT dbsp_drop_view('v')}, {@code SELECT dbsp_track('t')}, {@code SELECT dbsp_untrack('t')}.
 */
public final class ViewSql {
    private static final String NAME = "(\"(?:[^\"]|\"\")+\"|[A-Za-z_][A-Za-z0-9_]*)";
    private static final String END = "\\s*;?\\s*$";
    private static final String STRING = "'((?:[^']|'')*)'";
    private static final int FLAGS = Pattern.CASE_INSENSITIVE | Pattern.DOTALL;
    private static final Pattern CREATE = Pattern.compile(
            "^\\s*CREATE\\s+(OR\\s+REPLACE\\s+)?MATERIALIZED\\s+VIEW\\s+(IF\\s+NOT\\s+EXISTS\\s+)?" + NAME + "\\s+AS\\s+(.+?)" + END, FLAGS);
    private static final Pattern DROP = Pattern.compile(
            "^\\s*DROP\\s+MATERIALIZED\\s+VIEW\\s+(IF\\s+EXISTS\\s+)?" + NAME + "(\\s+CASCADE|\\s+RESTRICT)?" + END, FLAGS);
    private static final Pattern REFRESH = Pattern.compile("^\\s*REFRESH\\s+MATERIALIZED\\s+VIEW\\s+" + NAME + END, FLAGS);
    private static final Pattern SYNC = Pattern.compile("^\\s*SELECT\\s+dbsp_sync\\s*\\(\\s*\\)" + END, FLAGS);
    private static final Pattern AUTO_SYNC = Pattern.compile("^\\s*SELECT\\s+dbsp_auto_sync\\s*\\(\\s*(true|false)\\s*\\)" + END, FLAGS);
    private static final Pattern STATS = Pattern.compile("^\\s*SELECT\\s+\\*\\s+FROM\\s+dbsp_stats\\s*\\(\\s*\\)" + END, FLAGS);
    private static final Pattern QUERY = Pattern.compile("^\\s*SELECT\\s+\\*\\s+FROM\\s+dbsp_query\\s*\\(\\s*" + STRING + "\\s*\\)" + END, FLAGS);
    private static final Pattern CREATE_CALL = Pattern.compile(
            "^\\s*SELECT\\s+dbsp_create_view\\s*\\(\\s*" + STRING + "\\s*,\\s*" + STRING + "\\s*\\)" + END, FLAGS);
    private static final Pattern CHECK = Pattern.compile("^\\s*SELECT\\s+\\*\\s+FROM\\s+dbsp_check\\s*\\(\\s*\\)" + END, FLAGS);
    private static final Pattern CHANGES = Pattern.compile("^\\s*SELECT\\s+\\*\\s+FROM\\s+dbsp_changes\\s*\\(\\s*" + STRING + "\\s*\\)" + END, FLAGS);
    private static final Pattern DROP_CASCADE_CALL = Pattern.compile(
            "^\\s*SELECT\\s+dbsp_drop_view_cascade\\s*\\(\\s*" + STRING + "\\s*\\)" + END, FLAGS);
    private static final Pattern TRACK_CALL = Pattern.compile("^\\s*SELECT\\s+dbsp_(un)?track\\s*\\(\\s*" + STRING + "\\s*\\)" + END, FLAGS);
    private static final Pattern DROP_CALL = Pattern.compile("^\\s*SELECT\\s+dbsp_drop_view\\s*\\(\\s*" + STRING + "\\s*\\)" + END, FLAGS);
    /** Every statement the front door runs itself rather than passing to DuckDB. */
    private static final List<Pattern> OWN = List.of(CREATE, DROP, REFRESH, SYNC, AUTO_SYNC, STATS, QUERY, CREATE_CALL, CHECK,
            CHANGES, DROP_CASCADE_CALL, DROP_CALL, TRACK_CALL);

    private final MaterializedViews views;
    private boolean autoSync = true;
    /** Rows the statements since the last sync changed, by their update counts; negative when not known. */
    private long unsynced;

    public ViewSql(MaterializedViews views) {
        this.views = requireNonNull(views, "views is null");
    }

    /** Whether {@code sql} is a statement of the front door's own (view DDL, a {@code dbsp_*} call), not plain DuckDB SQL. */
    public static boolean recognizes(String sql) {
        requireNonNull(sql, "sql is null");
        return OWN.stream().anyMatch(pattern -> pattern.matcher(sql).matches());
    }

    public boolean autoSync() {
        return autoSync;
    }

    /** Off for a bulk load, then one {@link MaterializedViews#sync()} (or {@code SELECT dbsp_sync()}). */
    public void autoSync(boolean on) {
        this.autoSync = on;
    }

    /**
     * A statement run around the front door changed {@code rows} rows (its update count; negative when not known,
     * as for a statement that returned rows, which may have written too): told to the next {@link #syncAfterWrite}.
     */
    public void wrote(long rows) {
        unsynced = rows < 0 || unsynced < 0 ? -1 : unsynced + rows;
    }

    /**
     * The sync a writer runs after its commit ({@link MaterializedViews#syncAfterWrite(long)}), told the rows changed
     * since the last one.
     */
    public long syncAfterWrite() {
        long rows = unsynced;
        unsynced = 0;
        return views.syncAfterWrite(rows);
    }

    /** Runs one statement. Close the result to close its JDBC statement. */
    public Result execute(String sql) {
        requireNonNull(sql, "sql is null");
        Matcher m;
        if ((m = CREATE.matcher(sql)).matches()) {
            String name = name(m.group(3));
            if (m.group(2) != null && views.names().stream().anyMatch(name::equalsIgnoreCase)) {
                return Result.message("CREATE MATERIALIZED VIEW (exists)");
            }
            if (m.group(1) != null) {
                views.createOrReplaceView(name, m.group(4));
            } else {
                views.createView(name, m.group(4));
            }
            return Result.message("CREATE MATERIALIZED VIEW");
        }
        if ((m = DROP.matcher(sql)).matches()) {
            String name = name(m.group(2));
            boolean cascade = m.group(3) != null && m.group(3).strip().equalsIgnoreCase("CASCADE");
            if (m.group(1) != null) {
                if (cascade) {
                    views.dropViewCascadeIfExists(name);
                } else {
                    views.dropViewIfExists(name);
                }
            } else if (cascade) {
                views.dropViewCascade(name);
            } else {
                views.dropView(name);
            }
            return Result.message("DROP MATERIALIZED VIEW");
        }
        if ((m = REFRESH.matcher(sql)).matches()) {
            views.refresh(name(m.group(1)));
            return Result.message("REFRESH MATERIALIZED VIEW");
        }
        if (SYNC.matcher(sql).matches()) {
            return query("SELECT " + views.sync() + "::BIGINT AS dbsp_sync");
        }
        if ((m = AUTO_SYNC.matcher(sql)).matches()) {
            autoSync = Boolean.parseBoolean(m.group(1).toLowerCase(java.util.Locale.ROOT));
            if (autoSync) {
                views.sync();
            }
            return query("SELECT " + autoSync + " AS dbsp_auto_sync");
        }
        if (STATS.matcher(sql).matches()) {
            return query(statsQuery(views.stats()));
        }
        if ((m = QUERY.matcher(sql)).matches()) {
            String name = unescape(m.group(1));
            views.definition(name);
            views.syncAfterWrite();
            return query("SELECT * FROM " + Sql.quote(name));
        }
        if ((m = CHANGES.matcher(sql)).matches()) {
            ResultSet rows = views.changes(unescape(m.group(1)));
            try {
                return new Result(rows.getStatement(), rows, -1, null);
            } catch (SQLException e) {
                throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "reading the changes failed: " + e.getMessage(), e);
            }
        }
        if (CHECK.matcher(sql).matches()) {
            views.reconcile();
            List<String> rows = new ArrayList<>();
            for (String name : views.names()) {
                rows.add("(" + Sql.literal(name) + ", " + views.check(name) + "::BIGINT)");
            }
            return query(rows.isEmpty() ? "SELECT NULL::VARCHAR AS view, NULL::BIGINT AS differing_rows WHERE false"
                    : "SELECT * FROM (VALUES " + String.join(", ", rows) + ") AS dbsp_check(view, differing_rows)");
        }
        if ((m = CREATE_CALL.matcher(sql)).matches()) {
            views.createView(unescape(m.group(1)), unescape(m.group(2)));
            return query("SELECT true AS dbsp_create_view");
        }
        if ((m = DROP_CASCADE_CALL.matcher(sql)).matches()) {
            views.dropViewCascade(unescape(m.group(1)));
            return query("SELECT true AS dbsp_drop_view_cascade");
        }
        if ((m = TRACK_CALL.matcher(sql)).matches()) {
            if (m.group(1) != null) {
                return query("SELECT " + views.untrack(unescape(m.group(2))) + " AS dbsp_untrack");
            }
            return query("SELECT " + Sql.literal(views.track(unescape(m.group(2)))) + " AS dbsp_track");
        }
        if ((m = DROP_CALL.matcher(sql)).matches()) {
            views.dropView(unescape(m.group(1)));
            return query("SELECT true AS dbsp_drop_view");
        }
        Result result = passThrough(sql);
        wrote(result.rows().isPresent() ? -1 : result.updateCount());
        if (autoSync && result.rows().isEmpty() && autoCommit()) {
            syncAfterWrite();
        }
        return result;
    }

    private Result passThrough(String sql) {
        Statement statement = null;
        try {
            statement = views.connection().createStatement();
            boolean rows = statement.execute(sql);
            return rows ? new Result(statement, statement.getResultSet(), -1, null)
                    : new Result(statement, null, statement.getUpdateCount(), null);
        } catch (SQLException e) {
            closeQuietly(statement, e);
            throw new MallardException(ErrorCode.USER_SQL_INVALID, e.getMessage(), e);
        }
    }

    private Result query(String sql) {
        return passThrough(sql);
    }

    private boolean autoCommit() {
        try {
            return views.connection().getAutoCommit();
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot read the connection's auto-commit mode: "
                    + e.getMessage(), e);
        }
    }

    private static String statsQuery(ViewStats stats) {
        List<String> rows = new ArrayList<>();
        for (SqlFunctions.Metric metric : SqlFunctions.metrics(stats)) {
            rows.add("(" + Sql.literal(metric.name()) + ", " + metric.value() + "::BIGINT, " + Sql.literal(metric.detail()) + ")");
        }
        return "SELECT * FROM (VALUES " + String.join(", ", rows) + ") AS dbsp_stats(metric, value, detail)";
    }

    private static String name(String written) {
        return written.startsWith("\"") ? written.substring(1, written.length() - 1).replace("\"\"", "\"") : written;
    }

    private static String unescape(String literal) {
        return literal.replace("''", "'");
    }

    private static void closeQuietly(Statement statement, Exception failure) {
        if (statement != null) {
            try {
                statement.close();
            } catch (SQLException e) {
                failure.addSuppressed(e);
            }
        }
    }

    /** What a statement returned: rows, an update count, or a message for the view statements. */
    public static final class Result implements AutoCloseable {
        private final Statement statement;
        private final ResultSet rows;
        private final long updateCount;
        private final String message;

        private Result(Statement statement, ResultSet rows, long updateCount, String message) {
            this.statement = statement;
            this.rows = rows;
            this.updateCount = updateCount;
            this.message = message;
        }

        static Result message(String message) {
            return new Result(null, null, -1, message);
        }

        public Optional<ResultSet> rows() {
            return Optional.ofNullable(rows);
        }

        /** Rows changed by a DML statement, or -1. */
        public long updateCount() {
            return updateCount;
        }

        /** The statement tag of a view statement (e.g. {@code CREATE MATERIALIZED VIEW}). */
        public Optional<String> message() {
            return Optional.ofNullable(message);
        }

        @Override
        public void close() {
            if (statement != null) {
                try {
                    statement.close();
                } catch (SQLException e) {
                    throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "closing a statement failed: " + e.getMessage(), e);
                }
            }
        }
    }
}
