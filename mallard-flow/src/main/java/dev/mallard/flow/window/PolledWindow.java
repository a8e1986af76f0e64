// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.window;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.engine.Engine;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.flow.config.PipelineConfig.PolledWindowConfig;
import dev.mallard.flow.sink.ResultTable;
import dev.mallard.flow.sink.Sink;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.duckdb.DuckDBConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * SQLFlow's tumbling window ({@code tables.sql[].manager}): on the wall clock, every poll_interval_seconds, the rows
 * {@code collect_closed_windows_sql} selects are written to the window's sink and flushed, then
 * {@code delete_closed_windows_sql} runs. What is closed is the user's SQL's to say (SQLFlow's examples compare the
 * bucket with {@code now()}), so records that arrive for a bucket already published form new rows and are published
 * at a later poll.
 *
 * <p>Collect, publish and delete run in one transaction on a connection of its own, so they see only committed rows,
 * {@code now()} is the same instant in the collect and the delete query (DuckDB fixes it at the start of the
 * transaction: a row that turns closed between the two is neither lost nor published twice), and a sink failure
 * leaves the rows in the table. A crash between the sink's flush and the commit publishes those rows again on the
 * next poll (at-least-once, like the event-time windows). The pipeline's thread calls it between batches.
 */
public final class PolledWindow implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PolledWindow.class);
    private static final String COLLECTED = "__mallard_polled_window";

    private final PolledWindowConfig config;
    private final DuckDBConnection own;
    private final Sink sink;
    private final long intervalNanos;
    private long nextPollNanos;
    private boolean polledOnce;

    /** @param sink the window's sink, already wrapped in its retry ladder; the window closes it */
    public PolledWindow(PolledWindowConfig config, Engine engine, Sink sink) {
        this.config = requireNonNull(config, "config is null");
        this.sink = requireNonNull(sink, "sink is null");
        this.intervalNanos = config.pollIntervalSeconds() * 1_000_000_000L;
        this.own = engine.newSession();
    }

    public PolledWindowConfig config() {
        return config;
    }

    /** The monotonic time the next poll is due at (the first one is due at once). */
    public long nextPollNanos() {
        return nextPollNanos;
    }

    /** Polls when the interval has passed since the last poll (or none ran yet). */
    public WindowHandOver.Closed pollIfDue(long nowNanos) {
        if (polledOnce && nowNanos - nextPollNanos < 0) {
            return WindowHandOver.Closed.NOTHING;
        }
        return poll(nowNanos);
    }

    /** Collects, publishes and deletes now; see the class comment. */
    public WindowHandOver.Closed poll(long nowNanos) {
        polledOnce = true;
        nextPollNanos = nowNanos + intervalNanos;
        long rows;
        try (Statement statement = own.createStatement()) {
            statement.execute("BEGIN TRANSACTION");
            try {
                statement.execute("CREATE OR REPLACE TEMP TABLE " + COLLECTED + " AS " + statementText(config.collectSql()));
                try (ResultSet count = statement.executeQuery("SELECT count(*) FROM " + COLLECTED)) {
                    count.next();
                    rows = count.getLong(1);
                }
                if (rows > 0) {
                    sink.write(new ResultTable(own, COLLECTED, rows));
                    sink.flush();
                    statement.execute(statementText(config.deleteSql()));
                }
                statement.execute("DROP TABLE " + COLLECTED);
                statement.execute("COMMIT");
            } catch (SQLException | RuntimeException e) {
                statement.execute("ROLLBACK");
                throw e;
            }
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.USER_HANDLER_SQL_FAILED, config.path() + ": collecting or deleting closed windows failed: "
                    + TumblingWindow.firstLine(e) + "; the rows stay in " + config.table() + " and are collected at the next poll", e);
        }
        if (rows > 0) {
            LOG.info("window published collected rows window={} rows={}", config.table(), rows);
        }
        return new WindowHandOver.Closed(rows > 0 ? 1 : 0, 0, rows, Watermark.NONE);
    }

    /** One statement as DuckDB takes it inside CREATE TABLE AS: without the trailing semicolon a YAML block leaves. */
    private static String statementText(String sql) {
        String text = sql.strip();
        while (text.endsWith(";")) {
            text = text.substring(0, text.length() - 1).strip();
        }
        return text;
    }

    /** Closes the window's sink and its connection (not the pipeline's). */
    @Override
    public void close() {
        try {
            sink.close();
        } finally {
            try {
                own.close();
            } catch (SQLException e) {
                LOG.warn("cannot close the window's connection window={} error={}", config.table(), e.toString());
            }
        }
    }
}
