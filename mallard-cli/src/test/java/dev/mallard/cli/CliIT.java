// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The runnable jar, run the way a user runs it: a separate JVM, real stdout, stderr and exit codes. */
class CliIT {
    private static final Path EXAMPLES = Path.of("..", "examples");

    @TempDir
    Path dir;

    record Run(int exit, String out, String err) {}

    private static Run mallard(Map<String, String> env, String... args) throws IOException, InterruptedException {
        return mallardIn(Path.of("."), env, args);
    }

    private static Run mallardIn(Path workingDirectory, Map<String, String> env, String... args) throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(MallardJar.command(args)).directory(workingDirectory.toFile());
        builder.environment().putAll(env);
        Path out = Files.createTempFile("mallard-out", ".txt");
        Path err = Files.createTempFile("mallard-err", ".txt");
        Process process = builder.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).as("mallard finished").isTrue();
        return new Run(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
    }

    private static Run mallard(String... args) throws IOException, InterruptedException {
        return mallard(Map.of(), args);
    }

    @Test
    void devInvokePrintsOnlyResultRowsOnStdoutEvenWithDebugLogs() throws Exception {
        Run run = mallard(Map.of("MALLARD_LOG_LEVEL", "DEBUG"), "dev", "invoke",
                EXAMPLES.resolve("city-counts.yml").toString(), EXAMPLES.resolve("fixtures/city-events.jsonl").toString());
        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(run.out()).isEqualTo("{\"city\":\"New York\",\"city_count\":1}\n{\"city\":\"Baltimore\",\"city_count\":1}\n");
        assertThat(run.err()).contains("DEBUG");
    }

    @Test
    void devInvokeTakesItsConfigWithDashCAsWellAsPositionally() throws Exception {
        Run run = mallard("dev", "invoke", "-c", EXAMPLES.resolve("city-counts.yml").toString(),
                EXAMPLES.resolve("fixtures/city-events.jsonl").toString());
        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(run.out()).isEqualTo("{\"city\":\"New York\",\"city_count\":1}\n{\"city\":\"Baltimore\",\"city_count\":1}\n");
    }

    @Test
    void traceLogsEachViewMaintenanceStatementWithItsDuration() throws Exception {
        Run run = mallard(Map.of("MALLARD_LOG_LEVEL", "TRACE"), "sql", dir.resolve("traced.duckdb").toString(), "-e",
                "CREATE TABLE t (g INTEGER, x INTEGER); CREATE MATERIALIZED VIEW v AS SELECT g, min(x) AS lo FROM t GROUP BY g; "
                        + "INSERT INTO t VALUES (1, 5); SELECT * FROM v");
        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(run.out()).contains("5");
        assertThat(run.err()).containsPattern("TRACE .*views statement took_ms=[0-9.]+ sql=\"MERGE INTO mallard_views\\.\"state\\$v\"");
        assertThat(run.out()).doesNotContain("TRACE").doesNotContain("took_ms");
    }

    @Test
    void sqlKeepsTheViewsLifecycleLogsOffItsOutputUnlessALevelIsAsked() throws Exception {
        Run run = mallard("sql", dir.resolve("quiet.duckdb").toString(), "-e",
                "CREATE TABLE t (g INTEGER); CREATE MATERIALIZED VIEW v AS SELECT g, count(*) AS n FROM t GROUP BY g; SELECT count(*) AS views FROM v");
        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(run.out()).isEqualTo("OK\nCREATE MATERIALIZED VIEW\nviews\n-----\n0\n(1 row)\n");
        assertThat(run.err()).isEmpty();
        Run info = mallard(Map.of("MALLARD_LOG_LEVEL", "INFO"), "sql", dir.resolve("loud.duckdb").toString(), "-e",
                "CREATE TABLE t (g INTEGER); CREATE MATERIALIZED VIEW v AS SELECT g, count(*) AS n FROM t GROUP BY g");
        assertThat(info.err()).contains("INFO").contains("materialized view created");
        assertThat(info.out()).isEqualTo("OK\nCREATE MATERIALIZED VIEW\n");
    }

    @Test
    void aBadMessageExitsTenNamingItsLine() throws Exception {
        Path fixture = dir.resolve("bad.jsonl");
        Files.writeString(fixture, "{\"event\":\"a\",\"properties\":{\"city\":\"X\"}}\n{\"event\":\"b\",\"properties\":{\"city\":7}}\n");
        Run run = mallard("dev", "invoke", EXAMPLES.resolve("city-counts.yml").toString(), fixture.toString());
        assertThat(run.exit()).isEqualTo(10);
        assertThat(run.out()).isEmpty();
        assertThat(run.err()).contains("error: user.handler.parse_failed").contains("bad.jsonl line 2").contains("properties.city");
    }

    @Test
    void validateReportsEveryFaultWithFileLineAndColumnAndExitsTen() throws Exception {
        Path config = dir.resolve("bad.yml");
        Files.writeString(config, """
                pipeline:
                  batch_size: 0
                  source:
                    type: kafka
                    kafka: {brokers: [b:9092], group_id: g, auto_offset_reset: sometimes, topics: [t]}
                  handler:
                    type: handlers.InferredMemBatch
                    sql: SELEC 1
                  sink:
                    typ: console
                """);
        Run run = mallard("validate", config.toString());
        assertThat(run.exit()).isEqualTo(10);
        assertThat(run.err()).contains(config + ":2:3: user.config.invalid: 'pipeline.batch_size'")
                .contains("auto_offset_reset")
                .contains(config + ":10:5: user.config.unknown_key: unknown key 'typ'")
                .contains("did you mean 'type'")
                .contains("user.sql.invalid")
                .contains("invalid (");
    }

    @Test
    void validateJsonListsChecksAndSaysWhatWasSkipped() throws Exception {
        Run run = mallard(Map.of("MALLARD_EXAMPLES", EXAMPLES.toString()), "validate", EXAMPLES.resolve("csv-join.yml").toString(), "--json");
        assertThat(run.exit()).as(run.err()).isZero();
        JsonNode report = new ObjectMapper().readTree(run.out());
        assertThat(report.path("valid").asBoolean()).isTrue();
        assertThat(report.path("checks").findValuesAsText("status")).doesNotContain("fail");
        JsonNode handler = report.path("checks").valueStream().filter(c -> c.path("name").asText().equals("sql.handler")).findFirst().orElseThrow();
        assertThat(handler.path("status").asText()).isEqualTo("skipped");
        assertThat(handler.path("reason").asText()).contains("dev invoke");
    }

    @Test
    void theGeneratedExampleIsItselfAValidConfig() throws Exception {
        Run example = mallard("config", "example");
        assertThat(example.exit()).isZero();
        assertThat(example.out()).contains("batch_size").contains("# ").contains("handlers.StructuredBatch");
        Path config = dir.resolve("example.yml");
        Files.writeString(config, example.out());
        Run validate = mallard("config", "validate", config.toString());
        assertThat(validate.exit()).as(validate.err()).isZero();
        assertThat(validate.out()).contains(config + ": valid");
    }

    @Test
    void aMisspeltEnvironmentVariableFailsWithDidYouMean() throws Exception {
        Run run = mallard(Map.of("SQLFLOW_KAFKA_BROKER", "k:9092"), "validate", EXAMPLES.resolve("city-counts.yml").toString());
        assertThat(run.exit()).isEqualTo(10);
        assertThat(run.err()).contains("user.config.template_undefined").contains("did you mean SQLFLOW_KAFKA_BROKER");
    }

    @Test
    void aMissingConfigIsAUserFault() throws Exception {
        Run run = mallard("dev", "invoke", "no-such.yml", "no-such.jsonl");
        assertThat(run.exit()).isEqualTo(10);
        assertThat(run.err()).contains("user.config.not_found").contains("no-such.yml");
    }

    @Test
    void anUnknownCommandIsAUsageError() throws Exception {
        Run run = mallard("frobnicate");
        assertThat(run.exit()).isEqualTo(2);
        assertThat(run.err()).contains("user.cli.argument_invalid");
    }

    @Test
    void anUnknownCommandWithHelpSaysItIsUnknownAndExitsTwo() throws Exception {
        Run run = mallard("rollup", "--help");
        assertThat(run.exit()).isEqualTo(2);
        assertThat(run.out()).isEmpty();
        assertThat(run.err()).contains("error: user.cli.argument_invalid: unknown command 'rollup' for 'mallard'");
    }

    @Test
    void aSubcommandsHelpIsPrintedWithExitZero() throws Exception {
        Run run = mallard("run", "--help");
        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(run.out()).startsWith("Usage: mallard run").contains("-h, --help");
        assertThat(run.err()).isEmpty();
    }

    @Test
    void sqlOnMemoryOpensAnInMemoryDatabaseAndCreatesNoFile() throws Exception {
        Run run = mallardIn(dir, Map.of(), "sql", ":memory:", "-e", "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (7); SELECT x FROM t");
        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(run.out()).contains("7");
        try (var files = Files.list(dir)) {
            assertThat(files.map(path -> path.getFileName().toString())).doesNotContain(":memory:", ":memory:.wal");
        }
    }

    @Test
    void versionNamesDuckDb() throws Exception {
        Run run = mallard("version");
        assertThat(run.exit()).isZero();
        assertThat(run.out()).contains("mallard 0.1.0").contains("duckdb v2.0.0");
    }

    @Test
    void udfsAreRefusedBeforeAnythingRuns() throws Exception {
        Path config = dir.resolve("udf.yml");
        Files.writeString(config, """
                udfs:
                  - function_name: parse_domain
                    import_path: udf.url.parse_domain
                pipeline:
                  batch_size: 1
                  source: {type: kafka, kafka: {brokers: [b:9092], group_id: g, auto_offset_reset: earliest, topics: [t]}}
                  handler: {type: handlers.InferredMemBatch, sql: SELECT parse_domain(url) FROM batch}
                  sink: {type: console}
                """);
        Run run = mallard("dev", "invoke", config.toString(), EXAMPLES.resolve("fixtures/city-events.jsonl").toString());
        assertThat(run.exit()).isEqualTo(10);
        assertThat(run.err()).contains("user.config.unsupported").contains("parse_domain").contains("CREATE MACRO");
    }
}
