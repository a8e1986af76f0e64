// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.ingest;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The server's ingestion queues and limits (the {@code ingestion:} block; DazzleDuck's {@code ingestion},
 * {@code temp_write_location} and {@code ingestion_task_factory_provider} keys map onto it).
 *
 * @param queues the declared queues, by name
 * @param anyQueuePath when present, a queue name not declared is a queue of its own at {@code <anyQueuePath>/<name>}
 *     (DazzleDuck's {@code ingestion_path}); empty: an undeclared name is answered {@code user.ingest.queue_not_found}
 * @param tempWriteLocation where batches are received and files staged before their atomic rename, relative to the
 *     warehouse unless absolute; it must be on the warehouse's file system
 * @param maxPendingWrite the bytes received but not yet written the server holds at most; past it ingestion answers 429
 * @param otlp the OTLP receiver (gRPC), when the configuration has an {@code otlp} block
 */
public record IngestionConfig(List<Queue> queues, Optional<String> anyQueuePath, Optional<String> tempWriteLocation, long maxPendingWrite,
        Optional<Otlp> otlp) {
    public static final long DEFAULT_MAX_PENDING_WRITE = 256L << 20;
    public static final long DEFAULT_TARGET_FILE_SIZE = 128L << 20;
    public static final String DEFAULT_TEMP_WRITE_LOCATION = ".mallard-ingest/tmp";
    /** No queues: every {@code /v1/ingest} is answered 404. */
    public static final IngestionConfig NONE = new IngestionConfig(List.of(), Optional.empty(), Optional.empty(), DEFAULT_MAX_PENDING_WRITE);

    static final Pattern QUEUE_NAME = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}");
    private static final Set<String> FORMATS = Set.of("parquet", "csv", "json");

    /** Without an OTLP receiver. */
    public IngestionConfig(List<Queue> queues, Optional<String> anyQueuePath, Optional<String> tempWriteLocation, long maxPendingWrite) {
        this(queues, anyQueuePath, tempWriteLocation, maxPendingWrite, Optional.empty());
    }

    /** This configuration with the OTLP receiver {@code otlp}. */
    public IngestionConfig withOtlp(Otlp otlp) {
        return new IngestionConfig(queues, anyQueuePath, tempWriteLocation, maxPendingWrite, Optional.of(otlp));
    }

    public IngestionConfig {
        requireNonNull(otlp, "otlp is null");
        queues = List.copyOf(queues);
        requireNonNull(anyQueuePath, "anyQueuePath is null");
        requireNonNull(tempWriteLocation, "tempWriteLocation is null");
        if (maxPendingWrite <= 0) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "ingestion.max_pending_write must be positive, not " + maxPendingWrite);
        }
        Set<String> names = new java.util.HashSet<>();
        for (Queue queue : queues) {
            if (!names.add(queue.name())) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "ingestion.queues lists the queue " + queue.name() + " twice");
            }
        }
    }

    /** A queue named by a producer: a declared one, or one at {@code <anyQueuePath>/<name>}. */
    Optional<Queue> queue(String name) {
        for (Queue queue : queues) {
            if (queue.name().equals(name)) {
                return Optional.of(queue);
            }
        }
        return anyQueuePath.filter(path -> QUEUE_NAME.matcher(name).matches() && !name.contains(".."))
                .map(path -> Queue.named(name, path + "/" + name));
    }

    /**
     * One queue.
     *
     * @param path the directory its files land in, relative to the warehouse
     * @param transformation a query over {@code __this} (the batch) whose result is written instead of the batch
     * @param partition columns whose values lay the files out in Hive directories ({@code col=value/})
     * @param sortOrder columns each file is sorted by
     * @param format {@code parquet}, {@code csv} or {@code json}
     * @param targetFileSize batches waiting together are written into one file up to about this many bytes
     * @param flushInterval how long the first waiting batch may wait for more before they are written (zero: at once)
     * @param variables set with {@code SET VARIABLE} on the queue's writing connection, read with {@code getvariable}
     * @param watermark the per-batch watermark rows this queue keeps, if any
     * @param table a DuckDB table every committed batch is also inserted into, exactly once, so that materialized views
     *     over it (whose change capture needs a table) update as batches land
     */
    public record Queue(String name, String path, Optional<String> transformation, List<String> partition, List<String> sortOrder,
            String format, long targetFileSize, Duration flushInterval, Map<String, String> variables, Optional<Watermark> watermark,
            Optional<String> table) {
        /** A queue without a table. */
        public Queue(String name, String path, Optional<String> transformation, List<String> partition, List<String> sortOrder,
                String format, long targetFileSize, Duration flushInterval, Map<String, String> variables, Optional<Watermark> watermark) {
            this(name, path, transformation, partition, sortOrder, format, targetFileSize, flushInterval, variables, watermark, Optional.empty());
        }

        /** This queue with a table its batches are also inserted into. */
        public Queue withTable(String table) {
            return new Queue(name, path, transformation, partition, sortOrder, format, targetFileSize, flushInterval, variables, watermark,
                    Optional.of(table));
        }

        public Queue {
            requireNonNull(table, "table is null");
            requireNonNull(name, "name is null");
            requireNonNull(path, "path is null");
            requireNonNull(transformation, "transformation is null");
            partition = List.copyOf(partition);
            sortOrder = List.copyOf(sortOrder);
            requireNonNull(format, "format is null");
            requireNonNull(flushInterval, "flushInterval is null");
            variables = Map.copyOf(variables);
            requireNonNull(watermark, "watermark is null");
            if (!QUEUE_NAME.matcher(name).matches() || name.contains("..")) {
                throw new MallardException(ErrorCode.USER_INGEST_PATH_INVALID, "ingestion queue name '" + name
                        + "' is not a name: use letters, digits, _ . - (no ..), at most 128");
            }
            if (!FORMATS.contains(format)) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "ingestion queue " + name + ": format " + format
                        + " is not one DuckDB writes here; use parquet, csv or json");
            }
            if (targetFileSize <= 0 || flushInterval.isNegative()) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "ingestion queue " + name
                        + ": target_file_size must be positive and flush_interval_ms not negative");
            }
            for (String variable : variables.keySet()) {
                if (!variable.matches("[A-Za-z_][A-Za-z0-9_]*")) {
                    throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "ingestion queue " + name + ": variable name '" + variable
                            + "' is not an identifier");
                }
            }
        }

        /** A queue with the defaults: the batch as it is, in Parquet, written at once. */
        public static Queue named(String name, String path) {
            return new Queue(name, path, Optional.empty(), List.of(), List.of(), "parquet", DEFAULT_TARGET_FILE_SIZE, Duration.ZERO, Map.of(),
                    Optional.empty());
        }
    }

    /**
     * The OTLP receiver: a gRPC listener for OpenTelemetry's logs, traces and metrics export services, each request
     * written as one batch into an ingestion queue.
     *
     * @param port the gRPC port (0: any free one)
     * @param logsQueue the queue of a logs export whose token names no queue in its {@code x-dd-ingestion-queue} claim
     * @param tracesQueue the same for traces
     * @param metricsQueue the same for metrics
     * @param maxMessageBytes the largest export request taken (gRPC's inbound message limit)
     */
    public record Otlp(int port, Optional<String> logsQueue, Optional<String> tracesQueue, Optional<String> metricsQueue, int maxMessageBytes) {
        public static final int DEFAULT_PORT = 4317;
        public static final int DEFAULT_MAX_MESSAGE_BYTES = 16 << 20;

        public Otlp {
            requireNonNull(logsQueue, "logsQueue is null");
            requireNonNull(tracesQueue, "tracesQueue is null");
            requireNonNull(metricsQueue, "metricsQueue is null");
            if (port < 0 || port > 65_535) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "ingestion.otlp.port must be a port (0-65535), not " + port);
            }
            if (maxMessageBytes <= 0) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "ingestion.otlp.max_message_bytes must be positive, not " + maxMessageBytes);
            }
        }
    }

    /**
     * A queue's watermark table: one row per written batch (per group), with the batch's producer, batch id, row
     * count and the least and greatest value of its timestamp column.
     *
     * @param table the table's name; {@code <queue>_watermarks} when not given
     */
    public record Watermark(String table, String timestampColumn, List<String> groupColumns) {
        public Watermark {
            requireNonNull(table, "table is null");
            requireNonNull(timestampColumn, "timestampColumn is null");
            groupColumns = List.copyOf(groupColumns);
            if (timestampColumn.isBlank() || table.isBlank()) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "an ingestion watermark needs a table and a timestamp_column");
            }
        }
    }

    /**
     * DazzleDuck's ingestion keys of a {@code dazzleduck_server} block, as Mallard's {@code ingestion:} tree; empty when
     * it has none. {@link #DAZZLEDUCK_KEYS} are the top-level keys read.
     *
     * @param warehouse the warehouse, absolute: DazzleDuck's absolute paths inside it become relative to it
     */
    public static Optional<com.fasterxml.jackson.databind.node.ObjectNode> fromDazzleDuck(com.typesafe.config.Config dazzleduck,
            java.nio.file.Path warehouse) {
        return DazzleDuckIngestionKeys.read(dazzleduck, warehouse);
    }

    public static final Set<String> DAZZLEDUCK_KEYS = DazzleDuckIngestionKeys.KEYS;

    /** Reads the {@code ingestion:} block of the server's configuration tree (already checked against its schema). */
    public static IngestionConfig read(JsonNode node) {
        if (node == null || node.isMissingNode() || node.isNull()) {
            return NONE;
        }
        List<Queue> queues = new ArrayList<>();
        for (JsonNode queue : node.path("queues")) {
            String name = queue.path("name").asText("");
            String path = text(queue, "path").orElse(name);
            Optional<Watermark> watermark = Optional.empty();
            JsonNode mark = queue.path("watermark");
            if (mark.isObject()) {
                watermark = Optional.of(new Watermark(text(mark, "table").orElse(name + "_watermarks"),
                        text(mark, "timestamp_column").orElse(""), strings(mark.path("group_columns"))));
            }
            Map<String, String> variables = new LinkedHashMap<>();
            queue.path("variables").fields().forEachRemaining(entry -> variables.put(entry.getKey(), entry.getValue().asText()));
            queues.add(new Queue(name, path, text(queue, "transformation").filter(sql -> !sql.isBlank()), strings(queue.path("partition")),
                    strings(queue.path("sort_order")), text(queue, "format").orElse("parquet").toLowerCase(Locale.ROOT),
                    queue.path("target_file_size").asLong(DEFAULT_TARGET_FILE_SIZE), Duration.ofMillis(queue.path("flush_interval_ms").asLong(0)),
                    variables, watermark, text(queue, "table")));
        }
        Optional<Otlp> otlp = Optional.empty();
        JsonNode receiver = node.path("otlp");
        if (receiver.isObject()) {
            otlp = Optional.of(new Otlp(receiver.path("port").asInt(Otlp.DEFAULT_PORT), text(receiver, "logs_queue"), text(receiver, "traces_queue"),
                    text(receiver, "metrics_queue"), receiver.path("max_message_bytes").asInt(Otlp.DEFAULT_MAX_MESSAGE_BYTES)));
        }
        return new IngestionConfig(queues, text(node, "any_queue_path"), text(node, "temp_write_location"),
                node.path("max_pending_write").asLong(DEFAULT_MAX_PENDING_WRITE), otlp);
    }

    private static Optional<String> text(JsonNode node, String key) {
        JsonNode value = node.get(key);
        return value == null || value.isNull() ? Optional.empty() : Optional.of(value.asText());
    }

    /** A comma-separated list (DazzleDuck's header form). */
    static List<String> split(String text) {
        List<String> values = new ArrayList<>();
        for (String part : text.split(",")) {
            if (!part.isBlank()) {
                values.add(part.trim());
            }
        }
        return values;
    }

    /** A list of strings; one comma-separated string (DazzleDuck's header form) is split. */
    static List<String> strings(JsonNode node) {
        List<String> values = new ArrayList<>();
        if (node.isTextual()) {
            for (String part : node.asText().split(",")) {
                if (!part.isBlank()) {
                    values.add(part.trim());
                }
            }
        } else {
            node.forEach(value -> values.add(value.asText()));
        }
        return values;
    }
}
