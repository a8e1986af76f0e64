// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.flow.config.PipelineConfig;
import dev.mallard.flow.config.PipelineConfigReader;
import dev.mallard.flow.source.webhook.HmacSignature;
import java.io.ByteArrayOutputStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Pipelines whose source is the webhook, run by PipelineRunner and fed over HTTP. */
class WebhookPipelineIT {
    private static final Path EXAMPLE = Path.of("..", "examples", "webhook-github.yml");
    private static final String SECRET = "It's a Secret to Everybody";

    @TempDir
    Path dir;

    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final ExecutorService runs = Executors.newSingleThreadExecutor();
    private int port;

    @AfterEach
    void close() {
        runs.shutdownNow();
        client.close();
    }

    private static int freePort() throws Exception {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private Future<PipelineRunner.Outcome> start(PipelineConfig config, long messages, ByteArrayOutputStream out) throws Exception {
        Future<PipelineRunner.Outcome> run = runs.submit(() -> {
            try (PipelineRunner runner = new PipelineRunner(config, ConfigEnvironment.from(Map.of()), new PipelineRunner.Options(messages, out))) {
                return runner.run();
            }
        });
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < deadline && !run.isDone()) {
            try {
                if (client.send(request("/healthz").GET().build(), HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
                    return run;
                }
            } catch (java.io.IOException notYet) {
                Thread.sleep(50);
            }
        }
        run.get();
        throw new AssertionError("the webhook source did not start listening on " + port);
    }

    private HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(60));
    }

    private CompletableFuture<HttpResponse<String>> postSigned(String body) {
        String signature = new HmacSignature("X-Hub-Signature-256", "sha256", SECRET).headerValue(body.getBytes(StandardCharsets.UTF_8));
        return client.sendAsync(request("/events").header("Content-Type", "application/json").header("X-Hub-Signature-256", signature)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void theGithubExampleAnswersEachSignedDeliveryOnceItsRowReachedTheSink() throws Exception {
        port = freePort();
        PipelineConfig config = new PipelineConfigReader(ConfigEnvironment.from(Map.of(
                "PORT", Integer.toString(port), "MALLARD_WEBHOOK_SECRET", SECRET))).read(EXAMPLE).orThrow();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Future<PipelineRunner.Outcome> run = start(config, 3, out);

        HttpResponse<String> unsigned = client.send(request("/events").POST(HttpRequest.BodyPublishers.ofString("{\"action\":\"x\"}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(unsigned.statusCode()).isEqualTo(400);
        CompletableFuture<HttpResponse<String>> two = postSigned("""
                {"action":"opened","number":7,"repository":{"full_name":"octo-org/hello-world"},"sender":{"login":"octocat"}}
                {"action":"labeled","number":7,"repository":{"full_name":"octo-org/hello-world"},"sender":{"login":"hubot"}}
                """);
        CompletableFuture<HttpResponse<String>> one = postSigned("""
                {
                  "action": "closed",
                  "number": 7,
                  "repository": {"full_name": "octo-org/hello-world"},
                  "sender": {"login": "octocat"}
                }
                """);
        for (HttpResponse<String> response : List.of(two.get(), one.get())) {
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.body()).isEqualTo("{\"status\":\"flushed\"}");
        }
        // Answered only after the flush: the rows are already out.
        assertThat(out.toString(StandardCharsets.UTF_8).lines().toList()).containsExactlyInAnyOrder(
                "{\"action\":\"opened\",\"number\":7,\"repo\":\"octo-org/hello-world\",\"sender\":\"octocat\"}",
                "{\"action\":\"labeled\",\"number\":7,\"repo\":\"octo-org/hello-world\",\"sender\":\"hubot\"}",
                "{\"action\":\"closed\",\"number\":7,\"repo\":\"octo-org/hello-world\",\"sender\":\"octocat\"}");
        assertThat(run.get().messagesConsumed()).isEqualTo(3);
    }

    @Test
    void withAStateFileOffsetsContinueAcrossRestartsAndEveryRowCarriesItsPosition() throws Exception {
        port = freePort();
        String yaml = """
                pipeline:
                  name: webhook-positions
                  batch_size: 10
                  flush_interval_seconds: 1
                  state:
                    path: %s
                  source:
                    type: webhook
                    webhook:
                      addr: "127.0.0.1:%d"
                      ack: after_flush
                  handler:
                    type: handlers.InferredMemBatch
                    sql: SELECT kafka_topic, kafka_partition, kafka_offset, n FROM batch ORDER BY kafka_offset
                  sink:
                    type: console
                """.formatted(dir.resolve("webhook.duckdb"), port);
        PipelineConfig config = new PipelineConfigReader(ConfigEnvironment.from(Map.of())).read("p.yml", yaml).orThrow();
        ByteArrayOutputStream first = new ByteArrayOutputStream();
        Future<PipelineRunner.Outcome> run = start(config, 2, first);
        assertThat(client.send(request("/events").POST(HttpRequest.BodyPublishers.ofString("{\"n\":1}\n{\"n\":2}")).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
        run.get();
        ByteArrayOutputStream second = new ByteArrayOutputStream();
        run = start(config, 1, second);
        assertThat(client.send(request("/events").POST(HttpRequest.BodyPublishers.ofString("{\"n\":3}")).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
        run.get();
        assertThat(first.toString(StandardCharsets.UTF_8).lines().toList()).containsExactly(
                "{\"kafka_topic\":\"webhook\",\"kafka_partition\":0,\"kafka_offset\":0,\"n\":1}",
                "{\"kafka_topic\":\"webhook\",\"kafka_partition\":0,\"kafka_offset\":1,\"n\":2}");
        assertThat(second.toString(StandardCharsets.UTF_8).lines().toList()).containsExactly(
                "{\"kafka_topic\":\"webhook\",\"kafka_partition\":0,\"kafka_offset\":2,\"n\":3}");
    }

    @Test
    void aWebhookSourceWithEventTimeFeedsATumblingWindowThatClosesBucketsByTheEventsOwnTime() throws Exception {
        port = freePort();
        String yaml = """
                tables:
                  sql:
                    - name: kind_counts
                      sql: CREATE TABLE IF NOT EXISTS kind_counts (bucket TIMESTAMPTZ, kind VARCHAR, n BIGINT)
                      window:
                        time_column: bucket
                        size_seconds: 60
                        grace_seconds: 0
                        emit_sql: SELECT strftime(bucket AT TIME ZONE 'UTC', '%%H:%%M') AS minute, kind, sum(n) AS n FROM closed GROUP BY ALL ORDER BY ALL
                        sink:
                          type: console
                pipeline:
                  name: webhook-windows
                  batch_size: 1
                  flush_interval_seconds: 1
                  source:
                    type: webhook
                    webhook:
                      addr: "127.0.0.1:%d"
                      ack: on_receive
                      event_time: {path: at_ms, format: unix_millis}
                  handler:
                    type: handlers.InferredMemBatch
                    sql: >-
                      INSERT INTO kind_counts
                      SELECT time_bucket(INTERVAL '60 seconds', event_time), kind, count(*) FROM batch GROUP BY ALL
                  sink:
                    type: noop
                """.formatted(port);
        PipelineConfig config = new PipelineConfigReader(ConfigEnvironment.from(Map.of())).read("w.yml", yaml).orThrow();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Future<PipelineRunner.Outcome> run = start(config, 6, out);
        // 2026-12-01T10:00Z onwards, in milliseconds: three events in the first minute, two in the second, then one at 10:05,
        // whose time passes both buckets' ends (no grace) and so closes them, whatever the wall clock says.
        long base = java.time.Instant.parse("2026-12-01T10:00:00Z").toEpochMilli();
        long[] at = {base + 1_000, base + 59_000, base + 30_000, base + 61_000, base + 119_000, base + 300_000};
        String[] kinds = {"post", "like", "post", "post", "like", "post"};
        for (int i = 0; i < at.length; i++) {
            HttpResponse<String> response = client.send(request("/events").POST(HttpRequest.BodyPublishers.ofString(
                    "{\"kind\":\"" + kinds[i] + "\",\"at_ms\":" + at[i] + "}")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        }
        assertThat(run.get().messagesConsumed()).isEqualTo(6);
        assertThat(out.toString(StandardCharsets.UTF_8).lines().toList()).containsExactlyInAnyOrder(
                "{\"minute\":\"10:00\",\"kind\":\"like\",\"n\":1}",
                "{\"minute\":\"10:00\",\"kind\":\"post\",\"n\":2}",
                "{\"minute\":\"10:01\",\"kind\":\"like\",\"n\":1}",
                "{\"minute\":\"10:01\",\"kind\":\"post\",\"n\":1}");
    }

    @Test
    void aStateFileForDuckDbOneKeepsItsOffsetsInTheOneFormatAndRefusesAMaterializedViewInItsCommands() throws Exception {
        port = freePort();
        Path state = dir.resolve("portable.duckdb");
        String yaml = """
                %s
                pipeline:
                  name: webhook-portable
                  batch_size: 10
                  flush_interval_seconds: 1
                  state:
                    path: %s
                    storage_compatibility: v1.0.0
                  source:
                    type: webhook
                    webhook:
                      addr: "127.0.0.1:%d"
                      ack: after_flush
                  handler:
                    type: handlers.InferredMemBatch
                    sql: SELECT n FROM batch
                  sink:
                    type: console
                """;
        PipelineConfig config = new PipelineConfigReader(ConfigEnvironment.from(Map.of())).read("p.yml", yaml.formatted("", state, port)).orThrow();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Future<PipelineRunner.Outcome> run = start(config, 1, out);
        assertThat(client.send(request("/events").POST(HttpRequest.BodyPublishers.ofString("{\"n\":1}")).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
        assertThat(run.get().messagesConsumed()).isEqualTo(1);
        try (java.sql.Connection connection = java.sql.DriverManager.getConnection("jdbc:duckdb:" + state);
                java.sql.Statement statement = connection.createStatement();
                java.sql.ResultSet rows = statement.executeQuery(
                        "SELECT tags['storage_version'] FROM duckdb_databases() WHERE database_name = 'portable'")) {
            assertThat(rows.next()).isTrue();
            assertThat(rows.getString(1)).isEqualTo("v1.0.0+");
        }

        String commands = """
                commands:
                  - name: totals
                    sql: CREATE TABLE IF NOT EXISTS sales (n INTEGER); CREATE MATERIALIZED VIEW totals AS SELECT sum(n) AS n FROM sales
                """;
        PipelineConfig withView = new PipelineConfigReader(ConfigEnvironment.from(Map.of())).read("p.yml",
                yaml.formatted(commands, state, port)).orThrow();
        try (PipelineRunner runner = new PipelineRunner(withView, ConfigEnvironment.from(Map.of()), new PipelineRunner.Options(1, out))) {
            org.assertj.core.api.Assertions.assertThatThrownBy(runner::run)
                    .isInstanceOfSatisfying(dev.mallard.core.error.MallardException.class,
                            e -> assertThat(e.errorCode()).isEqualTo(dev.mallard.core.error.ErrorCode.USER_VIEW_STORAGE_VERSION));
        }
    }
}
