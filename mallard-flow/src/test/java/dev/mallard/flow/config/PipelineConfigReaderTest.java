// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.core.config.ConfigProblem;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.flow.config.PipelineConfig.ErrorPolicy;
import dev.mallard.flow.config.PipelineConfig.HandlerType;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PipelineConfigReaderTest {
    private static final String SOURCE = """
              source:
                type: kafka
                kafka: {brokers: [localhost:9092], group_id: g, auto_offset_reset: earliest, topics: [t]}
            """;

    private static PipelineConfigReader.Result read(String yaml) {
        return new PipelineConfigReader(ConfigEnvironment.from(Map.of("SQLFLOW_BATCH", "7"))).read("p.yml", yaml);
    }

    @Test
    void sqlflowsSourceErrorPolicyIsAcceptedAndIgnoreIsRefusedNamingWhatToUse() {
        String head = "pipeline:\n  batch_size: 1\n  source:\n    on_error:\n      policy: %s\n"
                + "    type: kafka\n    kafka: {brokers: [localhost:9092], group_id: g, auto_offset_reset: earliest, topics: [t]}\n"
                + "  handler: {type: handlers.InferredMemBatch, sql: SELECT * FROM batch}\n  sink: {type: console}\n";
        assertThat(read(head.formatted("raise")).errors()).isEmpty();
        assertThat(read(head.formatted("ignore")).errors()).singleElement().satisfies(problem -> {
            assertThat(problem.path()).isEqualTo("pipeline.source.on_error.policy");
            assertThat(problem.code()).isEqualTo(ErrorCode.USER_CONFIG_UNSUPPORTED);
            assertThat(problem.message()).contains("pipeline.on_error.policy: IGNORE");
        });
    }

    @Test
    void aSinkWithoutATypeIsTheConsole() {
        PipelineConfigReader.Result result = read("pipeline:\n  batch_size: 1\n" + SOURCE
                + "  handler: {type: handlers.InferredMemBatch, sql: SELECT * FROM batch}\n  sink: {format: {type: parquet}}\n");
        assertThat(result.errors()).isEmpty();
        assertThat(result.orThrow().pipeline().sink().type()).isEqualTo("console");
    }

    @Test
    void aSqlflowConfigReadsIntoTheModel() {
        PipelineConfig config = read("""
                commands:
                  - name: c1
                    sql: CREATE TABLE t (a INT);
                pipeline:
                  name: p
                  batch_size: {{ SQLFLOW_BATCH }}
                  on_error: {policy: ignore}
                """ + SOURCE + """
                  handler: {type: handlers.StructuredBatch, table: t, sql: SELECT * FROM t}
                  sink:
                    type: sqlcommand
                    sqlcommand:
                      sql: SELECT 1
                      substitutions: [{var: $u, type: uuid4}]
                """).orThrow();
        assertThat(config.commands()).singleElement().satisfies(c -> assertThat(c.name()).isEqualTo("c1"));
        assertThat(config.pipeline().batchSize()).isEqualTo(7);
        assertThat(config.pipeline().flushIntervalSeconds()).isEqualTo(30);
        assertThat(config.pipeline().onError().policy()).isEqualTo(ErrorPolicy.IGNORE);
        assertThat(config.pipeline().handler().type()).isEqualTo(HandlerType.STRUCTURED_BATCH);
        assertThat(config.pipeline().handler().table()).contains("t");
        assertThat(config.pipeline().sink().substitutions()).singleElement()
                .satisfies(s -> assertThat(s.var()).isEqualTo("$u"));
    }

    @Test
    void batchSizeIsRequiredAndAtLeastOne() {
        assertThat(read("pipeline:\n" + SOURCE + "  handler: {type: handlers.InferredMemBatch, sql: SELECT 1}\n  sink: {type: console}\n").errors())
                .extracting(ConfigProblem::path).contains("pipeline.batch_size");
        assertThat(read("pipeline:\n  batch_size: 0\n" + SOURCE + "  handler: {type: handlers.InferredMemBatch, sql: SELECT 1}\n  sink: {type: console}\n").errors())
                .extracting(ConfigProblem::path).containsExactly("pipeline.batch_size");
    }

    @Test
    void udfsAreAHardErrorNamingTheFunctions() {
        PipelineConfigReader.Result result = read("""
                udfs:
                  - function_name: parse_domain
                    import_path: udf.url.parse_domain
                pipeline:
                  batch_size: 1
                """ + SOURCE + """
                  handler: {type: handlers.InferredMemBatch, sql: SELECT 1}
                  sink: {type: console}
                """);
        assertThat(result.errors()).singleElement().satisfies(problem -> {
            assertThat(problem.code()).isEqualTo(ErrorCode.USER_CONFIG_UNSUPPORTED);
            assertThat(problem.message()).contains("parse_domain").contains("CREATE MACRO");
            assertThat(problem.line()).isEqualTo(1);
        });
    }

    @Test
    void structuredBatchNeedsATable() {
        assertThat(read("pipeline:\n  batch_size: 1\n" + SOURCE + "  handler: {type: handlers.StructuredBatch, sql: SELECT 1}\n  sink: {type: console}\n").errors())
                .extracting(ConfigProblem::path).containsExactly("pipeline.handler.table");
    }

    @Test
    void aDlqPolicyWithoutADlqSinkIsRefused() {
        assertThat(read("pipeline:\n  batch_size: 1\n  on_error: {policy: DLQ}\n" + SOURCE
                + "  handler: {type: handlers.InferredMemBatch, sql: SELECT 1}\n  sink: {type: console}\n").errors())
                .singleElement().satisfies(p -> assertThat(p.message()).contains("dlq"));
    }

    @Test
    void sqlflowsTumblingWindowManagerIsReadWithItsDefaultPollInterval() {
        PipelineConfigReader.Result result = read("""
                tables:
                  sql:
                    - name: w
                      sql: CREATE TABLE w (a INT)
                      manager:
                        tumbling_window: {collect_closed_windows_sql: SELECT * FROM w, delete_closed_windows_sql: DELETE FROM w}
                        sink: {type: console}
                pipeline:
                  batch_size: 1
                """ + SOURCE + """
                  handler: {type: handlers.InferredMemBatch, sql: SELECT 1}
                  sink: {type: console}
                """);
        assertThat(result.errors()).isEmpty();
        PipelineConfig.PolledWindowConfig polled = result.orThrow().polledWindows().getFirst();
        assertThat(polled.table()).isEqualTo("w");
        assertThat(polled.path()).isEqualTo("tables.sql[0].manager");
        assertThat(polled.collectSql()).isEqualTo("SELECT * FROM w");
        assertThat(polled.deleteSql()).isEqualTo("DELETE FROM w");
        assertThat(polled.pollIntervalSeconds()).isEqualTo(10);
        assertThat(polled.sink().type()).isEqualTo("console");
        assertThat(result.orThrow().windows()).isEmpty();
    }

    @Test
    void aTableThatIsBothAPolledWindowAndAnEventTimeWindowIsRefused() {
        PipelineConfigReader.Result result = read("""
                tables:
                  sql:
                    - name: w
                      sql: CREATE TABLE w (bucket TIMESTAMPTZ)
                      manager:
                        tumbling_window: {collect_closed_windows_sql: SELECT * FROM w, delete_closed_windows_sql: DELETE FROM w}
                        sink: {type: console}
                      window: {time_column: bucket, size_seconds: 60, sink: {type: console}}
                pipeline:
                  batch_size: 1
                  source:
                    type: kafka
                    kafka: {brokers: [b:9092], group_id: g, auto_offset_reset: earliest, topics: [t], event_time: {path: ts, format: rfc3339}}
                  handler: {type: handlers.InferredMemBatch, sql: SELECT 1}
                  sink: {type: console}
                """);
        assertThat(result.errors()).singleElement().satisfies(p -> {
            assertThat(p.path()).isEqualTo("tables.sql[0].manager");
            assertThat(p.message()).contains("not both");
        });
    }

    @Test
    void gssapiIsRefused() {
        PipelineConfigReader.Result result = read("""
                pipeline:
                  batch_size: 1
                  source:
                    type: kafka
                    kafka:
                      brokers: [b:9092]
                      group_id: g
                      auto_offset_reset: earliest
                      topics: [t]
                      security_protocol: SASL_SSL
                      sasl: {mechanism: GSSAPI, username: u, password: p}
                  handler: {type: handlers.InferredMemBatch, sql: SELECT 1}
                  sink: {type: console}
                """);
        assertThat(result.errors()).singleElement().satisfies(p -> assertThat(p.message()).contains("GSSAPI"));
    }

    @Test
    void aTypeNeedsItsBlock() {
        assertThat(read("pipeline:\n  batch_size: 1\n  source: {type: kafka}\n  handler: {type: handlers.InferredMemBatch, sql: SELECT 1}\n  sink: {type: sqlcommand}\n").errors())
                .extracting(ConfigProblem::path).containsExactlyInAnyOrder("pipeline.source.kafka", "pipeline.sink.sqlcommand");
    }

    @Test
    void anUnknownHandlerTypeListsTheKnownOnes() {
        assertThat(read("pipeline:\n  batch_size: 1\n" + SOURCE + "  handler: {type: handlers.Magic, sql: SELECT 1}\n  sink: {type: console}\n").errors())
                .singleElement().satisfies(p -> assertThat(p.message()).contains("handlers.InferredMemBatch"));
    }

    @Test
    void theStateFilesStorageCompatibilityIsReadDefaultsToLatestAndAnUnknownReleaseIsRefusedAtItsKey() {
        String config = "pipeline:\n  batch_size: 1\n  state: {path: s.duckdb%s}\n" + SOURCE
                + "  handler: {type: handlers.InferredMemBatch, sql: SELECT * FROM batch}\n  sink: {type: console}\n";
        assertThat(read(config.formatted("")).orThrow().pipeline().storageCompatibility().version()).isEqualTo("latest");
        assertThat(read(config.formatted(", storage_compatibility: v1.0.0")).orThrow().pipeline().storageCompatibility().version())
                .isEqualTo("v1.0.0");
        assertThat(read(config.formatted(", storage_compatibility: v1.99.0")).errors()).singleElement().satisfies(problem -> {
            assertThat(problem.path()).isEqualTo("pipeline.state.storage_compatibility");
            assertThat(problem.code()).isEqualTo(ErrorCode.USER_CONFIG_INVALID);
            assertThat(problem.message()).contains("v1.99.0").contains("v1.0.0");
        });
    }
}
