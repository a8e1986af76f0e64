// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import static java.util.Objects.requireNonNull;

import java.nio.file.Path;

/**
 * The pipeline files {@code bench pipeline} runs: count by city into a noop sink over a declared table
 * (StructuredBatch) or an inferred one (InferredMemBatch), and the declared one again with durable state, where each
 * batch's counts are merged into running totals on the state file.
 */
final class PipelineConfigs {
    static final String EVENTS_COLUMNS = "ip VARCHAR, event VARCHAR, properties STRUCT(city VARCHAR, country VARCHAR), "
            + "timestamp TIMESTAMPTZ, type VARCHAR, userId VARCHAR";
    /** Reads the totals back from the state file once the stateful pipeline stopped. */
    static final String STATE_TOTALS_QUERY = "SELECT city, total FROM city_totals";

    private PipelineConfigs() {}

    /** Where a pipeline reads from; every pipeline gets a group of its own, read from the earliest offset. */
    record Kafka(String bootstrapServers, String topic, String groupId) {
        Kafka {
            requireNonNull(bootstrapServers, "bootstrapServers is null");
            requireNonNull(topic, "topic is null");
            requireNonNull(groupId, "groupId is null");
        }

        String yaml() {
            return """
                      source:
                        type: kafka
                        kafka:
                          brokers: ['%s']
                          group_id: '%s'
                          auto_offset_reset: earliest
                          topics: ['%s']
                    """.formatted(bootstrapServers, groupId, topic);
        }
    }

    static String structured(Kafka kafka, int batchSize) {
        requireNonNull(kafka, "kafka is null");
        return """
                commands:
                  - name: the batch table
                    sql: CREATE TABLE events (%s)
                pipeline:
                  name: bench-structured
                  batch_size: %d
                %s  handler:
                    type: handlers.StructuredBatch
                    table: events
                    sql: SELECT properties.city AS city, count(*) FROM events GROUP BY 1
                  sink:
                    type: noop
                """.formatted(EVENTS_COLUMNS, batchSize, kafka.yaml());
    }

    static String inferred(Kafka kafka, int batchSize) {
        requireNonNull(kafka, "kafka is null");
        return """
                pipeline:
                  name: bench-inferred
                  batch_size: %d
                %s  handler:
                    type: handlers.InferredMemBatch
                    sql: SELECT properties.city AS city, count(*) FROM batch GROUP BY 1
                  sink:
                    type: noop
                """.formatted(batchSize, kafka.yaml());
    }

    /**
     * The structured pipeline on a state file: the handler merges the batch's counts into {@code city_totals} on
     * the file and returns the totals. The batch table is declared TEMP: declared plainly it would live in the state
     * file, and every batch's raw rows would be written to its log and checkpointed for nothing, outside the batch's
     * transaction, which costs more than the state itself (see docs/benchmarks.md).
     */
    static String stateful(Kafka kafka, int batchSize, Path stateFile) {
        requireNonNull(kafka, "kafka is null");
        requireNonNull(stateFile, "stateFile is null");
        return """
                commands:
                  - name: the batch table, in memory
                    sql: CREATE TEMP TABLE events (%s)
                tables:
                  sql:
                    - name: city_totals
                      sql: CREATE TABLE IF NOT EXISTS city_totals (city VARCHAR, total BIGINT)
                pipeline:
                  name: bench-stateful
                  batch_size: %d
                  state:
                    path: '%s'
                %s  handler:
                    type: handlers.StructuredBatch
                    table: events
                    sql: |
                      MERGE INTO city_totals t
                      USING (SELECT properties.city AS city, count(*) AS n FROM events GROUP BY 1) b
                      ON t.city = b.city
                      WHEN MATCHED THEN UPDATE SET total = t.total + b.n
                      WHEN NOT MATCHED THEN INSERT VALUES (b.city, b.n);
                      SELECT city, total FROM city_totals
                  sink:
                    type: noop
                """.formatted(EVENTS_COLUMNS, batchSize, stateFile.toAbsolutePath(), kafka.yaml());
    }

    /** The config with {@code SET threads = N} as its first command, or unchanged when threads is null. */
    static String withThreads(String config, Integer threads) {
        requireNonNull(config, "config is null");
        if (threads == null) {
            return config;
        }
        if (threads < 1) {
            throw new IllegalArgumentException("--threads must be at least 1, not " + threads);
        }
        String command = "  - name: DuckDB threads\n    sql: SET threads = " + threads + "\n";
        return config.startsWith("commands:\n")
                ? "commands:\n" + command + config.substring("commands:\n".length())
                : "commands:\n" + command + config;
    }
}
