// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.validate;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.core.config.ConfigProblem;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.ExitCode;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PipelineValidatorTest {
    private static final String SOURCE = """
              source:
                type: kafka
                kafka: {brokers: [localhost:9092], group_id: g, auto_offset_reset: earliest, topics: [t]}
            """;

    private static ValidationReport validate(String yaml) {
        return new PipelineValidator(ConfigEnvironment.from(Map.of())).validate("p.yml", yaml);
    }

    private static Check check(ValidationReport report, String name) {
        return report.checks().stream().filter(c -> c.name().equals(name)).findFirst().orElseThrow();
    }

    @Test
    void aSoundStructuredConfigPassesEveryCheckThatRan() {
        ValidationReport report = validate("""
                commands:
                  - name: table
                    sql: |
                      CREATE TABLE events (city VARCHAR, n INT);
                pipeline:
                  batch_size: 10
                """ + SOURCE + """
                  handler:
                    type: handlers.StructuredBatch
                    table: events
                    sql: SELECT city, sum(n) AS total FROM events GROUP BY city
                  sink:
                    type: sqlcommand
                    sqlcommand:
                      sql: CREATE TABLE IF NOT EXISTS out AS SELECT * FROM sqlflow_sink_batch
                """);
        assertThat(report.errors()).isEmpty();
        assertThat(report.exitCode()).isEqualTo(ExitCode.OK);
        assertThat(check(report, "sql.commands").status()).isEqualTo(Check.Status.PASS);
        assertThat(check(report, "sql.handler").status()).isEqualTo(Check.Status.PASS);
        assertThat(check(report, "sql.sink").status()).isEqualTo(Check.Status.PASS);
        assertThat(check(report, "sql.tables").status()).isEqualTo(Check.Status.SKIPPED);
    }

    @Test
    void sqlflowsBlueskyWindowedExampleValidates() throws Exception {
        String yaml;
        try (java.io.InputStream in = PipelineValidatorTest.class.getResourceAsStream("/sqlflow/bluesky.kafka.windowed.yml")) {
            yaml = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
        ValidationReport report = validate(yaml);
        assertThat(report.errors()).as(report.toText()).isEmpty();
        assertThat(check(report, "sql.tables").status()).isEqualTo(Check.Status.PASS);
    }

    @Test
    void aPolledWindowsCollectQueryThatDoesNotBindFailsValidationNamingTheKey() {
        ValidationReport report = validate("""
                tables:
                  sql:
                    - name: w
                      sql: CREATE TABLE w (bucket TIMESTAMPTZ, n INT)
                      manager:
                        tumbling_window:
                          collect_closed_windows_sql: SELECT bucket, missing FROM w
                          delete_closed_windows_sql: DELETE FROM w WHERE bucket < now()
                        sink: {type: console}
                pipeline:
                  batch_size: 10
                """ + SOURCE + """
                  handler: {type: handlers.InferredMemBatch, sql: "INSERT INTO w SELECT now(), 1 FROM batch"}
                  sink: {type: noop}
                """);
        assertThat(report.errors()).singleElement().satisfies(problem -> {
            assertThat(problem.path()).isEqualTo("tables.sql[0].manager.tumbling_window.collect_closed_windows_sql");
            assertThat(problem.message()).contains("missing");
        });
    }

    @Test
    void aClickHouseSinkFailsValidationSayingTheSinkIsNotAvailable() {
        // SQLFlow's kafka.clickhouse.yml: validate must not call valid what run cannot do.
        ValidationReport report = validate("""
                pipeline:
                  name: kafka-clickhouse-sink
                  batch_size: 50000
                """ + SOURCE + """
                  handler:
                    type: handlers.InferredMemBatch
                    sql: SELECT * FROM batch
                  sink:
                    type: clickhouse
                    clickhouse:
                      dsn: clickhouse://localhost:8123/test
                      table: user_actions
                """);
        assertThat(report.exitCode()).isEqualTo(ExitCode.USER_FAULT);
        assertThat(report.errors()).singleElement().satisfies(problem -> {
            assertThat(problem.code()).isEqualTo(ErrorCode.USER_CONFIG_UNSUPPORTED);
            assertThat(problem.path()).isEqualTo("pipeline.sink.type");
            assertThat(problem.message()).contains("clickhouse sink is not available");
        });
    }

    @Test
    void sqlflowsKafkaIcebergConfigValidatesUnchangedAndABadCatalogBlockFailsNamingEachKey() {
        String sink = """
                  handler:
                    type: handlers.InferredMemBatch
                    sql: SELECT CAST(timestamp AS TIMESTAMP) AS timestamp, properties.city AS city FROM batch
                  sink:
                    type: iceberg
                    iceberg:
                      catalog_name: sqlflow_test
                """;
        ValidationReport sqlflow = validate("pipeline:\n  batch_size: 5000\n" + SOURCE + sink + "      table_name: default.city_events\n");
        assertThat(sqlflow.errors()).as(sqlflow.toText()).isEmpty();

        ValidationReport bad = validate("pipeline:\n  batch_size: 5000\n" + SOURCE + sink + """
                      table_name: city_events
                      catalog:
                        uri: mysql://db/lake
                        warehouse: s3://bucket/lake
                """);
        assertThat(bad.exitCode()).isEqualTo(ExitCode.USER_FAULT);
        assertThat(bad.errors()).extracting(ConfigProblem::path, ConfigProblem::code).containsExactlyInAnyOrder(
                org.assertj.core.groups.Tuple.tuple("pipeline.sink.iceberg.table_name", ErrorCode.USER_CONFIG_INVALID),
                org.assertj.core.groups.Tuple.tuple("pipeline.sink.iceberg.catalog.uri", ErrorCode.USER_ICEBERG_CATALOG_INVALID),
                org.assertj.core.groups.Tuple.tuple("pipeline.sink.iceberg.catalog.warehouse", ErrorCode.USER_CONFIG_UNSUPPORTED));
    }

    @Test
    void validateLoadsNoExtensionForAnS3SettingAndSaysInFullWhyItWasNotChecked() {
        // SQLFlow's s3.parquet.sink.yml sets s3_* in its commands; DuckDB would autoload (and download) httpfs for them.
        ValidationReport report = validate("""
                commands:
                  - name: s3
                    sql: |
                      SET s3_region='us-east-1';
                      SET s3_url_style='path';
                      CREATE TABLE t (n INT);
                pipeline:
                  batch_size: 10
                """ + SOURCE + """
                  handler:
                    type: handlers.StructuredBatch
                    table: t
                    sql: SELECT n FROM t
                  sink:
                    type: noop
                """);
        assertThat(report.errors()).isEmpty();
        Check commands = check(report, "sql.commands");
        assertThat(commands.status()).isEqualTo(Check.Status.WARN);
        assertThat(commands.problems()).hasSize(2).allSatisfy(problem -> assertThat(problem.message())
                .contains("httpfs")
                .contains("validate loads no extensions")
                .contains("LOAD httpfs"));
        assertThat(check(report, "sql.handler").status()).isEqualTo(Check.Status.PASS);
    }

    @Test
    void validateNeverLoadsAnExtensionWhileCheckingSql() throws Exception {
        try (SqlChecks checks = new SqlChecks("p.yml", dev.mallard.core.config.LocatedYaml.parse("p.yml", """
                commands:
                  - name: s3
                    sql: SET s3_region='us-east-1'
                """, new java.util.ArrayList<>()), "commands:\n  - name: s3\n    sql: SET s3_region='us-east-1'\n")) {
            checks.commands();
            assertThat(checks.loadedExtensions()).doesNotContain("httpfs");
        }
    }

    @Test
    void aBindingErrorInTheHandlerPointsAtItsLine() {
        ValidationReport report = validate("""
                commands:
                  - name: table
                    sql: CREATE TABLE events (city VARCHAR)
                pipeline:
                  batch_size: 10
                """ + SOURCE + """
                  handler:
                    type: handlers.StructuredBatch
                    table: events
                    sql: |
                      SELECT city
                      FROM events;
                      SELECT town FROM events
                  sink: {type: console}
                """);
        assertThat(report.exitCode()).isEqualTo(ExitCode.USER_FAULT);
        assertThat(report.errors()).singleElement().satisfies(problem -> {
            assertThat(problem.code()).isEqualTo(ErrorCode.USER_SQL_INVALID);
            assertThat(problem.line()).isEqualTo(15);
            assertThat(problem.message()).contains("town");
        });
    }

    @Test
    void inferredHandlersAreSyntaxCheckedAndSayBindingWasSkipped() {
        ValidationReport sound = validate("pipeline:\n  batch_size: 1\n" + SOURCE
                + "  handler: {type: handlers.InferredMemBatch, sql: SELECT city FROM batch}\n  sink: {type: console}\n");
        assertThat(check(sound, "sql.handler").status()).isEqualTo(Check.Status.SKIPPED);
        assertThat(check(sound, "sql.handler").reason()).get().asString().contains("dev invoke");
        ValidationReport broken = validate("pipeline:\n  batch_size: 1\n" + SOURCE
                + "  handler: {type: handlers.InferredMemBatch, sql: SELEC city FROM batch}\n  sink: {type: console}\n");
        assertThat(broken.errors()).singleElement().satisfies(p -> assertThat(p.message()).contains("Parser Error").contains("SELEC"));
    }

    @Test
    void materializedViewsInCommandsAreCompiledAndAnUnsupportedOneIsRefusedWithItsCode() {
        String handler = """
                  handler:
                    type: handlers.InferredMemBatch
                    sql: INSERT INTO events SELECT city, n FROM batch
                  sink: {type: noop}
                """;
        ValidationReport sound = validate("""
                commands:
                  - name: views
                    sql: |
                      CREATE TABLE events (city VARCHAR, n INT);
                      CREATE MATERIALIZED VIEW IF NOT EXISTS totals AS SELECT city, sum(n) AS total FROM events GROUP BY city;
                pipeline:
                  batch_size: 10
                """ + SOURCE + handler);
        assertThat(sound.errors()).isEmpty();
        assertThat(check(sound, "sql.commands").status()).isEqualTo(Check.Status.PASS);

        ValidationReport refused = validate("""
                commands:
                  - name: views
                    sql: |
                      CREATE TABLE events (city VARCHAR, n INT);
                      CREATE MATERIALIZED VIEW totals AS SELECT city, n, random() AS r FROM events;
                pipeline:
                  batch_size: 10
                """ + SOURCE + handler);
        assertThat(refused.errors()).singleElement().satisfies(problem -> {
            assertThat(problem.code()).isEqualTo(ErrorCode.USER_VIEW_UNSUPPORTED);
            assertThat(problem.line()).isEqualTo(5);
            assertThat(problem.message()).contains("random");
        });
    }

    @Test
    void commandsThatReachOutsideAreNotRunAndWhatDependsOnThemIsOnlyAWarning() {
        ValidationReport report = validate("""
                commands:
                  - name: attach
                    sql: |
                      INSTALL httpfs;
                      ATTACH 'https://example.invalid/db' AS remote;
                      CREATE VIEW v AS SELECT * FROM remote.t;
                pipeline:
                  batch_size: 10
                """ + SOURCE + """
                  handler: {type: handlers.InferredMemBatch, sql: SELECT 1}
                  sink: {type: console}
                """);
        assertThat(report.errors()).isEmpty();
        Check commands = check(report, "sql.commands");
        assertThat(commands.status()).isEqualTo(Check.Status.SKIPPED);
        assertThat(commands.reason()).get().asString().contains("INSTALL on line 4").contains("ATTACH on line 5");
        assertThat(report.warnings()).extracting(ConfigProblem::message).anyMatch(m -> m.contains("remote"));
    }

    @Test
    void schemaTemplateAndSqlFaultsAreAllReportedInOnePass() {
        ValidationReport report = new PipelineValidator(ConfigEnvironment.from(Map.of("SQLFLOW_TOPC", "x"))).validate("p.yml", """
                commands:
                  - name: broken
                    sql: CREATE TABLE (a INT)
                pipeline:
                  batch_size: 1
                  batchsize: 2
                  source:
                    type: kafka
                    kafka: {brokers: [b], group_id: g, auto_offset_reset: earliest, topics: ["{{ SQLFLOW_TOPIC }}"]}
                  handler: {type: handlers.InferredMemBatch, sql: SELECT 1}
                  sink: {type: console}
                """);
        assertThat(report.errors()).extracting(p -> p.code())
                .contains(ErrorCode.USER_CONFIG_TEMPLATE_UNDEFINED, ErrorCode.USER_CONFIG_UNKNOWN_KEY, ErrorCode.USER_SQL_INVALID);
        assertThat(report.errors()).extracting(ConfigProblem::message).anyMatch(m -> m.contains("did you mean 'batch_size'"));
    }

    @Test
    void theJsonReportHasChecksAndNeverCallsASkippedCheckPass() throws Exception {
        ValidationReport report = validate("pipeline:\n  batch_size: 1\n" + SOURCE
                + "  handler: {type: handlers.InferredMemBatch, sql: SELECT 1}\n  sink: {type: console}\n");
        JsonNode json = new ObjectMapper().readTree(report.toJson());
        assertThat(json.path("valid").asBoolean()).isTrue();
        assertThat(json.path("exit_code").asInt()).isZero();
        assertThat(json.path("checks").valueStream().map(c -> c.path("name").asText()))
                .contains("template", "schema", "rules", "sql.commands", "sql.tables", "sql.handler", "sql.sink");
        json.path("checks").forEach(check -> {
            if (check.path("status").asText().equals("skipped")) {
                assertThat(check.path("reason").asText()).isNotBlank();
            }
        });
    }

    @Test
    void validateExecutesNothingFromCommands(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
        java.nio.file.Path target = dir.resolve("written.csv");
        ValidationReport report = validate("commands:\n  - name: copy\n    sql: COPY (SELECT 1 AS a) TO '" + target + "'\n"
                + "pipeline:\n  batch_size: 1\n" + SOURCE + "  handler: {type: handlers.InferredMemBatch, sql: SELECT 1}\n  sink: {type: console}\n");
        assertThat(report.errors()).isEmpty();
        assertThat(target).doesNotExist();
    }

    @Test
    void aFileThatIsNotHereIsAWarningNotAFault() {
        ValidationReport report = validate("commands:\n  - name: load\n    sql: CREATE TABLE t AS SELECT * FROM read_csv('/nonexistent/cities.csv')\n"
                + "pipeline:\n  batch_size: 1\n" + SOURCE + "  handler: {type: handlers.InferredMemBatch, sql: SELECT 1}\n  sink: {type: console}\n");
        assertThat(report.errors()).isEmpty();
        assertThat(report.warnings()).extracting(ConfigProblem::message).anyMatch(m -> m.contains("IO Error") && m.contains("where the pipeline runs"));
    }

    private static String windowed(String table, String window, String sourceExtra) {
        return """
                tables:
                  sql:
                    - name: counts
                      sql: %s
                      window:
                %s
                        sink: {type: console}
                pipeline:
                  batch_size: 10
                  source:
                    type: kafka
                    kafka: {brokers: [localhost:9092], group_id: g, auto_offset_reset: earliest, topics: [t]%s}
                  handler:
                    type: handlers.InferredMemBatch
                    sql: INSERT INTO counts SELECT time_bucket(INTERVAL '60 seconds', event_time), count(*) FROM batch GROUP BY ALL
                  sink: {type: noop}
                """.formatted(table, window.indent(8).stripTrailing(), sourceExtra);
    }

    @Test
    void aSoundWindowPasses() {
        ValidationReport report = validate(windowed("CREATE TABLE counts (bucket TIMESTAMPTZ, n BIGINT)",
                "time_column: bucket\nsize_seconds: 60\nemit_sql: SELECT bucket, sum(n) AS n FROM closed GROUP BY ALL",
                ", event_time: {path: ts}"));
        assertThat(report.errors()).isEmpty();
        assertThat(check(report, "sql.tables").status()).isEqualTo(Check.Status.PASS);
    }

    @Test
    void aWindowsFaultsAreEachReportedWhereTheyAre() {
        record Case(String table, String window, String sourceExtra, ErrorCode code, String path, String says) {}
        List<Case> cases = List.of(
                new Case("CREATE TABLE counts (bucket TIMESTAMP, n BIGINT)", "time_column: bucket\nsize_seconds: 60",
                        ", event_time: {path: ts}", ErrorCode.USER_CONFIG_INVALID, "tables.sql[0].window.time_column", "must be TIMESTAMPTZ"),
                new Case("CREATE TABLE counts (bucket TIMESTAMPTZ, n BIGINT, PRIMARY KEY (bucket))", "time_column: bucket\nsize_seconds: 60",
                        ", event_time: {path: ts}", ErrorCode.USER_CONFIG_INVALID, "tables.sql[0].window.time_column", "grow without bound"),
                new Case("CREATE TABLE counts (bucket TIMESTAMPTZ, n BIGINT)", "time_column: bucket\nsize_seconds: 60\nemit_sql: SELECT 1",
                        ", event_time: {path: ts}", ErrorCode.USER_CONFIG_INVALID, "tables.sql[0].window.emit_sql", "does not read `closed`"),
                new Case("CREATE TABLE counts (bucket TIMESTAMPTZ, n BIGINT)", "time_column: bucket\nsize_seconds: 60",
                        "", ErrorCode.USER_CONFIG_INVALID, "tables.sql[0].window", "add event_time"),
                new Case("CREATE TABLE counts (bucket TIMESTAMPTZ, n BIGINT)", "time_column: bucket\nsize_seconds: 60\nlate_rows: true",
                        ", event_time: {path: ts}", ErrorCode.USER_CONFIG_UNSUPPORTED, "tables.sql[0].window.late_rows", "allowed_lateness_seconds"),
                new Case("CREATE TABLE counts (bucket TIMESTAMPTZ, n BIGINT)", "time_column: bucket\nsize_seconds: 60\nallowed_lateness_seconds: 60",
                        ", event_time: {path: ts}", ErrorCode.USER_CONFIG_INVALID, "tables.sql[0].window.allowed_lateness_seconds", "only appends"),
                new Case("CREATE TABLE counts (bucket TIMESTAMPTZ, n BIGINT)", "time_column: bucket\nsize_seconds: 60\npoll_interval_seconds: 5",
                        ", event_time: {path: ts}", ErrorCode.USER_CONFIG_UNSUPPORTED, "tables.sql[0].window.poll_interval_seconds", "idle_close_seconds"));
        for (Case c : cases) {
            ValidationReport report = validate(windowed(c.table(), c.window(), c.sourceExtra()));
            assertThat(report.errors()).as(c.says()).singleElement().satisfies(problem -> {
                assertThat(problem.code()).isEqualTo(c.code());
                assertThat(problem.path()).isEqualTo(c.path());
                assertThat(problem.message()).contains(c.says());
            });
        }
    }

    private static String windowedHandler(String handler) {
        return """
                commands:
                  - name: events
                    sql: CREATE TABLE events (city VARCHAR, event_time TIMESTAMP)
                tables:
                  sql:
                    - name: counts
                      sql: CREATE TABLE counts (bucket TIMESTAMPTZ, n BIGINT)
                      window: {time_column: bucket, size_seconds: 60, sink: {type: console}}
                pipeline:
                  batch_size: 10
                  source:
                    type: kafka
                    kafka: {brokers: [localhost:9092], group_id: g, auto_offset_reset: earliest, topics: [t], event_time: {path: ts}}
                  handler:
                %s
                  sink: {type: noop}
                """.formatted(handler.indent(4).stripTrailing());
    }

    @Test
    void aWindowsBucketsMustBeCutAsTheWindowCutsThem() {
        String inferred = "type: handlers.InferredMemBatch\nsql: INSERT INTO counts SELECT %s, count(*) FROM batch GROUP BY ALL";
        assertThat(validate(windowedHandler(inferred.formatted("time_bucket(INTERVAL 1 MINUTE, event_time)"))).errors())
                .as("DuckDB says one minute is 60 seconds").isEmpty();
        assertThat(check(validate(windowedHandler(inferred.formatted("time_bucket(INTERVAL 1 MINUTE, event_time)"))), "sql.window").status())
                .isEqualTo(Check.Status.PASS);
        record Case(String expression, String says) {}
        for (Case c : List.of(
                new Case("time_bucket(INTERVAL '1 hour', event_time)", "needs time_bucket(INTERVAL '60 seconds', event_time)"),
                new Case("time_bucket(INTERVAL '60 seconds', ts)", "is filled with time_bucket(INTERVAL '60 seconds', ts)"),
                new Case("time_bucket(INTERVAL '60 seconds', event_time, TIMESTAMPTZ '2024-01-01 00:00:30+00')", "no origin or offset"),
                new Case("date_trunc('minute', event_time)", "without time_bucket(INTERVAL '60 seconds', event_time)"))) {
            ValidationReport report = validate(windowedHandler(inferred.formatted(c.expression())));
            assertThat(report.errors()).as(c.expression()).singleElement().satisfies(problem -> {
                assertThat(problem.code()).isEqualTo(ErrorCode.USER_CONFIG_INVALID);
                assertThat(problem.path()).isEqualTo("pipeline.handler.sql");
                assertThat(problem.message()).contains(c.says());
            });
        }
        ValidationReport structured = validate(windowedHandler("type: handlers.StructuredBatch\ntable: events\n"
                + "sql: INSERT INTO counts SELECT time_bucket(INTERVAL '60 seconds', event_time), count(*) FROM events GROUP BY ALL"));
        assertThat(structured.errors()).extracting(ConfigProblem::path).contains("pipeline.handler.table");
        assertThat(structured.errors()).extracting(ConfigProblem::message).anyMatch(m -> m.contains("needs `event_time TIMESTAMPTZ`"));
    }
}
