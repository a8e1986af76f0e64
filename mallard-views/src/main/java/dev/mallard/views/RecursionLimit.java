// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * How far one evaluation of a recursive view (its fill at CREATE, or one sync's rounds) may run: at most
 * {@code rounds} semi-naive rounds and at most {@code time}, after which DuckDB's own interrupt stops the statement
 * running then (JDBC's {@code Statement.cancel}, which is DuckDB's interrupt). A recursion that never ends (a counter without a bound, a path over a cycle that carries its
 * length) fails with {@code user.view.recursion_unbounded} instead of holding the views' connection forever.
 */
final class RecursionLimit {
    /** The default of {@link MaterializedViews#recursionLimit}: rounds. */
    static final long DEFAULT_ROUNDS = 10_000;
    /** The default of {@link MaterializedViews#recursionLimit}: time. */
    static final Duration DEFAULT_TIME = Duration.ofSeconds(60);

    private volatile long rounds = DEFAULT_ROUNDS;
    private volatile Duration time = DEFAULT_TIME;

    void set(long rounds, Duration time) {
        requireNonNull(time, "time is null");
        if (rounds < 1 || time.isNegative() || time.isZero()) {
            throw new MallardException(ErrorCode.USER_SQL_INVALID, "a recursion limit needs at least 1 round and a "
                    + "positive time, got " + rounds + " rounds and " + time);
        }
        this.rounds = rounds;
        this.time = time;
    }

    long rounds() {
        return rounds;
    }

    Duration time() {
        return time;
    }

    /** Starts one evaluation of {@code view}'s recursion on {@code connection}; close it when the rounds end. */
    Run start(String view, Connection connection) {
        return new Run(view, connection, rounds, time);
    }

    /** One evaluation: counts its rounds and interrupts DuckDB when its time is up. */
    static final class Run implements AutoCloseable {
        private final String view;
        private final long rounds;
        private final Duration time;
        private final AtomicBoolean done = new AtomicBoolean();
        private final AtomicBoolean interrupted = new AtomicBoolean();
        private final Connection connection;
        /** The statement running now, which the interrupt cancels. */
        private volatile Statement running;
        private long round;

        private Run(String view, Connection connection, long rounds, Duration time) {
            this.view = view;
            this.connection = connection;
            this.rounds = rounds;
            this.time = time;
            CompletableFuture.runAsync(this::interrupt, CompletableFuture.delayedExecutor(time.toMillis(), TimeUnit.MILLISECONDS));
        }

        private void interrupt() {
            if (done.get()) {
                return;
            }
            interrupted.set(true);
            Statement statement = running;
            if (statement != null) {
                try {
                    statement.cancel();
                } catch (SQLException e) {
                    // It ended meanwhile: the next round sees the flag.
                }
            }
        }

        /** Runs a statement of the evaluation, so that the interrupt can stop it. */
        long update(String sql) {
            long start = System.nanoTime();
            try (Statement statement = connection.createStatement()) {
                running = statement;
                statement.execute(sql);
                Sql.traced(start, sql);
                return Math.max(statement.getUpdateCount(), 0);
            } catch (SQLException e) {
                if (interrupted.get()) {
                    throw unbounded();
                }
                throw Sql.maintenanceFailed(sql, e);
            } finally {
                running = null;
            }
        }

        /** A {@code SELECT count(*)} of the evaluation, which the interrupt can stop. */
        long count(String sql) {
            try (Statement statement = connection.createStatement()) {
                running = statement;
                try (java.sql.ResultSet rows = statement.executeQuery(sql)) {
                    rows.next();
                    return rows.getLong(1);
                }
            } catch (SQLException e) {
                if (interrupted.get()) {
                    throw unbounded();
                }
                throw Sql.maintenanceFailed(sql, e);
            } finally {
                running = null;
            }
        }

        /** Called before every round; fails once the rounds or the time are used up. */
        void round() {
            round++;
            if (round > rounds || interrupted.get()) {
                throw unbounded();
            }
        }

        /** The error to throw for a statement that failed: the limit's, when the interrupt stopped it. */
        RuntimeException failed(RuntimeException error) {
            return interrupted.get() ? unbounded() : error;
        }

        MallardException unbounded() {
            String reached = interrupted.get() ? "ran for longer than " + time.toSeconds() + " s" : "took more than "
                    + rounds + " rounds";
            return new MallardException(ErrorCode.USER_VIEW_RECURSION_UNBOUNDED, "materialized view " + view + ": its "
                    + "recursion " + reached + " without reaching a fixpoint (a recursion that never ends, such as a "
                    + "counter or a path length over a cycle); nothing was changed. Bound it: keep r a set (UNION, not "
                    + "UNION ALL, and no ever-growing column), or carry a depth column and stop it in the step's WHERE "
                    + "(WHERE r.depth < 10); or raise the limit (dbsp_recursion_limit(rounds, seconds))");
        }

        @Override
        public void close() {
            done.set(true);
        }
    }
}
