// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.ingest;

import static dev.mallard.server.ingest.IngestFixtures.batch;
import static dev.mallard.server.ingest.IngestFixtures.login;
import static dev.mallard.server.ingest.IngestFixtures.post;
import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.server.MallardServer;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.grpc.CredentialCallOption;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.flight.sql.FlightSqlClient.ExecuteIngestOptions;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Producers pushing faster than the queue writes: past max_pending_write the server answers 429 with Retry-After
 * (RESOURCE_EXHAUSTED over Flight); producers that retry the same batch id get every batch in exactly once.
 */
class IngestBackpressureIT {
    private static final int PRODUCERS = 16;
    private static final int BATCHES = 3;
    private static final int ROWS = 2_000;

    @TempDir
    Path root;

    private MallardServer server;

    @BeforeEach
    void start() {
        // A flush interval makes the writer slower than the producers; the bound is about two batches.
        IngestionConfig.Queue events = new IngestionConfig.Queue("events", "lake/events", Optional.empty(), List.of(), List.of(), "parquet",
                IngestionConfig.DEFAULT_TARGET_FILE_SIZE, Duration.ofMillis(20), Map.of(), Optional.empty());
        long oneBatch = batch("p00", 0, ROWS).length;
        server = MallardServer.start(IngestFixtures.config(root, new IngestionConfig(List.of(events), Optional.empty(), Optional.empty(), 2 * oneBatch)));
    }

    @AfterEach
    void stop() {
        server.close();
    }

