// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.ingest;

import static dev.mallard.server.ingest.IngestFixtures.batch;
import static dev.mallard.server.ingest.IngestFixtures.login;
import static dev.mallard.server.ingest.IngestFixtures.post;
import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.server.MallardServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A queue with a table: a materialized view over that table moves with every batch acknowledged. */
class IngestViewsIT {
    @TempDir
    Path root;

    @Test
    void aMaterializedViewOverAQueuesTableUpdatesAsBatchesLand() throws Exception {
        try (MallardServer server = MallardServer.start(IngestFixtures.config(root, IngestFixtures.queues(
                IngestionConfig.Queue.named("events", "lake/events").withTable("events_rows"))))) {
            String token = login(server.httpPort());
            assertThat(post(server.httpPort(), "?ingestion_queue=events", Optional.of(token), Ingestion.ARROW_STREAM, batch("p1", 0, 10))
                    .statusCode()).isEqualTo(200);
            HttpResponse<String> created = query(server.httpPort(), token,
                    "CREATE MATERIALIZED VIEW per_producer AS SELECT producer, count(*) AS n FROM events_rows GROUP BY producer");
            assertThat(created.statusCode()).as(created.body()).isEqualTo(200);

            assertThat(post(server.httpPort(), "?ingestion_queue=events", Optional.of(token), Ingestion.ARROW_STREAM, batch("p2", 10, 7))
                    .statusCode()).isEqualTo(200);
            assertThat(post(server.httpPort(), "?ingestion_queue=events", Optional.of(token), Ingestion.ARROW_STREAM, batch("p1", 17, 5))
                    .statusCode()).isEqualTo(200);

            Map<String, Long> view = new LinkedHashMap<>();
            try (Connection connection = server.engineSession(); Statement statement = connection.createStatement();
                    ResultSet rs = statement.executeQuery("SELECT producer, n FROM per_producer ORDER BY producer")) {
                while (rs.next()) {
                    view.put(rs.getString(1), rs.getLong(2));
                }
            }
            assertThat(view).containsExactly(Map.entry("p1", 15L), Map.entry("p2", 7L));
        }
    }

    private static HttpResponse<String> query(int port, String token, String sql) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/query"))
                .header("Authorization", "Bearer " + token).POST(HttpRequest.BodyPublishers.ofString(
                        IngestFixtures.JSON.writeValueAsString(Map.of("query", sql)))).build(), HttpResponse.BodyHandlers.ofString());
    }
}
