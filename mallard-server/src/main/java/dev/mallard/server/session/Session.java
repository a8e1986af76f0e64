// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.session;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.arrow.ArrowExport;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.server.rls.RowLevelSecurity;
import dev.mallard.server.views.ServedViews;
import dev.mallard.views.ViewSql;
import java.io.IOException;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.arrow.memory.BufferAllocator;
import org.duckdb.DuckDBConnection;

/**
 * One client's DuckDB connection ({@code duplicate()} of the server's), so SET, USE and transactions stay in it.
 * Calls may come from several threads (Flight and HTTP requests with the same token); each use of the connection
 * holds the session's lock. Prepared statements and results not yet fetched live here until closed or fetched.
 */
public final class Session implements AutoCloseable {
    /** The configuration key that caps a session's prepared statements, named in errors. */
    public static final String MAX_PREPARED_STATEMENTS_KEY = "max_prepared_statements_per_session";

    private final String id;
    private final String username;
    private final Instant tokenExpiresAt;
    private final DuckDBConnection connection;
    private final BufferAllocator allocator;
    private final ScheduledExecutorService timer;
    private final Clock clock;
    private final ServedViews views;
    private final Optional<RowLevelSecurity> security;
    private ServedViews.FrontDoor frontDoor;
    private final ReentrantLock lock = new ReentrantLock();
    private final Map<String, Object> handles = new ConcurrentHashMap<>();
    private final Map<String, Object> derived = new ConcurrentHashMap<>();
    private final PreparedStatements prepared;
    private volatile Instant lastUsed;
    private volatile Statement running;
    /** Results not yet closed; with streaming results DuckDB computes them as they are read. */
    private final java.util.Set<ResultStream> openResults = ConcurrentHashMap.newKeySet();
    private final boolean streamResults;
    private volatile Optional<String> runningId = Optional.empty();
    private volatile boolean cancelRequested;
    private volatile boolean closed;
    /** The gate's {@code json_serialize_sql}, prepared on the connection at its first use (closed with the connection). */
    private PreparedStatement serialize;

    Session(String id, String username, Instant tokenExpiresAt, DuckDBConnection connection, BufferAllocator allocator,
            ScheduledExecutorService timer, Clock clock, ServedViews views, int maxPreparedStatements, boolean streamResults) {
        this(id, username, tokenExpiresAt, connection, allocator, timer, clock, views, maxPreparedStatements, streamResults, Optional.empty());
    }

