// SPDX-License-Identifier: Apache-2.0
package dev.mallard.hub;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.server.MallardServer;
import dev.mallard.server.config.ServerConfig;
import dev.mallard.server.config.ServerConfigReader;
import dev.mallard.testkit.Await;
import dev.mallard.testkit.EmbeddedKafka;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The hub in this JVM: a server hosting Kafka pipelines (embedded broker) on its database, read over Flight SQL and HTTP. */
class HubIT {
    static final String USER = "ada";
    static final String PASSWORD = "lovelace";
    static final String VIEW_EVENTS = "SELECT coalesce(sum(events), 0) FROM city_totals";

    private static EmbeddedKafka kafka;

    @TempDir
    Path dir;

    @BeforeAll
    static void startKafka() {
        kafka = EmbeddedKafka.start();
    }

    @AfterAll
    static void stopKafka() {
        kafka.close();
    }

    @Test
    void aHostedPipelinesViewReadOverFlightSqlAndHttpEqualsTheEventsPublishedAfterEveryRound() throws Exception {
        String topic = topic(2);
        Path pipeline = write("events.yml", viewPipeline("events", topic, "events", "city_totals", true));
        try (MallardServer server = start(List.of("pipelines.0=" + pipeline));
                Connection flight = client(server).flight()) {
            HubClient client = client(server);
            int published = 0;
            for (int round = 1; round <= 3; round++) {
                publish(topic, cityEvents(400 * round, published));
                published += 400 * round;
                int expected = published;
                Await.until("the view shows the " + expected + " events of round " + round,
                        () -> HubClient.number(flight, VIEW_EVENTS) == expected);
                assertThat(client.httpNumber(VIEW_EVENTS)).isEqualTo(expected);
                // Every event once: no duplicate and none missing, over both listeners.
                assertThat(HubClient.number(flight, "SELECT count(DISTINCT n) FROM events")).isEqualTo(expected);
                assertThat(client.httpNumber("SELECT count(*) FROM events")).isEqualTo(expected);
                assertThat(client.httpNumber("SELECT count(*) FROM (SELECT city, count(*) AS events, sum(n) AS total FROM events GROUP BY city"
                        + " EXCEPT ALL SELECT * FROM city_totals)")).isZero();
            }
            // The offsets are the server's too, in the pipeline's own schema.
            assertThat(client.httpNumber("SELECT sum(next_offset) FROM mallard_pipeline_events.sqlflow_offsets")).isEqualTo(published);
            String token = client.login();
            int all = published;
            // The runner counts a batch's messages just after its commit.
            Await.until("the pipeline counts every message", () -> HubClient.json(client.get("/v1/pipelines/events", token)).path("messages").asLong() == all);
            JsonNode status = HubClient.json(client.get("/v1/pipelines/events", token));
            assertThat(status.path("state").asText()).isEqualTo("RUNNING");
            assertThat(status.path("messages").asLong()).isEqualTo(published);
            assertThat(status.path("source").asText()).isEqualTo("kafka:" + topic);
            assertThat(status.path("lag").asLong()).isZero();
            assertThat(status.path("last_batch_at").asText()).endsWith("Z");
        }
    }

