// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.handler;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.MallardException;
import dev.mallard.flow.sink.ResultTable;
import dev.mallard.flow.source.Message;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.duckdb.DuckDBConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code handlers.InferredMemBatch}: infers the batch's schema from its JSON and exposes it to the SQL as
 * the temporary table {@code batch}.
 */
final class InferredMemBatchHandler implements Handler {
    static final String BATCH_TABLE = "batch";
    private static final Logger LOG = LoggerFactory.getLogger(InferredMemBatchHandler.class);

    private final SchemaInference inference = new SchemaInference();
    private final JsonBatchLoader loader;
    private final HandlerSql sql;
    private final Set<String> warnedKeys = new HashSet<>();
    private final List<Column> recordColumns;

    InferredMemBatchHandler(DuckDBConnection connection, HandlerSql sql, RecordColumns records) {
        requireNonNull(connection, "connection is null");
        this.loader = new JsonBatchLoader(connection, Message::position, records);
        this.sql = requireNonNull(sql, "sql is null");
        this.recordColumns = records.forInferred(sql.text());
    }

    @Override
    public void write(List<Message> batch) {
        List<Column> columns = withRecordColumns(infer(inference, batch, warnedKeys), recordColumns);
        loader.createAndLoad(batch, BATCH_TABLE, columns);
    }

    /** The inferred columns, less any a record column replaces, then the record columns. */
    static List<Column> withRecordColumns(List<Column> inferred, List<Column> records) {
        if (records.isEmpty()) {
            return inferred;
        }
        List<Column> columns = new ArrayList<>(inferred.size() + records.size());
        for (Column column : inferred) {
            if (records.stream().noneMatch(record -> record.name().equals(column.name()))) {
                columns.add(column);
            }
        }
        columns.addAll(records);
        return columns;
    }

    /** Shared with the disk handler: the columns of a batch, warning once per top-level key left out. */
    static List<Column> infer(SchemaInference inference, List<Message> batch, Set<String> warnedKeys) {
        inference.reset();
        for (int i = 0; i < batch.size(); i++) {
            Message message = batch.get(i);
            if (!message.isBlank()) {
                try {
                    inference.add(message.value(), message.position());
                } catch (BadMessagesException e) {
                    throw e;
                } catch (MallardException e) {
                    // Name the message so an on_error policy can set it aside and load the rest.
                    inference.reset();
                    throw new BadMessagesException(e.getMessage(),
                            List.of(new BadMessage(i, message, message.position(), null, e.getMessage())), e);
                }
            }
        }
        for (String key : inference.droppedTopLevelKeys()) {
            if (warnedKeys.add(key)) {
                LOG.warn("top-level key is not a column: the first message of the batch lacks it key={}", key);
            }
        }
        return inference.columns();
    }

    @Override
    public ResultTable invoke() {
        return sql.run();
    }
}
