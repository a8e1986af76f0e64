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
        return switch (config.type()) {
            case INFERRED_MEM_BATCH -> new InferredMemBatchHandler(connection, config.sql(), records);
            case INFERRED_DISK_BATCH -> new InferredDiskBatchHandler(connection,
                    Path.of(config.resultsCacheDir().orElse(environment.resultsCacheDir())), config.sql(), records);
            case STRUCTURED_BATCH -> new StructuredBatchHandler(connection, config.table().orElseThrow(), config.sql(), records);
        };
    }
}
