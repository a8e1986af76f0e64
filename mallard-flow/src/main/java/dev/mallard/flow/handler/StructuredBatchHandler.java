// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.handler;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.TableName;
import dev.mallard.flow.sink.ResultTable;
import dev.mallard.flow.source.Message;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.duckdb.DuckDBConnection;

/**
 * {@code handlers.StructuredBatch}: parses each batch straight into a table the user declared, truncated at
 * the start of every batch; the SQL reads that table. The fast path: no inference.
 */
final class StructuredBatchHandler implements Handler {
    private final DuckDBConnection connection;
    private final TableName table;
    private final List<Column> columns;
    private final JsonBatchLoader loader;
    private final HandlerSql sql;

    StructuredBatchHandler(DuckDBConnection connection, String table, HandlerSql sql, RecordColumns records) {
        this.connection = requireNonNull(connection, "connection is null");
        this.table = TableName.parse(connection, requireNonNull(table, "table is null"), "pipeline.handler.table");
        try {
            this.columns = JsonBatchLoader.describe(connection, this.table);
        } catch (MallardException e) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "pipeline.handler.table: " + e.getMessage()
                    + "; declare the table in `commands` (CREATE TABLE " + table + " (...))", e);
        }
        if (records.eventTime().isPresent()
                && columns.stream().noneMatch(column -> column.name().equals(RecordColumns.EVENT_TIME))) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "pipeline.source: event_time is configured but table "
                    + table + " has no event_time column; add `event_time TIMESTAMPTZ` to its CREATE TABLE");
        }
        this.loader = new JsonBatchLoader(connection, Message::position, records);
        this.sql = requireNonNull(sql, "sql is null");
    }

    @Override
    public void write(List<Message> batch) {
        try (Statement statement = connection.createStatement()) {
            statement.execute("TRUNCATE " + table.quoted());
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot truncate " + table + ": " + e.getMessage(), e);
        }
        loader.load(batch, table, columns);
    }

    @Override
    public ResultTable invoke() {
        return sql.run();
    }
}
