// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.flight;

import static java.util.Objects.requireNonNull;

import dev.mallard.server.session.QueryOptions;
import dev.mallard.server.session.Session;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.arrow.flight.CancelStatus;

/**
 * A prepared query whose FlightInfo was answered from the prepared statement's schema and which runs when its
 * ticket is fetched (DoGet). Running it in DoGet rather than in GetFlightInfo is what makes a long query
 * cancellable: the JDBC driver holds its statement's monitor through GetFlightInfo, so {@code Statement.cancel()}
 * can only act once DoGet has begun, by cancelling that call; and {@code CancelFlightInfo} needs the info first.
 */
final class DeferredQuery implements AutoCloseable {
    private enum State { WAITING, RUNNING, DONE }

    private final String preparedHandle;
    private final PreparedQuery prepared;
    private final List<Object> parameters;
    private final QueryOptions options;
    private final AtomicReference<State> state = new AtomicReference<>(State.WAITING);
    private volatile boolean cancelled;

    /** The prepared statement's DoGet holds it while it runs and streams, so that the session's cap does not close it. */
    @FunctionalInterface
    interface Hold extends AutoCloseable {
        @Override
        void close();
    }

    /** @param preparedHandle the client's prepared statement's handle, or null for a statement query's own */
    private DeferredQuery(String preparedHandle, PreparedQuery prepared, List<Object> parameters, QueryOptions options) {
        this.preparedHandle = preparedHandle;
        this.prepared = requireNonNull(prepared, "prepared is null");
        // A parameter may be NULL, which List.copyOf refuses.
        this.parameters = java.util.Collections.unmodifiableList(new java.util.ArrayList<>(requireNonNull(parameters, "parameters is null")));
        this.options = requireNonNull(options, "options is null");
    }

    /** A query of a client's prepared statement, kept in the session under {@code preparedHandle}. */
    static DeferredQuery ofPrepared(String preparedHandle, PreparedQuery prepared, List<Object> parameters, QueryOptions options) {
        return new DeferredQuery(preparedHandle, prepared, parameters, options);
    }

    /**
     * A {@code CommandStatementQuery}: prepared when its FlightInfo was asked for (so the info carries its schema), run
     * in its DoGet like a prepared query so that a cancel can reach it while it runs. It owns its statement: the DoGet
     * closes it, or the session when the ticket is never fetched.
     */
    static DeferredQuery ofStatement(PreparedQuery prepared, QueryOptions options) {
        return new DeferredQuery(null, prepared, List.of(), options);
    }

    /**
     * Holds the prepared statement for the DoGet that runs the query; a statement query's own is closed when the hold ends.
     *
     * @throws dev.mallard.core.error.MallardException {@code user.server.prepared_statement_closed} when the session no
     *     longer holds it (the client closed it, or the session's cap did after the FlightInfo was answered)
     */
    Hold hold(Session session) {
        if (preparedHandle == null) {
            return () -> session.release(prepared);
        }
        return session.leasePrepared(preparedHandle, PreparedQuery.class)::close;
    }

    PreparedQuery prepared() {
        return prepared;
    }

    /** The parameter row bound when the FlightInfo was asked for. */
    List<Object> parameters() {
        return parameters;
    }

    QueryOptions options() {
        return options;
    }

    /** Claims the query for one DoGet; false when it was fetched already or cancelled. */
    boolean start() {
        return !cancelled && state.compareAndSet(State.WAITING, State.RUNNING);
    }

    void finish() {
        state.set(State.DONE);
    }

    boolean cancelled() {
        return cancelled;
    }

    /**
     * Cancels the query: one not yet fetched will not run, one executing in DuckDB is interrupted, and one whose
     * result is being sent stops before its next batch ({@code CANCELLING}: the DoGet ends with CANCELLED).
     */
    CancelStatus cancel(Session session) {
        if (state.get() == State.DONE) {
            return CancelStatus.NOT_CANCELLABLE;
        }
        cancelled = true;
        if (state.compareAndSet(State.WAITING, State.DONE)) {
            return CancelStatus.CANCELLED;
        }
        if (state.get() == State.RUNNING) {
            // Executing: interrupted in DuckDB. Being sent (DuckDB computing a streaming result as it is read): the DoGet
            // sees the cancel before its next batch.
            return session.interruptExecuting() ? CancelStatus.CANCELLED : CancelStatus.CANCELLING;
        }
        return CancelStatus.NOT_CANCELLABLE;
    }

    @Override
    public void close() throws java.sql.SQLException {
        // A client's prepared statement belongs to its own handle; a statement query's own closes with it.
        if (preparedHandle == null) {
            prepared.close();
        }
    }
}
