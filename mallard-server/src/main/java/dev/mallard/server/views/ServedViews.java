// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.views;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.error.Redactor;
import dev.mallard.views.MaterializedViews;
import dev.mallard.views.ViewSql;
import java.sql.SQLException;
import java.util.function.Supplier;
import org.duckdb.DuckDBConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Materialized views through the server, on the views module's SQL front door: a view statement or a SELECT calling
 * {@code dbsp_*} functions (as the server's SQL gate, {@code AccessPolicy}, finds them in DuckDB's parse tree) runs through a
 * session's {@link ViewSql}, and every write through the server is followed by a sync, so a view read after a write
 * that committed shows it.
 *
 * <p>One {@link MaterializedViews} of the database (the shared one) holds the {@code dbsp_*} DuckDB functions and
 * is the lock all view maintenance runs under (the functions synchronise on it too): the views module's instances
 * are one thread's at a time, and two syncs at once would race for the same delta logs. It is attached at startup
 * when the database already has views, else on the first text that mentions them, so a server whose clients never
 * use views neither creates the views catalog nor pays a sync per write.
 */
public final class ServedViews implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ServedViews.class);

    private final Supplier<DuckDBConnection> connections;
    private volatile MaterializedViews shared;

    private ServedViews(Supplier<DuckDBConnection> connections) {
        this.connections = requireNonNull(connections, "connections is null");
    }

    /**
     * @param connections new connections to the served database; one is kept for the shared views once attached
     */
    public static ServedViews open(Supplier<DuckDBConnection> connections) {
        ServedViews views = new ServedViews(connections);
        if (views.catalogExists()) {
            views.shared();
        }
        return views;
    }

    /** The SQL front door on a session's connection; close it before the connection. */
    public FrontDoor frontDoor(DuckDBConnection session) {
        requireNonNull(session, "session is null");
        MaterializedViews lock = shared();
        synchronized (lock) {
            // The shared views checked the database when they were attached; a session's views need not again.
            MaterializedViews views = MaterializedViews.attachWithoutCheck(session);
            return new FrontDoor(views, new ViewSql(views), lock);
        }
    }

    /**
     * Brings every view up to date with what committed; a no-op while no views were attached. The write it follows
     * has committed already, so a sync that fails (a transaction conflict with a client's own transaction, say) does
     * not fail that write: the changes stay captured in the delta logs, and the next write or {@code dbsp_sync()}
     * applies them.
     */
    public void afterWrite() {
        afterWrite(-1);
    }

    /**
     * As {@link #afterWrite()}, told the rows the write changed (its update count; negative when not known): a
     * write that only views merged on read see then costs no query ({@link MaterializedViews#syncAfterWrite(long)}).
     */
    public void afterWrite(long rowsChanged) {
        MaterializedViews views = shared;
        if (views != null) {
            synchronized (views) {
                try {
                    views.syncAfterWrite(rowsChanged);
                } catch (MallardException e) {
                    LOG.warn("views not synced after a write, the next sync applies the changes code={} reason={}",
                            e.errorCode().code(), Redactor.redact(String.valueOf(e.getMessage())));
                }
            }
        }
    }

    /** The shared views, attached on first use with the {@code dbsp_*} functions registered. */
    private MaterializedViews shared() {
        MaterializedViews views = shared;
        if (views != null) {
            return views;
        }
        synchronized (this) {
            if (shared == null) {
                DuckDBConnection connection = connections.get();
                try {
                    shared = MaterializedViews.attach(connection).registerFunctions();
                } catch (RuntimeException e) {
                    close(connection, e);
                    throw e;
                }
                LOG.info("materialized views attached views={}", shared.names().size());
            }
            return shared;
        }
    }

    private boolean catalogExists() {
        try (DuckDBConnection connection = connections.get()) {
            return MaterializedViews.catalogExists(connection);
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot look for the materialized views catalog: " + e.getMessage(), e);
        }
    }

    private static void close(DuckDBConnection connection, Exception failure) {
        try {
            connection.close();
        } catch (SQLException e) {
            failure.addSuppressed(e);
        }
    }

    @Override
    public void close() {
        MaterializedViews views = shared;
        if (views != null) {
            synchronized (views) {
                DuckDBConnection connection = views.connection();
                try (connection) {
                    views.close();
                } catch (SQLException e) {
                    throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "closing the views' connection failed: " + e.getMessage(), e);
                }
            }
        }
    }

    /** A session's front door: its own views instance on its connection, used under the shared lock. */
    public static final class FrontDoor implements AutoCloseable {
        private final MaterializedViews views;
        private final ViewSql sql;
        private final Object lock;

        private FrontDoor(MaterializedViews views, ViewSql sql, Object lock) {
            this.views = views;
            this.sql = sql;
            this.lock = lock;
        }

        /** Runs one text through {@link ViewSql}; its rows, if any, are on the session's connection. */
        public ViewSql.Result execute(String text) {
            synchronized (lock) {
                return sql.execute(text);
            }
        }

        @Override
        public void close() {
            synchronized (lock) {
                views.close();
            }
        }
    }
}
