// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.handler;

import dev.mallard.flow.sink.ResultTable;
import dev.mallard.flow.source.Message;
import java.util.List;

/**
 * Turns a batch of raw messages into a result. {@link #write} loads the messages into DuckDB (phase
 * {@code handler.write}); {@link #invoke} runs the pipeline's SQL over them (phase {@code handler.invoke}).
 * A handler belongs to the pipeline's thread and its DuckDB connection.
 */
public interface Handler extends AutoCloseable {
    void write(List<Message> batch);

    /** The SQL's result for the batch last written; empty (zero rows) when the SQL is not a query. */
    ResultTable invoke();

    @Override
    default void close() {}
}