    @Test
    void thePipelinesApiListsStopsAndStartsAPipelineAndTheRestartedOneGoesOnFromItsOffsets() throws Exception {
        String topic = topic(1);
        Path pipeline = write("events.yml", viewPipeline("events", topic, "events", "city_totals", true));
        try (MallardServer server = start(List.of("pipelines.0=" + pipeline))) {
            HubClient client = client(server);
            String token = client.login();
            publish(topic, cityEvents(100, 0));
            Await.until("the first events in the view", () -> client.httpNumber(VIEW_EVENTS) == 100);
            JsonNode list = HubClient.json(client.get("/v1/pipelines", token));
            assertThat(list.path("can_control").asBoolean()).isTrue();
            assertThat(list.path("pipelines")).hasSize(1);
            JsonNode one = list.path("pipelines").get(0);
            assertThat(one.path("name").asText()).isEqualTo("events");
            assertThat(one.path("last_error").isNull()).isTrue();
            List<String> fields = new ArrayList<>();
            one.fieldNames().forEachRemaining(fields::add);
            assertThat(fields).containsExactly("name", "state", "source", "lag", "last_batch_at", "batches", "messages", "errors",
                    "messages_per_second", "last_error");

            HttpResponse<String> stop = client.post("/v1/pipelines/events/stop", token);
            assertThat(stop.statusCode()).isEqualTo(200);
            assertThat(HubClient.json(stop).path("state").asText()).isIn("STOPPING", "STOPPED");
            Await.until("the pipeline stopped", () -> HubClient.json(client.get("/v1/pipelines/events", token)).path("state").asText().equals("STOPPED"));
            publish(topic, cityEvents(50, 100));
            HttpResponse<String> start = client.post("/v1/pipelines/events/start", token);
            assertThat(start.statusCode()).isEqualTo(200);
            Await.until("the restarted pipeline reads the rest", () -> client.httpNumber(VIEW_EVENTS) == 150);
            assertThat(client.httpNumber("SELECT count(DISTINCT n) FROM events")).isEqualTo(150);
            Await.until("the pipeline counts 150 messages across its two runs",
                    () -> HubClient.json(client.get("/v1/pipelines/events", token)).path("messages").asLong() == 150);

            // A start right after a stop waits for the stopping run to commit, then starts again.
            assertThat(client.post("/v1/pipelines/events/stop", token).statusCode()).isEqualTo(200);
            assertThat(client.post("/v1/pipelines/events/start", token).statusCode()).isEqualTo(200);
            publish(topic, cityEvents(10, 150));
            Await.until("the pipeline started again at once reads on", () -> client.httpNumber(VIEW_EVENTS) == 160);
            assertThat(HubClient.json(client.get("/v1/pipelines/events", token)).path("state").asText()).isIn("STARTING", "RUNNING");

            HttpResponse<String> missing = client.get("/v1/pipelines/nope", token);
            assertThat(missing.statusCode()).isEqualTo(404);
            assertThat(HubClient.json(missing).path("error").path("code").asText()).isEqualTo("user.pipeline.not_found");
            assertThat(client.post("/v1/pipelines/nope/stop", token).statusCode()).isEqualTo(404);
            assertThat(client.getAnonymous("/v1/pipelines").statusCode()).isEqualTo(401);
        }
    }

    @Test
    void inReadOnlyModeOnlyAPipelineAdminMayStopOrStartAPipeline() throws Exception {
        String topic = topic(1);
        Path pipeline = write("events.yml", viewPipeline("events", topic, "events", "city_totals", false));
        try (MallardServer server = start(List.of("pipelines.0=" + pipeline, "access_mode=READ_ONLY", "users.1.username=grace",
                "users.1.password=hopper", "pipeline_admins.0=grace"))) {
            HubClient reader = client(server);
            HubClient admin = new HubClient(server.httpPort(), server.flightPort(), "grace", "hopper");
            String readerToken = reader.login();
            assertThat(HubClient.json(reader.get("/v1/pipelines", readerToken)).path("can_control").asBoolean()).isFalse();
            HttpResponse<String> refused = reader.post("/v1/pipelines/events/stop", readerToken);
            assertThat(refused.statusCode()).isEqualTo(403);
            assertThat(HubClient.json(refused).path("error").path("code").asText()).isEqualTo("user.access.denied");
            String adminToken = admin.login();
            assertThat(HubClient.json(admin.get("/v1/pipelines", adminToken)).path("can_control").asBoolean()).isTrue();
            assertThat(admin.post("/v1/pipelines/events/stop", adminToken).statusCode()).isEqualTo(200);
            Await.until("the admin's stop took", () -> HubClient.json(admin.get("/v1/pipelines/events", adminToken)).path("state").asText().equals("STOPPED"));
        }
    }

