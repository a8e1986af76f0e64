// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.session;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.io.IOException;
import java.util.Optional;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A query's rows as Arrow batches, read from DuckDB one batch at a time under the session's lock. The result
 * stays in DuckDB until read; nothing here holds more than one batch. With streaming results DuckDB computes each
 * batch when it is read, so a cancel or the statement's timeout is checked before every batch.
 */
public final class ResultStream implements AutoCloseable {
    private final Session session;
    private final Statement statement;
    private final ResultSet resultSet;
    private final ArrowReader reader;
    private final boolean ownsStatement;
    private final QueryOptions options;
    private final long deadlineNanos;
    private final boolean hasDeadline;
    private volatile boolean cancelled;

    ResultStream(Session session, Statement statement, ResultSet resultSet, ArrowReader reader, boolean ownsStatement, QueryOptions options) {
        this.session = requireNonNull(session, "session is null");
        this.statement = requireNonNull(statement, "statement is null");
        this.resultSet = requireNonNull(resultSet, "resultSet is null");
        this.reader = requireNonNull(reader, "reader is null");
        this.ownsStatement = ownsStatement;
        this.options = requireNonNull(options, "options is null");
        this.hasDeadline = options.timeout().isPresent();
        this.deadlineNanos = options.timeout().map(timeout -> System.nanoTime() + timeout.toNanos()).orElse(0L);
    }

    Optional<String> queryId() {
        return options.queryId();
    }

    /** Stops the result before its next batch: that read fails {@code user.sql.cancelled}. */
    void cancel() {
        cancelled = true;
    }

    public Schema schema() {
        try {
            return reader.getVectorSchemaRoot().getSchema();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** The root each {@link #loadNextBatch()} fills, also the reader's dictionaries (DuckDB's ENUM). */
    public VectorSchemaRoot root() throws IOException {
        return reader.getVectorSchemaRoot();
    }

    public ArrowReader reader() {
        return reader;
    }

    /**
     * Loads the next batch into {@link #root()}; false at the end.
     *
     * @throws MallardException {@code user.sql.cancelled} after a cancel, {@code user.sql.timeout} past the statement's
     *     timeout, {@code user.sql.invalid} when DuckDB fails while computing the batch
     */
    public boolean loadNextBatch() throws IOException {
        return session.withLock(() -> {
            if (cancelled) {
                throw Session.cancelled(null);
            }
            if (hasDeadline && System.nanoTime() - deadlineNanos > 0) {
                throw Session.timedOut(options, null);
            }
            try {
                return reader.loadNextBatch();
            } catch (IOException e) {
                // With streaming results DuckDB runs the query as it is read: its errors (a failing cast) arrive here.
                throw new MallardException(ErrorCode.USER_SQL_INVALID, e.getMessage() == null ? e.toString() : e.getMessage(), e);
            }
        });
    }

    @Override
    public void close() {
        try {
            closeInDuckDb();
        } finally {
            session.closed(this);
        }
    }

    private void closeInDuckDb() {
        session.withLock(() -> {
            try (reader; resultSet) {
                if (ownsStatement) {
                    statement.close();
                }
            } catch (IOException | SQLException e) {
                throw new IllegalStateException("closing a DuckDB result failed: " + e.getMessage(), e);
            }
            return null;
        }, false);
    }
}
