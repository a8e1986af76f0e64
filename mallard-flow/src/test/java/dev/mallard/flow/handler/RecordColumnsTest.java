// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.handler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.core.engine.Engine;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.flow.config.PipelineConfig;
import dev.mallard.flow.config.PipelineConfigReader;
import dev.mallard.flow.pipeline.DevInvoke;
import dev.mallard.flow.source.Message;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The kafka_* and event_time columns, through a real config and a real DuckDB. */
class RecordColumnsTest {
    private static final String STRUCTURED_TABLE = "CREATE TABLE events (city VARCHAR, kafka_topic VARCHAR, "
            + "kafka_partition INTEGER, kafka_offset BIGINT, event_time TIMESTAMPTZ)";

    private static PipelineConfig config(String eventTime, String handler) {
        String source = "{brokers: [b:9092], group_id: g, auto_offset_reset: earliest, topics: [t]"
                + (eventTime.isEmpty() ? "" : ", event_time: " + eventTime) + "}";
        return new PipelineConfigReader(ConfigEnvironment.from(Map.of())).read("p.yml", """
                commands:
                  - name: table
                    sql: %s
                pipeline:
                  batch_size: 10
                  source:
                    type: kafka
                    kafka: %s
                  handler:
                %s
                  sink:
                    type: console
                """.formatted(STRUCTURED_TABLE, source, handler.indent(4).stripTrailing())).orThrow();
    }

