// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.ingest;

import static dev.mallard.server.ingest.IngestFixtures.batch;
import static dev.mallard.server.ingest.IngestFixtures.login;
import static dev.mallard.server.ingest.IngestFixtures.post;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mallard.server.MallardServer;
import java.io.ByteArrayOutputStream;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** POST /v1/ingest over real HTTP against a real server: every status, the files it writes, the queue's view. */
class IngestHttpIT {
    private static final String ARROW = Ingestion.ARROW_STREAM;

    @TempDir
    Path root;

    private MallardServer server;
    private String token;

    @BeforeEach
    void start() throws Exception {
        IngestionConfig.Queue events = new IngestionConfig.Queue("events", "lake/events", Optional.empty(), List.of(), List.of(), "parquet",
                IngestionConfig.DEFAULT_TARGET_FILE_SIZE, Duration.ZERO, Map.of(), Optional.of(new IngestionConfig.Watermark("events_watermarks", "ts",
                List.of("producer"))));
        IngestionConfig.Queue byProducer = new IngestionConfig.Queue("by_producer", "lake/by_producer", Optional.of(
                "SELECT id, upper(producer) AS producer, ts, getvariable('origin') AS origin FROM __this"), List.of("producer"), List.of("id DESC"),
                "parquet", IngestionConfig.DEFAULT_TARGET_FILE_SIZE, Duration.ZERO, Map.of("origin", "edge-7"), Optional.empty());
        server = MallardServer.start(IngestFixtures.config(root, IngestFixtures.queues(events, byProducer)));
        token = login(server.httpPort());
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void anArrowStreamIsAcknowledgedOnceItsParquetFileIsInTheQueuesDirectoryAndView() throws Exception {
        HttpResponse<String> response = post(server.httpPort(), "?ingestion_queue=events", Optional.of(token), ARROW, batch("p1", 0, 100));

        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        assertThat(response.body()).isEmpty();
        Path directory = root.resolve("warehouse/lake/events");
        try (Stream<Path> files = Files.list(directory)) {
            assertThat(files.map(path -> path.getFileName().toString())).singleElement().asString().endsWith(".parquet");
        }
        assertThat(count("SELECT count(*) FROM read_parquet('" + directory + "/*.parquet')")).isEqualTo(100);
        assertThat(count("SELECT count(*) FROM events")).isEqualTo(100);
    }

    @Test
    void aGzippedBodyIsAccepted() throws Exception {
        ByteArrayOutputStream zipped = new ByteArrayOutputStream();
        try (GZIPOutputStream gzip = new GZIPOutputStream(zipped)) {
            gzip.write(batch("p1", 0, 10));
        }
        HttpResponse<String> response = post(server.httpPort(), "?ingestion_queue=events", Optional.of(token), ARROW, zipped.toByteArray(),
                "Content-Encoding", "gzip");

        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        assertThat(count("SELECT count(*) FROM events")).isEqualTo(10);
    }

    @Test
    void aRequestWithoutATokenIsAnswered401() throws Exception {
        HttpResponse<String> response = post(server.httpPort(), "?ingestion_queue=events", Optional.empty(), ARROW, batch("p1", 0, 1));

        assertThat(response.statusCode()).isEqualTo(401);
        assertThat(code(response)).isEqualTo("user.auth.failed");
    }

    @Test
    void aBodyThatIsNotAnArrowStreamByContentTypeIsAnswered415() throws Exception {
        HttpResponse<String> response = post(server.httpPort(), "?ingestion_queue=events", Optional.of(token), "application/json", "{}".getBytes());

        assertThat(response.statusCode()).isEqualTo(415);
        assertThat(code(response)).isEqualTo("user.ingest.content_type");
    }

    @Test
    void anUndeclaredQueueIsAnswered404() throws Exception {
        HttpResponse<String> response = post(server.httpPort(), "?ingestion_queue=nowhere", Optional.of(token), ARROW, batch("p1", 0, 1));

        assertThat(response.statusCode()).isEqualTo(404);
        assertThat(code(response)).isEqualTo("user.ingest.queue_not_found");
    }

    @Test
    void aQueueNameThatClimbsOutOfTheWarehouseIsAnswered400() throws Exception {
        for (String name : List.of("..%2Fetc", "%2Fetc%2Fpasswd", "events%2F..%2F..%2Fx")) {
            HttpResponse<String> response = post(server.httpPort(), "?ingestion_queue=" + name, Optional.of(token), ARROW, batch("p1", 0, 1));

            assertThat(response.statusCode()).as(name).isEqualTo(400);
            assertThat(code(response)).isEqualTo("user.ingest.path_invalid");
        }
    }

    @Test
    void aBodyThatIsNotArrowIsAnswered400AndWritesNothing() throws Exception {
        HttpResponse<String> response = post(server.httpPort(), "?ingestion_queue=events", Optional.of(token), ARROW, "not arrow at all".getBytes());

        assertThat(response.statusCode()).as(response.body()).isEqualTo(400);
        assertThat(code(response)).isEqualTo("user.ingest.batch_invalid");
        try (Stream<Path> files = Files.list(root.resolve("warehouse/lake/events"))) {
            assertThat(files).isEmpty();
        }
    }

    @Test
    void theSameProducerBatchSentThreeTimesLandsOnce() throws Exception {
        byte[] body = batch("p1", 0, 50);
        for (int i = 0; i < 3; i++) {
            HttpResponse<String> response = post(server.httpPort(), "?ingestion_queue=events", Optional.of(token), ARROW, body,
                    "x-dd-producer-id", "p1", "x-dd-producer-batch-id", "7");
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        }

        assertThat(count("SELECT count(*) FROM events")).isEqualTo(50);
        assertThat(count("SELECT count(*) FROM events_watermarks WHERE producer_id = 'p1' AND batch_id = 7")).isEqualTo(1);
    }

    @Test
    void aBatchReSentAfterARestartIsAcknowledgedAndNotWrittenAgain() throws Exception {
        byte[] body = batch("p1", 0, 25);
        assertThat(post(server.httpPort(), "?ingestion_queue=events", Optional.of(token), ARROW, body, "x-dd-producer-id", "p1",
                "x-dd-producer-batch-id", "1").statusCode()).isEqualTo(200);
        server.close();
        server = MallardServer.start(IngestFixtures.config(root, IngestFixtures.queues(IngestionConfig.Queue.named("events", "lake/events"))));
        token = login(server.httpPort());

        for (int i = 0; i < 2; i++) {
            HttpResponse<String> again = post(server.httpPort(), "?ingestion_queue=events", Optional.of(token), ARROW, body, "x-dd-producer-id", "p1",
                    "x-dd-producer-batch-id", "1");
            assertThat(again.statusCode()).isEqualTo(200);
            assertThat(again.headers().firstValue("x-dd-duplicate")).contains("true");
        }

        assertThat(count("SELECT count(*) FROM events")).isEqualTo(25);
    }

    @Test
    void aWatermarkRowPerBatchAndGroupRecordsItsLeastAndGreatestTimestamp() throws Exception {
        post(server.httpPort(), "?ingestion_queue=events", Optional.of(token), ARROW, batch("p1", 10, 5), "x-dd-producer-id", "p1",
                "x-dd-producer-batch-id", "1");

        try (Connection connection = server.engineSession(); Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery("SELECT producer, min_timestamp, max_timestamp, row_count FROM events_watermarks")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).isEqualTo("p1");
            assertThat(rs.getString(2)).isEqualTo("1970-01-01 00:00:10");
            assertThat(rs.getString(3)).isEqualTo("1970-01-01 00:00:14");
            assertThat(rs.getLong(4)).isEqualTo(5);
            assertThat(rs.next()).isFalse();
        }
    }

