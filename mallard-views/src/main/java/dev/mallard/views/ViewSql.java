// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The SQL front door: runs the view statements DuckDB's grammar does not have and the {@code dbsp_*} calls, and
 * passes every other statement to DuckDB on the attached connection. With auto-sync on (the default), every statement
 * that may have written is followed by a sync, so in auto-commit mode each write leaves every view equal to its query;
 * a read that names a table-backed view syncs first.
 *
 * <p>View DDL ({@code CREATE [OR REPLACE] MATERIALIZED VIEW [IF NOT EXISTS] v AS <query>}, {@code DROP MATERIALIZED
 * VIEW [IF EXISTS] v [CASCADE | RESTRICT]}, {@code REFRESH MATERIALIZED VIEW v}) is read from the text's tokens
 * ({@link ViewDdl}); {@code dbsp_*} calls anywhere in a SELECT are found in DuckDB's parse tree and run before the
 * statement ({@link ViewCalls}). No regular expression decides what a statement is.
 */
public final class ViewSql {
    private static final Logger LOG = LoggerFactory.getLogger(ViewSql.class);
    /** First keywords of statements that only read: one that returns rows under any other may have written (RETURNING). */
    private static final Set<String> READING = Set.of("SELECT", "FROM", "VALUES", "TABLE", "DESCRIBE", "SHOW", "SUMMARIZE",
            "EXPLAIN", "PRAGMA");

    private final MaterializedViews views;
    private final ViewCalls calls;
    private boolean autoSync = true;
    /** {@code dbsp_autopersist}'s value: reported only, since views persist in the database file at every commit. */
    private boolean autopersist = true;
    /** Rows the statements since the last sync changed, by their update counts; negative when not known. */
    private long unsynced;
    /** After-write syncs that failed since this front door opened (their writes stand; the next sync applies them). */
    private long failedSyncs;
    /** The transaction a {@code BEGIN} sent as SQL text opened on this connection, until its COMMIT/ROLLBACK; else null. */
    private Object textTransaction;
    /** First keywords of the statements that open and end a transaction (DuckDB's spellings). */
    private static final Set<String> BEGINS = Set.of("BEGIN", "START");
    private static final Set<String> ENDS = Set.of("COMMIT", "END", "ROLLBACK", "ABORT");

    public ViewSql(MaterializedViews views) {
        this.views = requireNonNull(views, "views is null");
        this.calls = new ViewCalls(views, this);
    }

    /**
     * Whether {@code sql} is a statement of the front door's own (view DDL) or calls a {@code dbsp_*} function, and so
     * must run through {@link #execute} rather than go to DuckDB as it is. Decided on the text's tokens (comments and
     * strings are not read as keywords), never on its raw characters.
     */
    public static boolean recognizes(String sql) {
        requireNonNull(sql, "sql is null");
        List<SqlTokens.Token> tokens = SqlTokens.of(sql);
        return ViewDdl.isViewDdl(tokens) || ViewCalls.mentionsViewFunction(tokens);
    }

    /**
     * The {@code dbsp_*} functions the front door runs, scalar and table spellings alike; a gate in front of it (the
     * server's) classifies each of these and refuses any other {@code dbsp_*} name.
     */
    public static Set<String> functionNames() {
        return ViewCalls.functionNames();
    }

    /** {@code dbsp_autopersist()}: what {@code dbsp_autopersist(bool)} last set (views persist either way). */
    public boolean autopersist() {
        return autopersist;
    }

    public void autopersist(boolean on) {
        this.autopersist = on;
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
     * since the last one. It never fails the write it follows, which committed already: a sync that fails (a
     * conflict with another connection's sync, an engine fault) rolls back on its own, is logged and counted, and its
     * changes stay captured, so the next sync (the next write's, a read of a view through the front door, or
     * {@code dbsp_sync()}) applies them. Returns the view rows changed, 0 when the sync failed.
     */
    public long syncAfterWrite() {
        long rows = unsynced;
        unsynced = 0;
        try {
            return views.syncAfterWrite(rows);
        } catch (MallardException e) {
            failedSyncs++;
            unsynced = -1;
            LOG.warn("views not synced after a committed write; the write stands and the next sync applies its changes "
                    + "code={} reason=\"{}\"", e.errorCode().code(), e.getMessage());
            return 0;
        }
    }

    /** After-write syncs that failed since this front door opened; each one's changes were applied by a later sync. */
    public long failedSyncs() {
        return failedSyncs;
    }

    /** Runs one statement. Close the result to close its JDBC statement. */
    public Result execute(String sql) {
        requireNonNull(sql, "sql is null");
        List<SqlTokens.Token> tokens = SqlTokens.of(sql);
        if (ViewDdl.isViewDdl(tokens)) {
            return ViewDdl.parse(sql, tokens, views).run(views);
        }
        if (ViewCalls.mentionsViewFunction(tokens)) {
            Optional<Result> answered = calls.run(sql);
            if (answered.isPresent()) {
                return answered.get();
            }
        }
        syncBeforeReading(tokens);
        Result result = passThroughTracked(sql, SqlTokens.firstKeyword(tokens));
        boolean mayHaveWritten = result.rows().isEmpty() || mayWrite(tokens);
        wrote(result.rows().isPresent() ? -1 : result.updateCount());
        if (autoSync && mayHaveWritten && autoCommit()) {
            syncAfterWrite();
        }
        return result;
    }

    /**
     * Runs a statement on DuckDB, knowing the transactions it opens and ends as text ({@code BEGIN}, {@code COMMIT}): like
     * a JDBC transaction's, one open while a view starts capturing its tables makes its end trigger the consistency
     * check, which applies the rows it wrote before it saw the capture triggers.
     */
    private Result passThroughTracked(String sql, String keyword) {
        boolean ends = ENDS.contains(keyword);
        try {
            Result result = passThrough(sql);
            if (BEGINS.contains(keyword) && textTransaction == null) {
                textTransaction = new Object();
                views.transactionStarted(textTransaction);
            }
            return result;
        } finally {
            if (ends && textTransaction != null) {
                // A COMMIT that fails rolls back: the transaction ended either way.
                views.transactionEnded(textTransaction);
                textTransaction = null;
            }
        }
    }

    /** Whether a statement that returned rows may have written ({@code INSERT ... RETURNING}): it does not start as a read. */
    static boolean mayWrite(List<SqlTokens.Token> tokens) {
        return !READING.contains(SqlTokens.firstKeyword(tokens));
    }

    /**
     * Before a read that names a table-backed view: a sync (as after a write, and as harmless to the read when it
     * fails), so the read sees what a raw DuckDB writer committed or a failed sync left pending.
     */
    void syncBeforeReading(List<SqlTokens.Token> tokens) {
        if (!mayWrite(tokens) && views.readsTableView(tokens) && autoCommit()) {
            wrote(-1);
            syncAfterWrite();
        }
    }

    Result rows(String sql) {
        return passThrough(sql);
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

    private boolean autoCommit() {
        try {
            return views.connection().getAutoCommit();
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot read the connection's auto-commit mode: "
                    + e.getMessage(), e);
        }
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

        static Result of(Statement statement, ResultSet rows) {
            return new Result(statement, rows, -1, null);
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
