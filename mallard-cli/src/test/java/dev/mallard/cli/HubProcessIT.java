// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.testkit.Await;
import dev.mallard.testkit.EmbeddedKafka;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.Base64;
import java.util.Properties;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code mallard server --pipeline} in a child JVM, as a user runs it: SIGTERM drains, SIGKILL loses nothing and counts nothing twice. */
class HubProcessIT {
    private static EmbeddedKafka kafka;

    @TempDir
    Path dir;

    @BeforeAll
    static void startBroker() {
        kafka = EmbeddedKafka.start();
    }

    @AfterAll
    static void stopBroker() {
        kafka.close();
    }

    /** What the hub's database holds: the events table, the view's count, the stored offsets (read while no server holds it). */
    private record Counts(long events, long distinct, long view, long offsets) {}

    @Test
    void sigtermDrainsTheHostedPipelineCommittingWhatItHeldThenStopsTheServerWithExitZero() throws Exception {
        String topic = topic(2);
        publish(topic, 0, 20_000);
        Path log = dir.resolve("drain.log");
        Process server = startServer(pipeline(topic, 1_000), log);
        try {
            awaitLog(server, log, "batch processed");
            server.destroy();
            assertThat(server.waitFor(60, TimeUnit.SECONDS)).isTrue();
        } finally {
            server.destroyForcibly();
        }
        assertThat(server.exitValue()).as(Files.readString(log)).isZero();
        String text = Files.readString(log);
        // The pipeline drained before the listeners and the database closed.
        assertThat(text).contains("hub stopped drained=true");
        assertThat(text.indexOf("hosted pipeline ended name=events state=STOPPED")).isPositive().isLessThan(text.indexOf("hub stopped"));
        Counts after = read();
        assertThat(after.offsets()).isPositive();
        assertThat(after.events()).isEqualTo(after.offsets());
        assertThat(after.view()).isEqualTo(after.offsets());
        assertThat(after.distinct()).isEqualTo(after.offsets());
    }

    @Test
    void killedWithSigkillMidStreamTheRestartedHubsViewStillCountsEveryEventExactlyOnce() throws Exception {
        String topic = topic(2);
        long total = 24_000;
        Path config = pipeline(topic, 500);
        Random random = new Random();
        long published = 0;
        int killsWhileAdvancing = 0;
        long previous = 0;
        for (int kill = 0; kill < 3; kill++) {
            publish(topic, published, 6_000);
            published += 6_000;
            Path log = dir.resolve("kill-" + kill + ".log");
            Process server = startServer(config, log);
            try {
                awaitLog(server, log, "batch processed");
                // Somewhere in a batch: loading, handling, committing, syncing the view.
                Thread.sleep(random.nextInt(800));
                assertThat(server.isAlive()).as(Files.readString(log)).isTrue();
            } finally {
                server.destroyForcibly();
                assertThat(server.waitFor(30, TimeUnit.SECONDS)).isTrue();
            }
            Counts after = read();
            // At every crash the database holds the effect of exactly the offsets it records.
            assertThat(after.events()).as("after kill %d", kill).isEqualTo(after.offsets());
            assertThat(after.view()).as("after kill %d", kill).isEqualTo(after.offsets());
            assertThat(after.distinct()).as("after kill %d", kill).isEqualTo(after.offsets());
            if (after.offsets() > previous) {
                killsWhileAdvancing++;
            }
            previous = after.offsets();
        }
        assertThat(killsWhileAdvancing).as("kills after the view had moved").isPositive();
        publish(topic, published, total - published);
        Path log = dir.resolve("last.log");
        int httpPort = freePort();
        Process server = startServer(config, log, httpPort);
        try {
            HttpClient http = HttpClient.newHttpClient();
            Await.until("the restarted hub's view counts all " + total + " events", Duration.ofSeconds(120),
                    () -> server.isAlive() && query(http, httpPort, "SELECT coalesce(sum(events), 0) FROM city_totals") == total);
            assertThat(query(http, httpPort, "SELECT count(DISTINCT n) FROM events")).isEqualTo(total);
            assertThat(query(http, httpPort, "SELECT count(*) FROM events")).isEqualTo(total);
            server.destroy();
            assertThat(server.waitFor(60, TimeUnit.SECONDS)).isTrue();
        } finally {
            server.destroyForcibly();
        }
        assertThat(server.exitValue()).isZero();
        assertThat(read()).isEqualTo(new Counts(total, total, total, total));
    }

