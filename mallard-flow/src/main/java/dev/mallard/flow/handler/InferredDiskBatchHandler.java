// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.handler;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlText;
import dev.mallard.flow.sink.ResultTable;
import dev.mallard.flow.source.Message;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import org.duckdb.DuckDBConnection;

/**
 * {@code handlers.InferredDiskBatch}: the same inference as the in-memory handler, but the batch is staged
 * in a newline-delimited JSON file under the results cache directory and DuckDB reads it from there, so a
 * large batch need not sit in the JVM while it loads.
 */
final class InferredDiskBatchHandler implements Handler {
    private final DuckDBConnection connection;
    private final Path stagingFile;
    private final SchemaInference inference = new SchemaInference();
    private final Set<String> warnedKeys = new HashSet<>();
    private final HandlerSql sql;

    InferredDiskBatchHandler(DuckDBConnection connection, Path cacheDir, HandlerSql sql, RecordColumns records) {
        this.connection = requireNonNull(connection, "connection is null");
        if (!records.forInferred(sql.text()).isEmpty()) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "handlers.InferredDiskBatch reads the staged JSON "
                    + "alone, so it cannot expose kafka_topic, kafka_partition, kafka_offset or a configured event_time; "
                    + "use handlers.InferredMemBatch or handlers.StructuredBatch for them");
        }
        try {
            Files.createDirectories(cacheDir);
        } catch (IOException e) {
            throw new MallardException(ErrorCode.SYSTEM_IO_FAILED, "cannot create the results cache directory " + cacheDir
                    + ": " + e.getMessage() + "; set pipeline.handler.sql_results_cache_dir to a writable directory", e);
        }
        // One file per handler, so pipelines sharing a cache directory do not overwrite each other's batches.
        this.stagingFile = cacheDir.resolve("mallard-batch-" + UUID.randomUUID() + ".jsonl");
        this.sql = requireNonNull(sql, "sql is null");
    }

    @Override
    public void write(List<Message> batch) {
        List<Column> columns = InferredMemBatchHandler.infer(inference, batch, warnedKeys);
        try (OutputStream out = Files.newOutputStream(stagingFile)) {
            for (Message message : batch) {
                if (!message.isBlank()) {
                    out.write(message.value());
                    out.write('\n');
                }
            }
        } catch (IOException e) {
            throw new MallardException(ErrorCode.SYSTEM_IO_FAILED, "cannot stage the batch in " + stagingFile + ": " + e.getMessage(), e);
        }
        String columnSpec = columns.stream()
                .map(column -> SqlText.literal(column.name()) + ": " + SqlText.literal(column.type()))
                .collect(Collectors.joining(", ", "{", "}"));
        try (Statement statement = connection.createStatement()) {
            statement.execute("CREATE OR REPLACE TEMP TABLE " + InferredMemBatchHandler.BATCH_TABLE + " AS SELECT * FROM read_json("
                    + SqlText.literal(stagingFile.toString()) + ", format = 'newline_delimited', columns = " + columnSpec + ")");
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.USER_HANDLER_PARSE_FAILED, "cannot load the staged batch: " + e.getMessage(), e);
        }
    }

    @Override
    public ResultTable invoke() {
        return sql.run();
    }

    @Override
    public void close() {
        try {
            Files.deleteIfExists(stagingFile);
        } catch (IOException e) {
            throw new MallardException(ErrorCode.SYSTEM_IO_FAILED, "cannot remove " + stagingFile + ": " + e.getMessage(), e);
        }
    }
}
