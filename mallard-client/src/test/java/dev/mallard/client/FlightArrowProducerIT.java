// SPDX-License-Identifier: Apache-2.0
package dev.mallard.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.server.MallardServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** FlightArrowProducer against a real Mallard server's DoPut with the ingestion_queue option. */
class FlightArrowProducerIT {
    @TempDir
    Path root;

    private Path warehouse() {
        return root.resolve("warehouse");
    }

    @Test
    void theDocumentedExampleShipsItsRows() throws Exception {
        try (MallardServer server = IngestServer.start(warehouse(), "events")) {
            int port = server.flightPort();
            Schema schema = HttpArrowProducerIT.ROWS;
            // docs:begin flight
            try (FlightArrowProducer producer = FlightArrowProducer.builder(Location.forGrpcInsecure("127.0.0.1", port), "events", schema)
                    .login("ada", "lovelace")
                    .options(ProducerOptions.builder().producerId("checkout-2").build())
                    .build()) {
                for (long i = 0; i < 1_000; i++) {
                    producer.addRow(i, 0, "row " + i);
                }
            }
            // docs:end flight
        }
        assertThat(IngestServer.counts(warehouse(), "events")).containsExactly(1_000L, 1_000L, 499_500L);
    }

    @Test
    void rowsFromSeveralThreadsOverDoPutAreQueriedBackExactlyOnce() throws Exception {
        try (MallardServer server = IngestServer.start(warehouse(), "events")) {
            int threads = 6;
            int perThread = 2_000;
            ProducerOptions options = ProducerOptions.builder().maxBatchRows(900).maxBatchDelay(Duration.ofMillis(100)).build();
            try (FlightArrowProducer producer = FlightArrowProducer.builder(Location.forGrpcInsecure("127.0.0.1", server.flightPort()), "events",
                    HttpArrowProducerIT.ROWS).login(IngestServer.USER, IngestServer.PASSWORD).options(options).build()) {
                ExecutorService pool = Executors.newFixedThreadPool(threads);
                List<Future<?>> done = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int thread = t;
                    done.add(pool.submit(() -> {
                        if (thread % 2 == 0) {
                            for (int i = 0; i < perThread; i++) {
                                producer.addRow((long) thread * perThread + i, thread, "row " + i);
                            }
                        } else {
                            sendAsOneRoot(producer, thread, perThread);
                        }
                        return null;
                    }));
                }
                for (Future<?> f : done) {
                    f.get();
                }
                pool.shutdown();
                assertThat(producer.flush(Duration.ofMinutes(2))).isTrue();
                assertThat(producer.stats().rowsAcknowledged()).isEqualTo(threads * perThread);
            }
            long n = (long) threads * perThread;
            assertThat(IngestServer.counts(warehouse(), "events")).containsExactly(n, n, n * (n - 1) / 2);
        }
    }

    @Test
    void resourceExhaustedPastTheServersMaxPendingWriteIsRetriedUntilEveryRowLandsOnce() throws Exception {
        // Room for one batch of 100 rows (about 3 KB as the server spools it) but not two; each held 300 ms before it is written.
        List<String> slow = List.of("ingestion.max_pending_write=4000", "ingestion.queues.0.flush_interval_ms=300");
        try (MallardServer server = IngestServer.start(warehouse(), slow, "events")) {
            int producers = 3;
            java.util.concurrent.CyclicBarrier together = new java.util.concurrent.CyclicBarrier(producers);
            ExecutorService pool = Executors.newFixedThreadPool(producers);
            List<Future<ProducerStats>> done = new ArrayList<>();
            for (int p = 0; p < producers; p++) {
                int producerNumber = p;
                done.add(pool.submit(() -> {
                    ProducerOptions options = ProducerOptions.builder().maxBatchRows(100).maxBatchDelay(Duration.ofMinutes(1)).initialBackoff(Duration.ofMillis(50))
                            .maxBackoff(Duration.ofMillis(400)).build();
                    try (FlightArrowProducer producer = FlightArrowProducer.builder(Location.forGrpcInsecure("127.0.0.1", server.flightPort()), "events",
                            HttpArrowProducerIT.ROWS).login(IngestServer.USER, IngestServer.PASSWORD).options(options).build()) {
                        together.await();
                        for (long i = 0; i < 300; i++) {
                            producer.addRow(producerNumber * 300L + i, producerNumber, "pushed");
                        }
                        producer.flush(Duration.ofSeconds(90));
                        return producer.stats();
                    }
                }));
            }
            long busy = 0;
            for (Future<ProducerStats> f : done) {
                ProducerStats stats = f.get();
                assertThat(stats.batchesAcknowledged()).isEqualTo(3);
                busy += stats.busyAnswers();
            }
            pool.shutdown();
            assertThat(busy).as("RESOURCE_EXHAUSTED answers").isPositive();
            assertThat(IngestServer.counts(warehouse(), "events")).containsExactly(900L, 900L, 404_550L);
        }
    }

    @Test
    void aBatchLargerThanTheServersMaxPendingWriteIsRejectedAtOnceInsteadOfRetried() throws Exception {
        try (MallardServer server = IngestServer.start(warehouse(), List.of("ingestion.max_pending_write=4000"), "events");
                FlightArrowProducer producer = FlightArrowProducer.builder(Location.forGrpcInsecure("127.0.0.1", server.flightPort()), "events",
                        HttpArrowProducerIT.ROWS).login(IngestServer.USER, IngestServer.PASSWORD)
                        .options(ProducerOptions.builder().maxBatchRows(1_000).maxBatchDelay(Duration.ofMinutes(1)).initialBackoff(Duration.ofMillis(50))
                                .build()).build()) {
            for (long i = 0; i < 1_000; i++) {
                producer.addRow(i, 0, "a batch of 1000 rows is far more than 4000 bytes");
            }
            assertThat(producer.flush(Duration.ofMinutes(1))).isTrue();
            assertThat(producer.stats().batchesRejected()).isEqualTo(1);
            assertThat(producer.stats().retries()).isZero();
            assertThat(producer.stats().busyAnswers()).isZero();
        }
        assertThat(IngestServer.counts(warehouse(), "events")).containsExactly(0L, 0L, 0L);
    }

    @Test
    void batchesSpilledWhileNoFlightServerListensAreReplayedByTheNextProducerWithTheSameId() throws Exception {
        Path spill = root.resolve("spill");
        ProducerOptions options = ProducerOptions.builder().producerId("flight-spill").maxBatchRows(100).maxBatchDelay(Duration.ofMinutes(1)).spillDirectory(spill)
                .initialBackoff(Duration.ofMillis(50)).maxBackoff(Duration.ofMillis(200)).requestTimeout(Duration.ofSeconds(5))
                .closeTimeout(Duration.ofMillis(500)).build();
        int nobody;
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
            nobody = socket.getLocalPort();
        }
        try (FlightArrowProducer producer = FlightArrowProducer.builder(Location.forGrpcInsecure("127.0.0.1", nobody), "events",
                HttpArrowProducerIT.ROWS).login(IngestServer.USER, IngestServer.PASSWORD).options(options).build()) {
            for (long i = 0; i < 500; i++) {
                producer.addRow(i, 0, "while nobody listens");
            }
        }
        assertThat(HttpArrowProducerIT.spilledFiles(spill.resolve("flight-spill"))).isEqualTo(5);
        try (MallardServer server = IngestServer.start(warehouse(), "events");
                FlightArrowProducer producer = FlightArrowProducer.builder(Location.forGrpcInsecure("127.0.0.1", server.flightPort()), "events",
                        HttpArrowProducerIT.ROWS).login(IngestServer.USER, IngestServer.PASSWORD).options(options).build()) {
            assertThat(producer.flush(Duration.ofMinutes(1))).isTrue();
            assertThat(producer.stats().batchesAcknowledged()).isEqualTo(5);
            assertThat(HttpArrowProducerIT.spilledFiles(spill.resolve("flight-spill"))).isZero();
            assertThat(IngestServer.counts(warehouse(), "events")).containsExactly(500L, 500L, 124_750L);
        }
    }

    /** The VectorSchemaRoot path: a caller's own batch, copied into the producer's. */
    private static void sendAsOneRoot(ArrowProducer producer, int thread, int rows) {
        try (BufferAllocator allocator = new RootAllocator(); VectorSchemaRoot root = VectorSchemaRoot.create(producer.schema(), allocator)) {
            root.allocateNew();
            BigIntVector id = (BigIntVector) root.getVector("id");
            IntVector threadColumn = (IntVector) root.getVector("thread");
            VarCharVector note = (VarCharVector) root.getVector("note");
            for (int i = 0; i < rows; i++) {
                id.setSafe(i, (long) thread * rows + i);
                threadColumn.setSafe(i, thread);
                note.setSafe(i, ("root row " + i).getBytes(java.nio.charset.StandardCharsets.UTF_8));
            }
            root.setRowCount(rows);
            producer.send(root);
        }
    }

    @Test
    void aBatchPutTwiceWithTheSameBatchIdIsWrittenOnce() throws Exception {
        try (MallardServer server = IngestServer.start(warehouse(), "events"); BufferAllocator allocator = new RootAllocator();
                VectorSchemaRoot rows = VectorSchemaRoot.create(HttpArrowProducerIT.ROWS, allocator)) {
            rows.allocateNew();
            for (int i = 0; i < 10; i++) {
                ((BigIntVector) rows.getVector("id")).setSafe(i, i);
                ((IntVector) rows.getVector("thread")).setSafe(i, 0);
            }
            rows.setRowCount(10);
            byte[] payload = BatchEngine.serialize(rows, false);
            ProducerOptions options = ProducerOptions.builder().producerId("twice").build();
            try (FlightIngestTransport transport = new FlightIngestTransport(Location.forGrpcInsecure("127.0.0.1", server.flightPort()), "events",
                    Optional.of(IngestServer.USER), Optional.of(IngestServer.PASSWORD), Map.of(), Optional.empty(), options, allocator)) {
                assertThat(transport.send(42, payload, false).kind()).isEqualTo(SendOutcome.Kind.ACKNOWLEDGED);
                assertThat(transport.send(42, payload, false).kind()).isEqualTo(SendOutcome.Kind.ACKNOWLEDGED);
                assertThat(transport.send(43, payload, false).kind()).isEqualTo(SendOutcome.Kind.ACKNOWLEDGED);
            }
            assertThat(IngestServer.query(warehouse(), "events", "SELECT count(*), count(DISTINCT id) FROM rows").get(0)).containsExactly(20L, 10L);
        }
    }
}