    @Test
    void aQueuesTransformationPartitionSortOrderAndVariablesShapeItsFiles() throws Exception {
        HttpResponse<String> response = post(server.httpPort(), "?ingestion_queue=by_producer", Optional.of(token), ARROW, batch("ab", 0, 20));

        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        Path partition = root.resolve("warehouse/lake/by_producer/producer=AB");
        assertThat(partition).isDirectory();
        assertThat(count("SELECT count(*) FROM by_producer WHERE origin = 'edge-7' AND producer = 'AB'")).isEqualTo(20);
        assertThat(count("SELECT first(id) FROM read_parquet('" + partition + "/*.parquet')")).isEqualTo(19);
    }

    @Test
    void theRequestsPartitionHeaderLaysOutTheBatch() throws Exception {
        HttpResponse<String> response = post(server.httpPort(), "?ingestion_queue=events", Optional.of(token), ARROW, batch("q9", 0, 3),
                "x-dd-partition", "producer");

        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        assertThat(root.resolve("warehouse/lake/events/producer=q9")).isDirectory();
        assertThat(count("SELECT count(*) FROM events WHERE producer = 'q9'")).isEqualTo(3);
    }

    @Test
    void theQueuesRouteListsWhatEachQueueWrote() throws Exception {
        post(server.httpPort(), "?ingestion_queue=events", Optional.of(token), ARROW, batch("p1", 0, 30), "x-dd-producer-id", "p1",
                "x-dd-producer-batch-id", "1");

        HttpResponse<String> response = IngestFixtures.get(server.httpPort(), "/v1/ingestion/queues", token);

        assertThat(response.statusCode()).isEqualTo(200);
        JsonNode queues = IngestFixtures.JSON.readTree(response.body()).path("queues");
        assertThat(queues).hasSize(2);
        JsonNode events = queues.get(1);
        assertThat(events.path("name").asText()).isEqualTo("events");
        assertThat(events.path("path").asText()).isEqualTo("lake/events");
        assertThat(events.path("batches").asLong()).isEqualTo(1);
        assertThat(events.path("rows").asLong()).isEqualTo(30);
        assertThat(events.path("bytes").asLong()).isPositive();
        assertThat(events.path("pending_bytes").asLong()).isZero();
        assertThat(events.path("rows_per_second").isNumber()).isTrue();
        assertThat(java.time.Instant.parse(events.path("last_batch_at").asText())).isNotNull();
        assertThat(events.path("watermark").path("min").asText()).isEqualTo("1970-01-01 00:00:00");
        assertThat(events.path("watermark").path("max").asText()).isEqualTo("1970-01-01 00:00:29");
        assertThat(queues.get(0).path("last_batch_at").isNull()).isTrue();
        assertThat(queues.get(0).path("watermark").isNull()).isTrue();
    }

    @Test
    void metricsCarryTheQueuesSeries() throws Exception {
        post(server.httpPort(), "?ingestion_queue=events", Optional.of(token), ARROW, batch("p1", 0, 12));

        HttpResponse<String> metrics = IngestFixtures.get(server.httpPort(), "/metrics", token);

        assertThat(metrics.statusCode()).isEqualTo(200);
        assertThat(metrics.body()).contains("mallard_ingest_rows_total{queue=\"events\"} 12.0", "mallard_ingest_batches_total{queue=\"events\"} 1.0",
                "mallard_ingest_pending_bytes{queue=\"events\"}", "mallard_ingest_ack_seconds");
    }

    private long count(String sql) throws Exception {
        try (Connection connection = server.engineSession(); Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static String code(HttpResponse<String> response) throws Exception {
        return IngestFixtures.JSON.readTree(response.body()).path("error").path("code").asText();
    }
}