    private static List<String> run(PipelineConfig config, Message... messages) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (Engine engine = Engine.inMemory()) {
            DevInvoke.run(engine, config, List.of(messages), ConfigEnvironment.from(Map.of()), out);
        }
        return out.toString(StandardCharsets.UTF_8).lines().toList();
    }

    private static Message record(String topic, int partition, long offset, String json) {
        return new Message(topic, partition, offset, null, json.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aStructuredTableGetsWhereEachRecordCameFromAndItsTime() {
        PipelineConfig config = config("{path: ts}", """
                type: handlers.StructuredBatch
                table: events
                sql: SELECT * FROM events ORDER BY kafka_offset""");
        assertThat(run(config,
                record("clicks", 2, 41, "{\"city\":\"a\",\"ts\":\"2015-12-12T19:11:01Z\"}"),
                record("clicks", 2, 42, "{\"city\":\"b\",\"ts\":\"2015-12-12T21:11:01+02:00\",\"kafka_topic\":\"spoof\"}")))
                .containsExactly(
                        "{\"city\":\"a\",\"kafka_topic\":\"clicks\",\"kafka_partition\":2,\"kafka_offset\":41,\"event_time\":\"2015-12-12T19:11:01Z\"}",
                        "{\"city\":\"b\",\"kafka_topic\":\"clicks\",\"kafka_partition\":2,\"kafka_offset\":42,\"event_time\":\"2015-12-12T19:11:01Z\"}");
    }

    @Test
    void withoutAnEventTimeBlockAnEventTimeColumnIsReadFromItsJsonKey() {
        PipelineConfig config = config("", """
                type: handlers.StructuredBatch
                table: events
                sql: SELECT city, event_time FROM events""");
        assertThat(run(config, record("t", 0, 0, "{\"city\":\"a\",\"event_time\":\"2020-01-01T00:00:00Z\"}")))
                .containsExactly("{\"city\":\"a\",\"event_time\":\"2020-01-01T00:00:00Z\"}");
    }

    @Test
    void theInferredBatchCarriesTheKafkaColumnsOnlyWhenTheSqlNamesThem() {
        Message message = record("orders", 1, 7, "{\"city\":\"a\"}");
        assertThat(run(config("", "type: handlers.InferredMemBatch\nsql: SELECT * FROM batch"), message))
                .containsExactly("{\"city\":\"a\"}");
        assertThat(run(config("", "type: handlers.InferredMemBatch\nsql: SELECT city, KAFKA_OFFSET, kafka_topic FROM batch"), message))
                .containsExactly("{\"city\":\"a\",\"kafka_offset\":7,\"kafka_topic\":\"orders\"}");
    }

    @Test
    void theInferredBatchCarriesAConfiguredEventTimeInPlaceOfTheJsonKey() {
        PipelineConfig config = config("{path: meta.at, format: unix_millis}",
                "type: handlers.InferredMemBatch\nsql: SELECT * FROM batch");
        assertThat(run(config, record("t", 0, 0, "{\"event_time\":\"not a time\",\"meta\":{\"at\":1449947461123}}")))
                .containsExactly("{\"meta\":{\"at\":1449947461123},\"event_time\":\"2015-12-12T19:11:01.123Z\"}");
    }

    @Test
    void unixSecondsKeepEveryMicrosecond() {
        PipelineConfig config = config("{path: at, format: unix_seconds}",
                "type: handlers.InferredMemBatch\nsql: SELECT event_time FROM batch ORDER BY event_time");
        assertThat(run(config,
                record("t", 0, 0, "{\"at\":1449947461.123456}"),
                record("t", 0, 1, "{\"at\":1449947462}")))
                .containsExactly("{\"event_time\":\"2015-12-12T19:11:01.123456Z\"}", "{\"event_time\":\"2015-12-12T19:11:02Z\"}");
    }

    @Test
    void aRecordWithoutItsTimeIsABadMessageNamingThePathAndThePosition() {
        PipelineConfig config = config("{path: ts}", """
                type: handlers.StructuredBatch
                table: events
                sql: SELECT * FROM events""");
        assertThatThrownBy(() -> run(config,
                record("clicks", 0, 5, "{\"city\":\"a\",\"ts\":\"2015-12-12T19:11:01Z\"}"),
                record("clicks", 0, 6, "{\"city\":\"b\"}"),
                record("clicks", 0, 7, "{\"city\":\"c\",\"ts\":\"yesterday\"}")))
                .isInstanceOfSatisfying(BadMessagesException.class, e -> {
                    assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_HANDLER_PARSE_FAILED);
                    List<String> where = new ArrayList<>();
                    e.badMessages().forEach(bad -> where.add(bad.where() + " " + bad.column()));
                    assertThat(where).containsExactly("clicks[0]@6 event_time", "clicks[0]@7 event_time");
                })
                .hasMessageContaining("the field ts is missing or null");
    }

    @Test
    void aFixtureLineReadsAsPartitionZeroOfATopicNamedAfterTheFile() {
        PipelineConfig config = config("", "type: handlers.InferredMemBatch\nsql: SELECT kafka_topic, kafka_partition, kafka_offset FROM batch");
        assertThat(run(config, Message.ofLine("events.jsonl", 3, "{\"a\":1}".getBytes(StandardCharsets.UTF_8))))
                .containsExactly("{\"kafka_topic\":\"events.jsonl\",\"kafka_partition\":0,\"kafka_offset\":3}");
    }

    @Test
    void aStructuredTableWithoutAnEventTimeColumnIsRefusedWhenOneIsConfigured() {
        PipelineConfig config = new PipelineConfigReader(ConfigEnvironment.from(Map.of())).read("p.yml", """
                commands:
                  - name: table
                    sql: CREATE TABLE events (city VARCHAR)
                pipeline:
                  batch_size: 10
                  source:
                    type: kafka
                    kafka: {brokers: [b:9092], group_id: g, auto_offset_reset: earliest, topics: [t], event_time: {path: ts}}
                  handler:
                    type: handlers.StructuredBatch
                    table: events
                    sql: SELECT * FROM events
                  sink:
                    type: console
                """).orThrow();
        assertThatThrownBy(() -> run(config, record("t", 0, 0, "{\"city\":\"a\"}")))
                .isInstanceOfSatisfying(MallardException.class,
                        e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_CONFIG_INVALID))
                .hasMessageContaining("add `event_time TIMESTAMPTZ`");
    }

    @Test
    void theDiskHandlerRefusesRecordColumnsItCannotFill() {
        PipelineConfig config = config("", "type: handlers.InferredDiskBatch\nsql: SELECT kafka_offset FROM batch");
        assertThatThrownBy(() -> run(config, record("t", 0, 0, "{\"a\":1}")))
                .isInstanceOfSatisfying(MallardException.class,
                        e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_CONFIG_INVALID))
                .hasMessageContaining("use handlers.InferredMemBatch");
    }
}
