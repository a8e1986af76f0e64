// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.flow.config.PipelineConfig;
import dev.mallard.flow.config.PipelineConfigReader;
import dev.mallard.flow.source.Message;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DevInvokeTest {
    @TempDir
    Path dir;

    private static PipelineConfig config(String handler, String sinkType) {
        return new PipelineConfigReader(ConfigEnvironment.from(Map.of())).read("p.yml", """
                commands:
                  - name: table
                    sql: CREATE TABLE events (city VARCHAR, n BIGINT)
                pipeline:
                  batch_size: 10
                  source:
                    type: kafka
                    kafka: {brokers: [b:9092], group_id: g, auto_offset_reset: earliest, topics: [t]}
                  handler:
                """ + handler + """
                  sink:
                    type: %s
                    sqlcommand:
                      sql: COPY sqlflow_sink_batch TO '/nonexistent/never.csv'
                """.formatted(sinkType)).orThrow();
    }

    private String invoke(PipelineConfig config, String fixture) throws Exception {
        Path file = dir.resolve("f.jsonl");
        Files.writeString(file, fixture);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        DevInvoke.run(config, file, ConfigEnvironment.from(Map.of()), out);
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void theSinkIsNeverTouched() throws Exception {
        String out = invoke(config("    type: handlers.InferredMemBatch\n    sql: SELECT city FROM batch\n", "sqlcommand"),
                "{\"city\":\"a\"}\n");
        assertThat(out).isEqualTo("{\"city\":\"a\"}\n");
    }

    @Test
    void anEmptyFixturePrintsNothing() throws Exception {
        assertThat(invoke(config("    type: handlers.InferredMemBatch\n    sql: SELECT * FROM batch\n", "console"), "\n  \n")).isEmpty();
    }

    @Test
    void structuredBatchParsesIntoTheDeclaredTable() throws Exception {
        String out = invoke(config("    type: handlers.StructuredBatch\n    table: events\n    sql: SELECT city, n * 2 AS twice FROM events ORDER BY city\n", "console"),
                "{\"city\":\"b\",\"n\":2}\n\n{\"city\":\"a\",\"n\":1,\"ignored\":true}\n{\"city\":\"c\"}\n");
        assertThat(out.lines()).containsExactly("{\"city\":\"a\",\"twice\":2}", "{\"city\":\"b\",\"twice\":4}", "{\"city\":\"c\",\"twice\":null}");
    }

    private static PipelineConfig qualified(String commands, String table) {
        return new PipelineConfigReader(ConfigEnvironment.from(Map.of())).read("p.yml", """
                commands:
                  - name: table
                    sql: |
                %s
                pipeline:
                  batch_size: 10
                  source:
                    type: kafka
                    kafka: {brokers: [b:9092], group_id: g, auto_offset_reset: earliest, topics: [t]}
                  handler:
                    type: handlers.StructuredBatch
                    table: %s
                    sql: 'SELECT city FROM %s ORDER BY city'
                  sink: {type: console}
                """.formatted(commands.indent(6).stripTrailing(), table, table.replace("'", ""))).orThrow();
    }

    @Test
    void aStructuredBatchTableMayBeQualifiedByItsDatabaseOrSchema() throws Exception {
        String fixture = "{\"city\":\"b\"}\n{\"city\":\"a\"}\n";
        List<String> expected = List.of("{\"city\":\"a\"}", "{\"city\":\"b\"}");
        assertThat(invoke(qualified("ATTACH ':memory:' AS test_db;\nCREATE TABLE test_db.source (city VARCHAR);", "test_db.source"), fixture)
                .lines()).isEqualTo(expected);
        assertThat(invoke(qualified("CREATE TABLE source (city VARCHAR);", "main.source"), fixture).lines()).isEqualTo(expected);
        assertThat(invoke(qualified("ATTACH ':memory:' AS test_db;\nCREATE SCHEMA test_db.s;\nCREATE TABLE test_db.s.source (city VARCHAR);",
                "test_db.s.source"), fixture).lines()).isEqualTo(expected);
        assertThat(invoke(qualified("CREATE TABLE \"odd.name\" (city VARCHAR);", "'\"odd.name\"'"), fixture).lines()).isEqualTo(expected);
    }

    @Test
    void aStructuredBatchTableThatIsNotATableNameIsRefusedNamingTheKey() {
        assertThatThrownBy(() -> invoke(qualified("CREATE TABLE source (city VARCHAR);", "'source, (SELECT 1)'"), "{\"city\":\"a\"}\n"))
                .isInstanceOf(MallardException.class)
                .hasMessageContaining("pipeline.handler.table")
                .satisfies(e -> assertThat(((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_CONFIG_INVALID));
    }

    @Test
    void aWebSocketSourceCarriesEventTimeInEpochMicrosecondsIntoAWindow() throws Exception {
        // Bluesky's Jetstream over WebSocket: each event's time is time_us, microseconds since 1970.
        PipelineConfig config = new PipelineConfigReader(ConfigEnvironment.from(Map.of())).read("p.yml", """
                tables:
                  sql:
                    - name: kinds
                      sql: CREATE TABLE kinds (bucket TIMESTAMPTZ, kind VARCHAR, n BIGINT)
                      window:
                        time_column: bucket
                        size_seconds: 60
                        emit_sql: SELECT bucket, kind, sum(n) AS n FROM closed GROUP BY ALL ORDER BY bucket, kind
                        sink: {type: console}
                pipeline:
                  batch_size: 10
                  source:
                    type: websocket
                    websocket:
                      uri: wss://jetstream2.us-east.bsky.network/subscribe
                      event_time: {path: time_us, format: unix_micros}
                  handler:
                    type: handlers.InferredMemBatch
                    sql: |
                      INSERT INTO kinds
                      SELECT time_bucket(INTERVAL '60 seconds', event_time), kind, count(*) FROM batch GROUP BY ALL
                  sink: {type: noop}
                """).orThrow();
        String out = invoke(config, "{\"kind\":\"commit\",\"time_us\":1449947461000000}\n"
                + "{\"kind\":\"commit\",\"time_us\":1449947470000000}\n{\"kind\":\"identity\",\"time_us\":1449947530000000}\n");
        assertThat(out.lines()).containsExactly("{\"bucket\":\"2015-12-12T19:11:00Z\",\"kind\":\"commit\",\"n\":2}",
                "{\"bucket\":\"2015-12-12T19:12:00Z\",\"kind\":\"identity\",\"n\":1}");
    }

    @Test
    void aBadValueNamesTheFixtureLine() {
        assertThatThrownBy(() -> invoke(config("    type: handlers.StructuredBatch\n    table: events\n    sql: SELECT * FROM events\n", "console"),
                "{\"city\":\"a\",\"n\":1}\n{\"city\":\"b\",\"n\":\"many\"}\n"))
                .isInstanceOf(MallardException.class)
                .hasMessageContaining("f.jsonl line 2")
                .satisfies(e -> assertThat(((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_HANDLER_PARSE_FAILED));
    }

    @Test
    void handlerSqlErrorsAreUserFaults() {
        assertThatThrownBy(() -> invoke(config("    type: handlers.InferredMemBatch\n    sql: SELECT nope FROM batch\n", "console"), "{\"city\":\"a\"}\n"))
                .isInstanceOf(MallardException.class)
                .satisfies(e -> assertThat(((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_HANDLER_SQL_FAILED))
                .hasMessageContaining("nope");
    }

    @Test
    void fixtureLinesKeepTheirNumbersAcrossBlankLinesAndCrlf() {
        Path file = dir.resolve("x.jsonl");
        try {
            Files.writeString(file, "{\"a\":1}\r\n\r\n{\"a\":2}");
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
        List<Message> messages = DevInvoke.readFixture(file);
        assertThat(messages).extracting(Message::position).containsExactly("x.jsonl line 1", "x.jsonl line 2", "x.jsonl line 3");
        assertThat(new String(messages.get(2).value(), StandardCharsets.UTF_8)).isEqualTo("{\"a\":2}");
        assertThat(messages.get(1).isBlank()).isTrue();
    }
}