    @Test
    void sixteenProducersSee429sAndEveryAcknowledgedBatchLandsExactlyOnce() throws Exception {
        String token = login(server.httpPort());
        AtomicInteger refused = new AtomicInteger();
        AtomicInteger withRetryAfter = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(PRODUCERS);
        try {
            List<Future<?>> producers = new ArrayList<>();
            for (int p = 0; p < PRODUCERS; p++) {
                String producer = String.format("p%02d", p);
                int index = p;
                producers.add(pool.submit(() -> {
                    for (int b = 0; b < BATCHES; b++) {
                        byte[] body = batch(producer, (long) (index * BATCHES + b) * ROWS, ROWS);
                        while (true) {
                            HttpResponse<String> response = post(server.httpPort(), "?ingestion_queue=events", Optional.of(token), Ingestion.ARROW_STREAM,
                                    body, "x-dd-producer-id", producer, "x-dd-producer-batch-id", String.valueOf(b));
                            if (response.statusCode() == 200) {
                                break;
                            }
                            assertThat(response.statusCode()).as(response.body()).isEqualTo(429);
                            refused.incrementAndGet();
                            if (response.headers().firstValue("Retry-After").isPresent()) {
                                withRetryAfter.incrementAndGet();
                            }
                            Thread.sleep(20);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> producer : producers) {
                producer.get();
            }
        } finally {
            pool.shutdownNow();
        }

        assertThat(refused.get()).isPositive();
        assertThat(withRetryAfter.get()).isEqualTo(refused.get());
        try (Connection connection = server.engineSession(); Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery("SELECT count(*), count(DISTINCT id), min(id), max(id) FROM events")) {
            rs.next();
            long expected = (long) PRODUCERS * BATCHES * ROWS;
            assertThat(rs.getLong(1)).isEqualTo(expected);
            assertThat(rs.getLong(2)).isEqualTo(expected);
            assertThat(rs.getLong(3)).isZero();
            assertThat(rs.getLong(4)).isEqualTo(expected - 1);
        }
    }

    @Test
    void flightPutsPastTheBoundAreResourceExhaustedWithRetryAfter() throws Exception {
        AtomicInteger exhausted = new AtomicInteger();
        AtomicLong acknowledged = new AtomicLong();
        try (BufferAllocator allocator = new RootAllocator();
                FlightClient flight = FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", server.flightPort())).build()) {
            CredentialCallOption bearer = flight.authenticateBasicToken(IngestFixtures.USER, IngestFixtures.PASSWORD).orElseThrow();
            // One client for all: closing a FlightSqlClient closes the FlightClient under it.
            FlightSqlClient sql = new FlightSqlClient(flight);
            ExecutorService pool = Executors.newFixedThreadPool(8);
            try {
                List<Future<?>> puts = new ArrayList<>();
                for (int p = 0; p < 8; p++) {
                    int index = p;
                    puts.add(pool.submit(() -> {
                        try (VectorSchemaRoot batch = VectorSchemaRoot.create(IngestFixtures.SCHEMA, allocator)) {
                            IngestFixtures.fill(batch, "f" + index, index * 1_000_000L, ROWS);
                            for (int b = 0; b < 4; b++) {
                                ExecuteIngestOptions options = new ExecuteIngestOptions("", TableDefinitionOptions.getDefaultInstance(), null, null,
                                        Map.of("ingestion_queue", "events", "x-dd-producer-id", "f" + index, "x-dd-producer-batch-id", String.valueOf(b)));
                                try {
                                    acknowledged.addAndGet(sql.executeIngest(batch, options, bearer));
                                } catch (FlightRuntimeException e) {
                                    assertThat(e.status().code()).as(e.getMessage()).isEqualTo(FlightStatusCode.RESOURCE_EXHAUSTED);
                                    assertThat(e.status().metadata().get("retry-after")).isEqualTo(String.valueOf(Ingestion.RETRY_AFTER_SECONDS));
                                    exhausted.incrementAndGet();
                                }
                            }
                        }
                        return null;
                    }));
                }
                for (Future<?> put : puts) {
                    put.get();
                }
            } finally {
                pool.shutdownNow();
            }
        }
        assertThat(exhausted.get()).isPositive();
        try (Connection connection = server.engineSession(); Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery("SELECT count(*) FROM events")) {
            rs.next();
            assertThat(rs.getLong(1)).isEqualTo(acknowledged.get());
        }
    }

    @Test
    void anHttpBatchLargerThanMaxPendingWriteIsRefused413ForGoodPlainOrGzipped() throws Exception {
        String token = login(server.httpPort());
        byte[] body = batch("big", 0, 3 * ROWS);
        java.io.ByteArrayOutputStream zipped = new java.io.ByteArrayOutputStream();
        try (java.util.zip.GZIPOutputStream gzip = new java.util.zip.GZIPOutputStream(zipped)) {
            gzip.write(body);
        }
        List<HttpResponse<String>> answers = List.of(
                post(server.httpPort(), "?ingestion_queue=events", Optional.of(token), Ingestion.ARROW_STREAM, body),
                post(server.httpPort(), "?ingestion_queue=events", Optional.of(token), Ingestion.ARROW_STREAM, zipped.toByteArray(),
                        "Content-Encoding", "gzip"));
        for (HttpResponse<String> answer : answers) {
            assertThat(answer.statusCode()).as(answer.body()).isEqualTo(413);
            assertThat(answer.headers().firstValue("Retry-After")).isEmpty();
            assertThat(IngestFixtures.JSON.readTree(answer.body()).path("error").path("code").asText()).isEqualTo("user.ingest.batch_too_large");
            assertThat(answer.body()).contains("max_pending_write");
        }
        // A batch that fits is taken at once by the idle server.
        assertThat(post(server.httpPort(), "?ingestion_queue=events", Optional.of(token), Ingestion.ARROW_STREAM, batch("small", 0, ROWS))
                .statusCode()).isEqualTo(200);
    }

    @Test
    void aFlightBatchLargerThanMaxPendingWriteIsInvalidArgumentForGood() throws Exception {
        try (BufferAllocator allocator = new RootAllocator();
                FlightClient flight = FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", server.flightPort())).build();
                VectorSchemaRoot big = VectorSchemaRoot.create(IngestFixtures.SCHEMA, allocator)) {
            CredentialCallOption bearer = flight.authenticateBasicToken(IngestFixtures.USER, IngestFixtures.PASSWORD).orElseThrow();
            FlightSqlClient sql = new FlightSqlClient(flight);
            IngestFixtures.fill(big, "big", 0, 3 * ROWS);
            ExecuteIngestOptions options = new ExecuteIngestOptions("", TableDefinitionOptions.getDefaultInstance(), null, null,
                    Map.of("ingestion_queue", "events"));
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> sql.executeIngest(big, options, bearer))
                    .isInstanceOfSatisfying(FlightRuntimeException.class, e -> {
                        assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT);
                        assertThat(e.status().description()).startsWith("user.ingest.batch_too_large");
                    });
        }
    }
}
