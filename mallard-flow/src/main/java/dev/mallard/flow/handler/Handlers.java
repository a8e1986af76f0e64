// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.handler;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.flow.config.PipelineConfig.HandlerConfig;
import java.nio.file.Path;
import org.duckdb.DuckDBConnection;

/** Builds the handler a configuration names, on the pipeline's connection. */
public final class Handlers {
    private Handlers() {}

    /**
     * @param records the columns taken from each record rather than its JSON ({@link RecordColumns#of} of the
     *     pipeline's source)
     */
    public static Handler create(HandlerConfig config, RecordColumns records, DuckDBConnection connection, ConfigEnvironment environment) {
        return create(config, records, connection, environment, false);
    }

    /**
     * @param batchTransaction true when the pipeline runs each batch in one transaction with its offsets (a state
     *     path): the handler's own BEGIN and COMMIT (SQLFlow's idempotent-sink pattern) then fall inside that one
     */
    public static Handler create(HandlerConfig config, RecordColumns records, DuckDBConnection connection, ConfigEnvironment environment,
            boolean batchTransaction) {
        HandlerSql sql = new HandlerSql(connection, config.sql(), batchTransaction);
        return switch (config.type()) {
            case INFERRED_MEM_BATCH -> new InferredMemBatchHandler(connection, sql, records);
            case INFERRED_DISK_BATCH -> new InferredDiskBatchHandler(connection,
                    Path.of(config.resultsCacheDir().orElse(environment.resultsCacheDir())), sql, records);
            case STRUCTURED_BATCH -> new StructuredBatchHandler(connection, config.table().orElseThrow(), sql, records);
        };
    }
}
