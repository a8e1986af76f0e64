// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.config;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mallard.core.engine.StorageCompatibility;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * A pipeline configuration in SQLFlow's format, after its template rendered and its schema checked.
 * Blocks whose runtime has not been built yet stay as JSON trees ({@link SourceConfig#settings()}).
 */
public record PipelineConfig(List<Command> commands, List<TableSql> tables, Pipeline pipeline) {
    public PipelineConfig {
        commands = List.copyOf(commands);
        tables = List.copyOf(tables);
        requireNonNull(pipeline, "pipeline is null");
    }

    /** SQL run once before the pipeline. {@code path} locates it in the file, for errors. */
    public record Command(String name, String sql, String path) {}

    /**
     * @param window present when the table is a tumbling window on event time ({@code tables.sql[].window})
     * @param polled present when the table is managed as SQLFlow declares a tumbling window ({@code tables.sql[].manager})
     */
    public record TableSql(String name, String sql, String path, Optional<WindowConfig> window, Optional<PolledWindowConfig> polled) {
        public TableSql {
            requireNonNull(window, "window is null");
            requireNonNull(polled, "polled is null");
        }

        public TableSql(String name, String sql, String path, Optional<WindowConfig> window) {
            this(name, sql, path, window, Optional.empty());
        }

        public TableSql(String name, String sql, String path) {
            this(name, sql, path, Optional.empty());
        }
    }

    /**
     * SQLFlow's tumbling window ({@code tables.sql[].manager.tumbling_window} and {@code manager.sink}): every
     * {@code pollIntervalSeconds} of wall clock, the rows {@code collectSql} selects go to the sink, then
     * {@code deleteSql} runs.
     *
     * @param path where the block is in the file, for errors ({@code tables.sql[0].manager})
     */
    public record PolledWindowConfig(String table, String path, String collectSql, String deleteSql, long pollIntervalSeconds, SinkConfig sink) {
        public static final long DEFAULT_POLL_INTERVAL_SECONDS = 10;

        public PolledWindowConfig {
            requireNonNull(table, "table is null");
            requireNonNull(path, "path is null");
            requireNonNull(collectSql, "collectSql is null");
            requireNonNull(deleteSql, "deleteSql is null");
            requireNonNull(sink, "sink is null");
            if (pollIntervalSeconds < 1) {
                throw new IllegalArgumentException("pollIntervalSeconds must be at least 1, was " + pollIntervalSeconds);
            }
        }
    }

    /**
     * A tumbling window on event time over a table ({@code tables.sql[].window}).
     *
     * @param table the window table's name
     * @param path where the block is in the file, for errors ({@code tables.sql[0].window})
     */
    public record WindowConfig(
            String table,
            String path,
            String timeColumn,
            long sizeSeconds,
            long graceSeconds,
            long idleCloseSeconds,
            long allowedLatenessSeconds,
            Optional<Long> maxFutureSeconds,
            String emitSql,
            SinkConfig sink) {
        public static final String DEFAULT_EMIT_SQL = "SELECT * FROM closed";

        public WindowConfig {
            requireNonNull(table, "table is null");
            requireNonNull(path, "path is null");
            requireNonNull(timeColumn, "timeColumn is null");
            requireNonNull(maxFutureSeconds, "maxFutureSeconds is null");
            requireNonNull(emitSql, "emitSql is null");
            requireNonNull(sink, "sink is null");
        }
    }

    /** The tables that are windows on event time. */
    public List<WindowConfig> windows() {
        return tables.stream().flatMap(table -> table.window().stream()).toList();
    }

    /** The tables managed as SQLFlow's polled tumbling windows. */
    public List<PolledWindowConfig> polledWindows() {
        return tables.stream().flatMap(table -> table.polled().stream()).toList();
    }

    public record Pipeline(
            String name,
            int batchSize,
            int flushIntervalSeconds,
            int drainDeadlineSeconds,
            Optional<String> statePath,
            StorageCompatibility storageCompatibility,
            OnError onError,
            SourceConfig source,
            HandlerConfig handler,
            SinkConfig sink) {
        public Pipeline {
            requireNonNull(name, "name is null");
            requireNonNull(statePath, "statePath is null");
            requireNonNull(storageCompatibility, "storageCompatibility is null");
            requireNonNull(onError, "onError is null");
            requireNonNull(source, "source is null");
            requireNonNull(handler, "handler is null");
            requireNonNull(sink, "sink is null");
        }
    }

    public enum ErrorPolicy {
        RAISE, IGNORE, DLQ;

        static ErrorPolicy parse(String text) {
            return valueOf(text.toUpperCase(Locale.ROOT));
        }
    }

    public record OnError(ErrorPolicy policy, Optional<SinkConfig> dlq) {}

    /** @param settings the block named by the type, e.g. {@code kafka: {...}} */
    public record SourceConfig(String type, JsonNode settings) {}

    public enum HandlerType {
        INFERRED_MEM_BATCH("handlers.InferredMemBatch"),
        INFERRED_DISK_BATCH("handlers.InferredDiskBatch"),
        STRUCTURED_BATCH("handlers.StructuredBatch");

        private final String configName;

        HandlerType(String configName) {
            this.configName = configName;
        }

        public String configName() {
            return configName;
        }

        static HandlerType parse(String name) {
            for (HandlerType type : values()) {
                if (type.configName.equals(name)) {
                    return type;
                }
            }
            throw new IllegalArgumentException("unknown handler type " + name);
        }
    }

    public record HandlerConfig(HandlerType type, String sql, Optional<String> table, Optional<String> resultsCacheDir) {}

    public record Substitution(String var, String type) {}

    /** @param settings the block named by the type, e.g. {@code sqlcommand: {...}}; empty object when absent */
    public record SinkConfig(String type, JsonNode settings, JsonNode retry) {
        public String sql() {
            return settings.path("sql").asText();
        }

        public List<Substitution> substitutions() {
            return settings.path("substitutions").valueStream()
                    .map(node -> new Substitution(node.path("var").asText(), node.path("type").asText()))
                    .toList();
        }
    }
}
