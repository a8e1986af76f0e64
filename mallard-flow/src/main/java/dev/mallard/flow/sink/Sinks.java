// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.flow.config.PipelineConfig.SinkConfig;
import dev.mallard.flow.sink.iceberg.IcebergSettings;
import dev.mallard.flow.sink.iceberg.IcebergSink;
import dev.mallard.flow.sink.postgres.PostgresSink;
import java.io.OutputStream;
import org.apache.arrow.memory.BufferAllocator;

/** Builds the sink a configuration names. */
public final class Sinks {
    private Sinks() {}

    /** @param environment the pipeline's variables: where a sink looks up what its block leaves out (the Iceberg catalog) */
    public static Sink create(SinkConfig config, OutputStream console, BufferAllocator allocator, ConfigEnvironment environment) {
        return switch (config.type()) {
            case "console" -> new ConsoleSink(console, allocator);
            case "noop" -> new NoopSink();
            case "sqlcommand" -> new SqlCommandSink(config.sql(), config.substitutions());
            case "kafka" -> new KafkaSink(config.settings(), config.retry(), allocator);
            case "postgres" -> new PostgresSink(PostgresSink.Settings.of(config.settings(), config.retry()), allocator);
            case "iceberg" -> new IcebergSink(IcebergSettings.of(config.settings(), environment.pyiceberg()), allocator);
            default -> throw new MallardException(ErrorCode.USER_CONFIG_UNSUPPORTED, "sink type " + config.type()
                    + " is accepted by validate but cannot run in this version of Mallard; use console, noop, sqlcommand, kafka, postgres or iceberg");
        };
    }
}