    @Test
    void aFailingPipelineShowsFailedWithItsErrorAndDegradesHealthWhileTheServerAndTheOtherPipelineGoOn() throws Exception {
        String good = topic(1);
        String bad = topic(1);
        Path goodPipeline = write("good.yml", viewPipeline("good", good, "events", "city_totals", false));
        Path badPipeline = write("bad.yml", """
                pipeline:
                  name: bad
                  batch_size: 10
                  flush_interval_seconds: 1
                """ + source(bad, "g-" + bad) + """
                  handler:
                    type: handlers.InferredMemBatch
                    sql: INSERT INTO no_such_table SELECT * FROM batch
                  sink:
                    type: noop
                """);
        try (MallardServer server = start(List.of("pipelines.0=" + goodPipeline, "pipelines.1=" + badPipeline))) {
            HubClient client = client(server);
            String token = client.login();
            assertThat(HubClient.json(client.getAnonymous("/health")).path("status").asText()).isEqualTo("UP");
            publish(bad, cityEvents(5, 0));
            Await.until("the bad pipeline failed", () -> HubClient.json(client.get("/v1/pipelines/bad", token)).path("state").asText().equals("FAILED"));
            JsonNode failed = HubClient.json(client.get("/v1/pipelines/bad", token));
            assertThat(failed.path("last_error").path("code").asText()).isEqualTo("user.handler.sql_failed");
            assertThat(failed.path("last_error").path("message").asText()).contains("no_such_table");
            HttpResponse<String> health = client.getAnonymous("/health");
            assertThat(health.statusCode()).isEqualTo(200);
            JsonNode body = HubClient.json(health);
            assertThat(body.path("status").asText()).isEqualTo("DEGRADED");
            assertThat(body.path("database").path("status").asText()).isEqualTo("UP");
            assertThat(body.has("uptime_seconds")).isTrue();
            assertThat(body.path("pipelines").path("bad").path("state").asText()).isEqualTo("FAILED");
            assertThat(body.path("pipelines").path("good").path("state").asText()).isEqualTo("RUNNING");
            publish(good, cityEvents(30, 0));
            Await.until("the good pipeline goes on", () -> client.httpNumber(VIEW_EVENTS) == 30);
            String metrics = client.getAnonymous("/metrics").body();
            assertThat(metrics).contains("pipeline=\"good\"").contains("pipeline=\"bad\"").contains("mallard_server_sessions");
        }
    }

    private MallardServer start(List<String> more) {
        List<String> overrides = new ArrayList<>(List.of("warehouse=" + dir.resolve("wh"), "database=hub.duckdb", "host=127.0.0.1",
                "http.port=0", "flight.port=0", "users.0.username=" + USER, "users.0.password=" + PASSWORD));
        overrides.addAll(more);
        ServerConfig config = new ServerConfigReader(ConfigEnvironment.from(java.util.Map.of())).read(Optional.empty(), overrides);
        return MallardServer.start(config, Hub.hosting());
    }

    static HubClient client(MallardServer server) {
        return new HubClient(server.httpPort(), server.flightPort(), USER, PASSWORD);
    }

    private Path write(String name, String text) throws Exception {
        Path file = dir.resolve(name);
        Files.writeString(file, text);
        return file;
    }

    /** A pipeline loading {@code table} and keeping {@code view}, a per-city count and sum, with or without a state path. */
    static String viewPipeline(String name, String topic, String table, String view, boolean state) {
        return """
                commands:
                  - name: %2$s
                    sql: |
                      CREATE TABLE IF NOT EXISTS %2$s (city VARCHAR, n BIGINT);
                      CREATE MATERIALIZED VIEW IF NOT EXISTS %3$s AS
                        SELECT city, count(*) AS events, sum(n) AS total FROM %2$s GROUP BY city
                pipeline:
                  name: %1$s
                  batch_size: 200
                  flush_interval_seconds: 1
                """.formatted(name, table, view) + (state ? """
                  state:
                    path: %s.duckdb
                """.formatted(name) : "") + source(topic, "g-" + topic) + """
                  handler:
                    type: handlers.InferredMemBatch
                    sql: INSERT INTO %s SELECT properties.city, n FROM batch
                  sink:
                    type: noop
                """.formatted(table);
    }

    static String source(String topic, String group) {
        return """
                  source:
                    type: kafka
                    kafka:
                      brokers: [%s]
                      group_id: %s
                      auto_offset_reset: earliest
                      topics: [%s]
                """.formatted(kafka.bootstrapServers(), group, topic);
    }

    static String topic(int partitions) {
        String name = "events-" + UUID.randomUUID();
        kafka.createTopic(name, partitions);
        return name;
    }

    static void publish(String topic, List<String> values) {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties, new StringSerializer(), new StringSerializer())) {
            for (String value : values) {
                producer.send(new ProducerRecord<>(topic, value));
            }
            producer.flush();
        }
    }

    static List<String> cityEvents(int count, int offset) {
        List<String> events = new ArrayList<>();
        for (int i = offset; i < offset + count; i++) {
            events.add("{\"event\":\"search\",\"properties\":{\"city\":\"" + (i % 3 == 0 ? "New York" : i % 3 == 1 ? "Baltimore" : "Columbus")
                    + "\"},\"n\":" + i + "}");
        }
        return events;
    }
}
