package dev.mallard.server.session;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A query's rows as Arrow batches, read from DuckDB one batch at a time under the session's lock. The result
 * stays in DuckDB until read; nothing here holds more than one batch.
 */
public final class ResultStream implements AutoCloseable {
    private final Session session;
    private final Statement statement;
    private final ResultSet resultSet;
    private final ArrowReader reader;
    private final boolean ownsStatement;

    ResultStream(Session session, Statement statement, ResultSet resultSet, ArrowReader reader, boolean ownsStatement) {
        this.session = requireNonNull(session, "session is null");
        this.statement = requireNonNull(statement, "statement is null");
        this.resultSet = requireNonNull(resultSet, "resultSet is null");
        this.reader = requireNonNull(reader, "reader is null");
        this.ownsStatement = ownsStatement;
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

    /** Loads the next batch into {@link #root()}; false at the end. */
    public boolean loadNextBatch() throws IOException {
        return session.withLock(() -> reader.loadNextBatch());
    }

    @Override
    public void close() {
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