    /** @param security the row-level security of the session's token, which {@link #admit} applies */
    Session(String id, String username, Instant tokenExpiresAt, DuckDBConnection connection, BufferAllocator allocator,
            ScheduledExecutorService timer, Clock clock, ServedViews views, int maxPreparedStatements, boolean streamResults,
            Optional<RowLevelSecurity> security) {
        this.security = requireNonNull(security, "security is null");
        this.id = requireNonNull(id, "id is null");
        this.username = requireNonNull(username, "username is null");
        this.tokenExpiresAt = requireNonNull(tokenExpiresAt, "tokenExpiresAt is null");
        this.connection = requireNonNull(connection, "connection is null");
        this.allocator = requireNonNull(allocator, "allocator is null");
        this.timer = requireNonNull(timer, "timer is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.views = requireNonNull(views, "views is null");
        this.prepared = new PreparedStatements(maxPreparedStatements);
        this.streamResults = streamResults;
        this.lastUsed = clock.instant();
    }

    public String id() {
        return id;
    }

    public String username() {
        return username;
    }

    public Instant tokenExpiresAt() {
        return tokenExpiresAt;
    }

    public BufferAllocator allocator() {
        return allocator;
    }

    public Instant lastUsed() {
        return lastUsed;
    }

    /**
     * The text DuckDB runs for a client's statement: under RESTRICTED and RESTRICT_READ_ONLY the row filter rewrite of
     * the session's token (refusing what its grants do not allow), else the statement itself.
     */
    public String admit(String sql) {
        if (security.isEmpty() || !security.get().rewrites()) {
            return sql;
        }
        return sql(connection -> security.get().admit(connection, sql));
    }

    /**
     * DuckDB's {@code json_serialize_sql} on this session's connection, prepared once: preparing it is most of what a
     * call costs, and the gate calls it for every statement it has not seen. Call it inside {@link #sql}.
     */
    public dev.mallard.core.sql.StatementClassifier.Serializer serializer() {
        return this::serialize;
    }

    private String serialize(String sql) throws SQLException {
        if (!lock.isHeldByCurrentThread()) {
            throw new IllegalStateException("the session's serializer runs inside Session.sql, which holds the connection");
        }
        if (serialize == null) {
            serialize = connection.prepareStatement("SELECT system.main.json_serialize_sql(?::VARCHAR)");
        }
        try {
            serialize.setString(1, sql);
            try (java.sql.ResultSet rs = serialize.executeQuery()) {
                rs.next();
                return rs.getString(1);
            }
        } catch (SQLException e) {
            // Prepared anew at the next call, whatever state the failure left the statement in.
            PreparedStatement failed = serialize;
            serialize = null;
            try {
                failed.close();
            } catch (SQLException closing) {
                e.addSuppressed(closing);
            }
            throw e;
        }
    }

    /** Runs work on the connection under the session's lock. SQL errors become {@code user.sql.invalid}. */
    public <T> T sql(SqlWork<T> work) {
        try {
            return sqlOnce(work);
        } catch (MallardException e) {
            // A client that closes a result it did not read to the end and at once sends the next statement races the
            // stream's thread, which closes the result when it hears of the cancel: wait for that, briefly, once.
            if (e.errorCode() != ErrorCode.USER_SESSION_BUSY || lock.isHeldByCurrentThread() || !awaitResultsClosed(java.time.Duration.ofSeconds(2))) {
                throw e;
            }
            return sqlOnce(work);
        }
    }

    /**
     * Waits until every result open now has closed, at most {@code patience}.
     *
     * @return whether they all closed
     */
    private boolean awaitResultsClosed(java.time.Duration patience) {
        List<ResultStream> open = List.copyOf(openResults);
        long deadline = System.nanoTime() + patience.toNanos();
        synchronized (openResults) {
            while (open.stream().anyMatch(openResults::contains)) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                try {
                    openResults.wait(TimeUnit.NANOSECONDS.toMillis(left) + 1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
        }
        return true;
    }

    private <T> T sqlOnce(SqlWork<T> work) {
        return withLock(() -> {
            try {
                return work.run(connection);
            } catch (SQLException e) {
                String message = e.getMessage() == null ? e.toString() : e.getMessage();
                if (message.contains(OPEN_RESULT)) {
                    throw new MallardException(ErrorCode.USER_SESSION_BUSY, "this session is still sending an earlier result that its client has not "
                            + "read to the end (a JDBC ResultSet, a DoGet or an HTTP response on the same connection or token), and DuckDB streams it "
                            + "from the session's connection; read or close that result first, run this statement on another connection, or start "
                            + "the server with stream_results: false", e);
                }
                throw new MallardException(ErrorCode.USER_SQL_INVALID, message, e);
            }
        });
    }

    /** DuckDB's message when a statement starts while a streaming result of the same connection is open. */
    private static final String OPEN_RESULT = "connection has an open result";

    /**
     * Runs one SQL text (several statements run in order; the last decides the outcome): its rows as a stream, or
     * the number of rows it changed.
     */
    public Outcome execute(dev.mallard.server.sql.CheckedSql checked, QueryOptions options) {
        return checked.throughViews() ? executeThroughViews(checked.sql(), options) : execute(checked.sql(), options);
    }

    /** Runs one SQL text on DuckDB, as {@link #execute(dev.mallard.server.sql.CheckedSql, QueryOptions)} does for a text the gate passed to it. */
    public Outcome execute(String sql, QueryOptions options) {
        return sql(connection -> {
            Statement statement = connection.createStatement();
            return runOwned(statement, options, () -> statement.execute(sql));
        });
    }

    /** Brings the materialized views up to date after a write this session made other than by a statement (ingestion). */
    public void syncViews() {
        views.afterWrite();
    }

    /**
     * A text naming a view statement or a {@code dbsp_*} function runs through the views module's front door on this
     * session's connection (it syncs after writes itself). Neither the query timeout nor a cancel interrupts it.
     */
    public Outcome executeThroughViews(String sql, QueryOptions options) {
        return sql(connection -> {
            if (frontDoor == null) {
                frontDoor = views.frontDoor(connection);
            }
            ViewSql.Result result = throughViews(connection, sql);
            Optional<java.sql.ResultSet> rows = result.rows();
            if (rows.isPresent()) {
                return new Outcome(Optional.of(stream(rows.get().getStatement(), rows.get(), true, options)), OptionalLong.empty());
            }
            result.close();
            derived.clear();
            return new Outcome(Optional.empty(), OptionalLong.of(Math.max(0, result.updateCount())));
        });
    }

    /**
     * The views module runs several statements on the connection and reads results in between, which a streaming
     * result would refuse: its statements run with materialised results.
     */
    private ViewSql.Result throughViews(DuckDBConnection connection, String sql) throws SQLException {
        if (!streamResults) {
            return frontDoor.execute(sql);
        }
        setStreaming(connection, false);
        try {
            return frontDoor.execute(sql);
        } finally {
            setStreaming(connection, true);
        }
    }

    /** The DuckDB JDBC setting that makes this connection's queries answer streaming results. */
    static final String STREAM_RESULTS_SETTING = "jdbc_stream_results";

    static void setStreaming(java.sql.Connection connection, boolean on) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute("SET " + STREAM_RESULTS_SETTING + " = " + on);
        }
    }

    /** Runs a prepared statement whose parameters are set; it stays open after the stream closes. */
    public Outcome execute(PreparedStatement statement, QueryOptions options) {
        return sql(connection -> {
            if (timed(statement, options, statement::execute)) {
                return new Outcome(Optional.of(stream(statement, statement.getResultSet(), false, options)), OptionalLong.empty());
            }
            long count = Math.max(0, statement.getLargeUpdateCount());
            derived.clear();
            views.afterWrite(count);
            return new Outcome(Optional.empty(), OptionalLong.of(count));
        });
    }

    /**
     * Runs a prepared statement the caller hands over: a result stream that it answers closes the statement with
     * itself; without rows, or failing, the statement is closed at once.
     */
    public Outcome executeOwned(PreparedStatement statement, QueryOptions options) {
        return sql(connection -> runOwned(statement, options, statement::execute));
    }

    /**
     * Runs a statement this call owns: a result stream closes it with itself; an update count, or a failure, closes it
     * at once (a write also drops the derived schemas and lets the views sync).
     */
    private Outcome runOwned(Statement statement, QueryOptions options, Execution execution) throws SQLException {
        try {
            if (timed(statement, options, execution)) {
                return new Outcome(Optional.of(stream(statement, statement.getResultSet(), true, options)), OptionalLong.empty());
            }
            long count = Math.max(0, statement.getLargeUpdateCount());
            statement.close();
            derived.clear();
            views.afterWrite(count);
            return new Outcome(Optional.empty(), OptionalLong.of(count));
        } catch (SQLException | RuntimeException e) {
            statement.close();
            throw e;
        }
    }

    /** Closes something made on this session's connection, under its lock; also after the session closed. */
    public void release(AutoCloseable resource) {
        closeAll(List.of(resource));
    }

    /** A statement that returns rows; DuckDB computes (materialises) its result while executing. */
    @FunctionalInterface
    private interface Execution {
        boolean run() throws SQLException;
    }

    private boolean timed(Statement statement, QueryOptions options, Execution execution) throws SQLException {
        AtomicBoolean fired = new AtomicBoolean();
        Optional<ScheduledFuture<?>> alarm = options.timeout().map(limit -> timer.schedule(() -> {
            fired.set(true);
            interrupt(statement);
        }, limit.toMillis(), TimeUnit.MILLISECONDS));
        cancelRequested = false;
        runningId = options.queryId();
        running = statement;
        try {
            return execution.run();
        } catch (SQLException e) {
            if (fired.get()) {
                throw timedOut(options, e);
            }
            if (cancelRequested) {
                throw cancelled(e);
            }
            throw e;
        } finally {
            running = null;
            alarm.ifPresent(future -> future.cancel(false));
        }
    }

    static MallardException timedOut(QueryOptions options, Exception cause) {
        return new MallardException(ErrorCode.USER_SQL_TIMEOUT, "the statement ran longer than its timeout of "
                + options.timeout().orElseThrow().toSeconds() + " s and was interrupted; narrow it, or raise " + QueryOptions.QUERY_TIMEOUT
                + " within the server's query_timeout_seconds", cause);
    }

    static MallardException cancelled(Exception cause) {
        return new MallardException(ErrorCode.USER_SQL_CANCELLED, "the statement was cancelled on request while it ran", cause);
    }

    /**
     * Interrupts the statement executing in DuckDB now, if any, without waiting for the session's lock (the running
     * statement holds it). A result being read is left alone: its reader stops it (a DoGet checks its own cancel).
     *
     * @return whether a statement was executing
     */
    public boolean interruptExecuting() {
        Statement statement = running;
        if (statement == null) {
            return false;
        }
        cancelRequested = true;
        interrupt(statement);
        return true;
    }

    /**
     * Cancels what this session runs: interrupts the statement executing in DuckDB, and stops every result being
     * read before its next batch (with streaming results DuckDB computes a result as it is read). With an id, only
     * the statement and results that were given that id ({@code x-dd-query-id}).
     *
     * @return whether anything asked for was running
     */
    public boolean cancelRunning(Optional<String> queryId) {
        boolean found = false;
        for (ResultStream result : openResults) {
            if (queryId.isEmpty() || queryId.equals(result.queryId())) {
                result.cancel();
                found = true;
            }
        }
        Statement statement = running;
        if (statement == null || queryId.isPresent() && !queryId.equals(runningId)) {
            return found;
        }
        cancelRequested = true;
        interrupt(statement);
        return true;
    }

    /**
     * Whether a statement of this session is executing in DuckDB now, or a result of it is open (being sent, or
     * waiting for its DoGet): with streaming results DuckDB computes a result as it is read.
     */
    public boolean isRunning() {
        return running != null || !openResults.isEmpty();
    }

    /** Called once a result has closed in DuckDB. */
    void closed(ResultStream result) {
        synchronized (openResults) {
            openResults.remove(result);
            openResults.notifyAll();
        }
    }

    private static void interrupt(Statement statement) {
        try {
            statement.cancel();
        } catch (SQLException e) {
            // The statement finished or closed meanwhile: nothing left to interrupt.
        }
    }

    private ResultStream stream(Statement statement, java.sql.ResultSet rs, boolean ownsStatement, QueryOptions options) {
        ResultStream result = new ResultStream(this, statement, rs, ArrowExport.export(rs, allocator, options.fetchSize()), ownsStatement, options);
        openResults.add(result);
        return result;
    }

    /** The outcome of a statement: rows, or a count of changed rows. */
    public record Outcome(Optional<ResultStream> rows, OptionalLong updateCount) {}

    /**
     * A value derived from this session's settings, computed once: the Arrow schema DuckDB gives a list of column
     * types, asked of DuckDB with a query of its own, is the same for every prepare until a statement that returns no
     * rows (a SET, say) runs, which forgets every derived value.
     */
    public <T> T derived(String key, Class<T> type, java.util.function.Supplier<T> compute) {
        Object known = derived.get(key);
        if (type.isInstance(known)) {
            return type.cast(known);
        }
        T value = compute.get();
        derived.put(key, value);
        return value;
    }

    /** Keeps an object (a prepared statement, a result not yet fetched) under a handle until taken or closed. */
    public void keep(String handle, AutoCloseable value) {
        handles.put(requireNonNull(handle, "handle is null"), requireNonNull(value, "value is null"));
        touch();
    }

    public <T> Optional<T> find(String handle, Class<T> type) {
        touch();
        return Optional.ofNullable(handles.get(handle)).filter(type::isInstance).map(type::cast);
    }

    public <T> Optional<T> take(String handle, Class<T> type) {
        Optional<T> found = find(handle, type);
        found.ifPresent(value -> handles.remove(handle));
        return found;
    }

    /**
     * Keeps a prepared statement under a handle until the client closes it, the session closes, or the session holds
     * more than its {@code max_prepared_statements_per_session} and this one is the least recently used not in use.
     */
    public void keepPrepared(String handle, AutoCloseable statement) {
        prepared.add(handle, statement);
        touch();
        closeAll(prepared.overflow());
    }

    /**
     * The prepared statement under a handle, now the most recently used.
     *
     * @throws MallardException {@code user.server.prepared_statement_closed} when the session does not hold it
     */
    public <T> T findPrepared(String handle, Class<T> type) {
        touch();
        return prepared.find(handle).filter(type::isInstance).map(type::cast).orElseThrow(() -> preparedGone(handle));
    }

    /**
     * The prepared statement under a handle, held for a call that executes it or streams its result: until the lease
     * is closed it is not closed to keep within the session's cap (a statement the client closes meanwhile is closed
     * when the lease ends).
     *
     * @throws MallardException {@code user.server.prepared_statement_closed} when the session does not hold it
     */
    public <T> Lease<T> leasePrepared(String handle, Class<T> type) {
        touch();
        Object value = prepared.lease(handle).orElseThrow(() -> preparedGone(handle));
        if (!type.isInstance(value)) {
            prepared.release(handle);
            throw preparedGone(handle);
        }
        return new Lease<>(handle, type.cast(value));
    }

    /** Closes the prepared statement under a handle now, or when the call using it ends; nothing when unknown. */
    public void closePrepared(String handle) {
        prepared.remove(handle).ifPresent(statement -> closeAll(List.of(statement)));
    }

    /** How many prepared statements the session holds now. */
    int preparedStatementCount() {
        return prepared.size();
    }

    /** A prepared statement held for one call; closing ends the hold. */
    public final class Lease<T> implements AutoCloseable {
        private final String handle;
        private final T value;
        private boolean released;

        private Lease(String handle, T value) {
            this.handle = handle;
            this.value = value;
        }

        public T value() {
            return value;
        }

        @Override
        public void close() {
            if (released) {
                return;
            }
            released = true;
            List<AutoCloseable> toClose = new java.util.ArrayList<>();
            prepared.release(handle).ifPresent(toClose::add);
            toClose.addAll(prepared.overflow());
            closeAll(toClose);
        }
    }

    private MallardException preparedGone(String handle) {
        int cap = prepared.capacity();
        if (prepared.wasEvicted(handle)) {
            return new MallardException(ErrorCode.USER_PREPARED_STATEMENT_CLOSED, "the prepared statement was closed because this session held more than "
                    + cap + " prepared statements (the server's " + MAX_PREPARED_STATEMENTS_KEY + ") and it was the least recently used; prepare it "
                    + "again, close prepared statements the client no longer uses, or raise " + MAX_PREPARED_STATEMENTS_KEY);
        }
        return new MallardException(ErrorCode.USER_PREPARED_STATEMENT_CLOSED, "no prepared statement under this handle in this session: the client "
                + "closed it, or the session held more than " + cap + " (" + MAX_PREPARED_STATEMENTS_KEY + ") and closed it as the least recently "
                + "used; prepare it again");
    }

    /** Closes prepared statements this session gave up, under its lock (another call may be using the connection). */
    private void closeAll(List<AutoCloseable> statements) {
        if (statements.isEmpty()) {
            return;
        }
        withLock(() -> {
            for (AutoCloseable statement : statements) {
                try {
                    statement.close();
                } catch (Exception e) {
                    // A statement that fails to close holds nothing more DuckDB could free; the connection's close frees the rest.
                }
            }
            return null;
        }, false);
    }

    public void touch() {
        lastUsed = clock.instant();
    }

    public boolean isClosed() {
        return closed;
    }

    <T> T withLock(Callable<T> work) {
        return withLock(work, true);
    }

    /** With {@code requireOpen} false the work runs on a closed session too: for releasing what it held. */
    <T> T withLock(Callable<T> work, boolean requireOpen) {
        lock.lock();
        try {
            if (closed && requireOpen) {
                throw new MallardException(ErrorCode.USER_AUTH_FAILED, "the session was closed (idle too long or closed by the client); log in again");
            }
            touch();
            return work.call();
        } catch (IOException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "reading a DuckDB result failed: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new MallardException(ErrorCode.SYSTEM_INTERNAL, e.toString(), e);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void close() {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            for (Object value : handles.values()) {
                try {
                    ((AutoCloseable) value).close();
                } catch (Exception e) {
                    // Closing the connection below frees what DuckDB holds for it.
                }
            }
            handles.clear();
            for (AutoCloseable statement : prepared.clear()) {
                try {
                    statement.close();
                } catch (Exception e) {
                    // Closing the connection below frees what DuckDB holds for it.
                }
            }
            if (frontDoor != null) {
                try {
                    frontDoor.close();
                } catch (RuntimeException e) {
                    // Closing the connection below ends what the views held on it.
                }
            }
            connection.close();
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "closing a DuckDB session failed: " + e.getMessage(), e);
        } finally {
            lock.unlock();
        }
    }
}