    @Test
    void runServeHostsThePipelineOnItsOwnStateFileWhereMallardRunKeepsItsOffsets() throws Exception {
        String topic = topic(1);
        publish(topic, 0, 1_000);
        Path config = pipeline(topic, 200);
        Path log = dir.resolve("serve.log");
        int httpPort = freePort();
        Process serve = new ProcessBuilder(MallardJar.command("run", config.toString(), "--serve", "--conf", "host=127.0.0.1",
                "--conf", "http.port=" + httpPort, "--conf", "flight.port=" + freePort(), "--conf", "users.0.username=ada",
                "--conf", "users.0.password=lovelace")).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            HttpClient http = HttpClient.newHttpClient();
            Await.until("the served view counts the 1000 events", () -> {
                assertThat(serve.isAlive()).as("mallard run --serve is alive").isTrue();
                return query(http, httpPort, "SELECT coalesce(sum(events), 0) FROM city_totals") == 1_000;
            });
            serve.destroy();
            assertThat(serve.waitFor(60, TimeUnit.SECONDS)).isTrue();
        } finally {
            serve.destroyForcibly();
        }
        assertThat(serve.exitValue()).as(Files.readString(log)).isZero();
        // The state file is the served database, its offsets where mallard run keeps them.
        try (Connection connection = DriverManager.getConnection("jdbc:duckdb:" + dir.resolve("events-state.duckdb"));
                ResultSet rows = connection.createStatement().executeQuery("SELECT (SELECT sum(next_offset) FROM sqlflow_offsets), (SELECT count(*) FROM events)")) {
            rows.next();
            assertThat(rows.getLong(1)).isEqualTo(1_000);
            assertThat(rows.getLong(2)).isEqualTo(1_000);
        }
    }

    private Path pipeline(String topic, int batchSize) throws IOException {
        Path config = dir.resolve("events.yml");
        Files.writeString(config, """
                commands:
                  - name: events
                    sql: |
                      CREATE TABLE IF NOT EXISTS events (city VARCHAR, n BIGINT);
                      CREATE MATERIALIZED VIEW IF NOT EXISTS city_totals AS
                        SELECT city, count(*) AS events, sum(n) AS total FROM events GROUP BY city
                pipeline:
                  name: events
                  batch_size: %d
                  flush_interval_seconds: 1
                  drain_deadline_seconds: 30
                  state:
                    path: %s
                  source:
                    type: kafka
                    kafka:
                      brokers: [%s]
                      group_id: g-%s
                      auto_offset_reset: earliest
                      topics: [%s]
                  handler:
                    type: handlers.InferredMemBatch
                    sql: INSERT INTO events SELECT properties.city, n FROM batch
                  sink:
                    type: noop
                """.formatted(batchSize, dir.resolve("events-state.duckdb"), kafka.bootstrapServers(), topic, topic));
        return config;
    }

    private Process startServer(Path pipeline, Path log) throws IOException {
        return startServer(pipeline, log, freePort());
    }

    private Process startServer(Path pipeline, Path log, int httpPort) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(MallardJar.command("server", "--conf", "warehouse=" + dir.resolve("wh"), "--conf", "database=hub.duckdb",
                "--conf", "host=127.0.0.1", "--conf", "http.port=" + httpPort, "--conf", "flight.port=" + freePort(),
                "--conf", "users.0.username=ada", "--conf", "users.0.password=lovelace", "--pipeline", pipeline.toString()))
                .redirectErrorStream(true).redirectOutput(log.toFile());
        // Batch lines at DEBUG tell the test that the pipeline is processing.
        builder.environment().put("MALLARD_LOG_LEVEL", "DEBUG");
        return builder.start();
    }

    private static void awaitLog(Process process, Path log, String line) throws Exception {
        Await.until("'" + line + "' in " + log, () -> !process.isAlive() || Files.exists(log) && Files.readString(log).contains(line));
    }

    private Counts read() throws Exception {
        Path database = dir.resolve("wh").resolve("hub.duckdb");
        try (Connection connection = DriverManager.getConnection("jdbc:duckdb:" + database);
                ResultSet rows = connection.createStatement().executeQuery("SELECT (SELECT count(*) FROM events), (SELECT count(DISTINCT n) FROM events),"
                        + " (SELECT coalesce(sum(events), 0) FROM city_totals), (SELECT coalesce(sum(next_offset), 0) FROM mallard_pipeline_events.sqlflow_offsets)")) {
            rows.next();
            return new Counts(rows.getLong(1), rows.getLong(2), rows.getLong(3), rows.getLong(4));
        } catch (java.sql.SQLException e) {
            if (String.valueOf(e.getMessage()).contains("does not exist")) {
                // Killed before the commands or the first offsets.
                return new Counts(0, 0, 0, 0);
            }
            throw e;
        }
    }

    private static long query(HttpClient http, int port, String sql) throws Exception {
        try {
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/query?q="
                    + URLEncoder.encode(sql, StandardCharsets.UTF_8)))
                    .header("Authorization", "Basic " + Base64.getEncoder().encodeToString("ada:lovelace".getBytes(StandardCharsets.UTF_8)))
                    .header("Accept", "application/jsonl").build(), HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                return -1;
            }
            String line = response.body().lines().findFirst().orElse("{}");
            return Long.parseLong(line.replaceAll("^\\{\"[^\"]*\":", "").replace("}", "").trim());
        } catch (IOException e) {
            // Not listening yet.
            return -1;
        }
    }

    private static String topic(int partitions) {
        String name = "hub-" + UUID.randomUUID();
        kafka.createTopic(name, partitions);
        return name;
    }

    private static void publish(String topic, long from, long count) {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties, new StringSerializer(), new StringSerializer())) {
            for (long i = from; i < from + count; i++) {
                producer.send(new ProducerRecord<>(topic, "{\"properties\":{\"city\":\"" + (i % 3 == 0 ? "New York" : i % 3 == 1 ? "Baltimore" : "Columbus")
                        + "\"},\"n\":" + i + "}"));
            }
            producer.flush();
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
