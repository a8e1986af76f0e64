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
import dev.mallard.testkit.EventGenerator;
import dev.mallard.testkit.Progress;
import dev.mallard.testkit.Publisher;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** docs/tutorial.md step by step: its files, its events, and every output it shows. */
class TutorialIT {
    private static final Path DOC = Path.of("..", "docs", "tutorial.md");

    @TempDir
    Path dir;

    @Test
    void theTutorialsStepsGiveTheOutputsItShows() throws Exception {
        String doc = Files.readString(DOC);
        Files.writeString(dir.resolve("events.yml"), blockAfter(doc, "`events.yml`:"));
        Files.writeString(dir.resolve("server.yml"), blockAfter(doc, "`server.yml`, beside it:"));
        try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
            // Step 1: ./mallard dev publish --topic events --messages 600
            try (Publisher publisher = Publisher.connect(kafka.bootstrapServers(), Progress.silent())) {
                publisher.ensureTopic("events", Optional.empty());
                assertThat(publisher.publish("events", EventGenerator.fixture(EventGenerator.USER_ACTION, 0), 600)).isEqualTo(600);
            }
            ConfigEnvironment environment = ConfigEnvironment.from(Map.of("SQLFLOW_KAFKA_BROKERS", kafka.bootstrapServers()));
            // Step 3 on free ports: ./mallard server --config server.yml
            ServerConfig config = new ServerConfigReader(environment, Map.of()).read(Optional.of(dir.resolve("server.yml")),
                    List.of("host=127.0.0.1", "http.port=0", "flight.port=0"));
            try (MallardServer server = MallardServer.start(config, context -> Hub.start(context, environment))) {
                HubClient client = HubIT.client(server);
                Await.until("the view counts the 600 events", () -> {
                    assertThat(HubClient.json(client.get("/v1/pipelines/events", client.login())).path("state").asText()).isNotEqualTo("FAILED");
                    try {
                        // The runner counts a batch's messages just after its commit: both, so the pipeline's output below is settled.
                        return client.httpNumber("SELECT coalesce(sum(events), 0) FROM events_per_minute") == 600
                                && HubClient.json(client.get("/v1/pipelines/events", client.login())).path("messages").asLong() == 600;
                    } catch (AssertionError e) {
                        // The view is not created yet.
                        return false;
                    }
                });
                String token = client.login();
                HttpClient http = HttpClient.newHttpClient();
                // Step 4: the curl of /v1/query
                HttpResponse<String> perMinute = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/v1/query"))
                        .header("Authorization", "Bearer " + token).header("Accept", "application/jsonl")
                        .POST(HttpRequest.BodyPublishers.ofString("SELECT minute, events FROM events_per_minute ORDER BY minute")).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(perMinute.body()).isEqualTo(outputOf(doc, "localhost:8081/v1/query"));
                // The curl of /v1/pipelines/events | jq '{name, state, source, messages, errors}'
                JsonNode pipeline = HubClient.json(client.get("/v1/pipelines/events", token));
                String shown = "{\n  \"name\": \"" + pipeline.path("name").asText() + "\",\n  \"state\": \"" + pipeline.path("state").asText()
                        + "\",\n  \"source\": \"" + pipeline.path("source").asText() + "\",\n  \"messages\": " + pipeline.path("messages").asLong()
                        + ",\n  \"errors\": " + pipeline.path("errors").asLong() + "\n}\n";
                assertThat(shown).isEqualTo(outputOf(doc, "localhost:8081/v1/pipelines/events |"));
                // Step 5: the JDBC snippet
                try (Connection connection = client.flight();
                        ResultSet rows = connection.createStatement().executeQuery("SELECT count(*) AS minutes, sum(events) AS events FROM events_per_minute")) {
                    rows.next();
                    String printed = rows.getLong("minutes") + " minutes, " + rows.getLong("events") + " events\n";
                    assertThat(printed).isEqualTo(outputOf(doc, "System.out.println"));
                }
            }
        }
    }

    /** The text of the first fenced block that opens after {@code marker}, outside a block. */
    static String blockAfter(String doc, String marker) {
        return block(doc, doc.indexOf("\n```", found(doc, marker)));
    }

    /** The text of the block that follows the block {@code marker} is in (a command's output). */
    static String outputOf(String doc, String marker) {
        int closing = doc.indexOf("\n```", found(doc, marker));
        return block(doc, doc.indexOf("\n```", closing + 4));
    }

    private static int found(String doc, String marker) {
        int at = doc.indexOf(marker);
        assertThat(at).as("docs/tutorial.md has " + marker).isNotNegative();
        return at;
    }

    private static String block(String doc, int fence) {
        int start = doc.indexOf('\n', fence + 1) + 1;
        return doc.substring(start, doc.indexOf("```", start));
    }
}
