// SPDX-License-Identifier: Apache-2.0
package dev.mallard.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.server.MallardServer;
import dev.mallard.testkit.Await;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** HttpArrowProducer against a real Mallard server's POST /v1/ingest, with a faulty HTTP hop where a fault is needed. */
class HttpArrowProducerIT {
    static final Schema ROWS = new Schema(List.of(
            Field.notNullable("id", new ArrowType.Int(64, true)),
            Field.notNullable("thread", new ArrowType.Int(32, true)),
            Field.nullable("note", ArrowType.Utf8.INSTANCE)));

    @TempDir
    Path root;

    private Path warehouse() {
        return root.resolve("warehouse");
    }

    private static ProducerOptions.Builder quick() {
        return ProducerOptions.builder().maxBatchDelay(Duration.ofMillis(100)).initialBackoff(Duration.ofMillis(50))
                .maxBackoff(Duration.ofMillis(500)).requestTimeout(Duration.ofSeconds(20)).closeTimeout(Duration.ofSeconds(60));
    }

    @Test
    void theDocumentedExampleShipsItsRows() throws Exception {
        try (MallardServer server = IngestServer.start(warehouse(), "events")) {
            URI uri = URI.create("http://127.0.0.1:" + server.httpPort());
            Path spill = root.resolve("spill");
            // docs:begin http
            Schema schema = new Schema(List.of(
                    Field.notNullable("id", new ArrowType.Int(64, true)),
                    Field.notNullable("thread", new ArrowType.Int(32, true)),
                    Field.nullable("note", ArrowType.Utf8.INSTANCE)));
            ProducerOptions options = ProducerOptions.builder()
                    .producerId("checkout-1")          // stable across restarts: the spill directory is replayed
                    .maxBatchRows(5_000)
                    .maxBatchDelay(Duration.ofMillis(500))
                    .spillDirectory(spill)
                    .build();
            try (HttpArrowProducer producer = HttpArrowProducer.builder(uri, "events", schema)
                    .login("ada", "lovelace")
                    .options(options)
                    .build()) {
                for (long i = 0; i < 10_000; i++) {
                    producer.addRow(i, 0, "row " + i);
                }
                producer.flush(Duration.ofSeconds(30));  // optional: close() flushes too
            }
            // docs:end http
        }
        assertThat(IngestServer.counts(warehouse(), "events")).containsExactly(10_000L, 10_000L, 49_995_000L);
    }

    @Test
    void rowsFromEightThreadsThroughOneProducerAreQueriedBackExactlyOnce() throws Exception {
        try (MallardServer server = IngestServer.start(warehouse(), "events")) {
            URI uri = URI.create("http://127.0.0.1:" + server.httpPort());
            int threads = 8;
            int perThread = 2_500;
            try (HttpArrowProducer producer = HttpArrowProducer.builder(uri, "events", ROWS).login(IngestServer.USER, IngestServer.PASSWORD)
                    .options(quick().maxBatchRows(700).build()).build()) {
                ExecutorService pool = Executors.newFixedThreadPool(threads);
                List<Future<?>> done = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int thread = t;
                    done.add(pool.submit(() -> {
                        for (int i = 0; i < perThread; i++) {
                            producer.addRow((long) thread * perThread + i, thread, i % 7 == 0 ? null : "row " + i);
                        }
                        return null;
                    }));
                }
                for (Future<?> f : done) {
                    f.get();
                }
                pool.shutdown();
                assertThat(producer.flush(Duration.ofMinutes(2))).isTrue();
                ProducerStats stats = producer.stats();
                assertThat(stats.rowsAcknowledged()).isEqualTo(threads * perThread);
                assertThat(stats.batchesRejected()).isZero();
            }
            long n = (long) threads * perThread;
            assertThat(IngestServer.counts(warehouse(), "events")).containsExactly(n, n, n * (n - 1) / 2);
            assertThat(IngestServer.query(warehouse(), "events", "SELECT count(*) FROM rows WHERE note IS NULL").get(0).get(0))
                    .isEqualTo((long) threads * ((perThread + 6) / 7));
        }
    }

    @Test
    void aBatchWhoseAcknowledgementIsLostIsSentAgainAndWrittenOnce() throws Exception {
        try (MallardServer server = IngestServer.start(warehouse(), "events"); FaultyHttpProxy proxy = new FaultyHttpProxy(server.httpPort())) {
            proxy.holdNextAnswer();
            try (HttpArrowProducer producer = HttpArrowProducer.builder(proxy.uri(), "events", ROWS).login(IngestServer.USER, IngestServer.PASSWORD)
                    .options(quick().requestTimeout(Duration.ofSeconds(2)).maxBatchDelay(Duration.ofMinutes(1)).build()).build()) {
                for (long i = 0; i < 100; i++) {
                    producer.addRow(i, 0, "once");
                }
                assertThat(producer.flush(Duration.ofMinutes(1))).isTrue();
                assertThat(producer.stats().retries()).isGreaterThanOrEqualTo(1);
                assertThat(producer.stats().batchesAcknowledged()).isEqualTo(1);
            }
            assertThat(proxy.batchIds()).hasSizeGreaterThanOrEqualTo(2).containsOnly(proxy.batchIds().get(0));
            assertThat(IngestServer.counts(warehouse(), "events")).containsExactly(100L, 100L, 4950L);
        }
    }

    @Test
    void answers429AreRetriedAfterTheirRetryAfterAndNothingIsWrittenTwice() throws Exception {
        try (MallardServer server = IngestServer.start(warehouse(), "events"); FaultyHttpProxy proxy = new FaultyHttpProxy(server.httpPort())) {
            proxy.busy(2, 1);
            try (HttpArrowProducer producer = HttpArrowProducer.builder(proxy.uri(), "events", ROWS).login(IngestServer.USER, IngestServer.PASSWORD)
                    .options(quick().maxBatchRows(50).maxBatchDelay(Duration.ofMinutes(1)).build()).build()) {
                for (long i = 0; i < 200; i++) {
                    producer.addRow(i, 0, "busy");
                }
                assertThat(producer.flush(Duration.ofMinutes(1))).isTrue();
                assertThat(producer.stats().busyAnswers()).isEqualTo(2);
                assertThat(producer.stats().batchesAcknowledged()).isEqualTo(4);
            }
            assertThat(IngestServer.counts(warehouse(), "events")).containsExactly(200L, 200L, 19900L);
        }
    }

    @Test
    void producersPastTheServersMaxPendingWriteAreAnswered429AndRetriedUntilEveryRowLandsOnce() throws Exception {
        // Room for one batch of 100 rows (under 3 KB) but not two, each held 300 ms before it is written: producers sending at once collide.
        List<String> slow = List.of("ingestion.max_pending_write=4000", "ingestion.queues.0.flush_interval_ms=300");
        try (MallardServer server = IngestServer.start(warehouse(), slow, "events")) {
            URI uri = URI.create("http://127.0.0.1:" + server.httpPort());
            int producers = 3;
            java.util.concurrent.CyclicBarrier together = new java.util.concurrent.CyclicBarrier(producers);
            ExecutorService pool = Executors.newFixedThreadPool(producers);
            List<Future<ProducerStats>> done = new ArrayList<>();
            for (int p = 0; p < producers; p++) {
                int producerNumber = p;
                done.add(pool.submit(() -> {
                    try (HttpArrowProducer producer = HttpArrowProducer.builder(uri, "events", ROWS).login(IngestServer.USER, IngestServer.PASSWORD)
                            .options(quick().maxBatchRows(100).maxBatchDelay(Duration.ofMinutes(1)).build()).build()) {
                        together.await();
                        for (long i = 0; i < 300; i++) {
                            producer.addRow(producerNumber * 300L + i, producerNumber, "pushed");
                        }
                        producer.flush(Duration.ofMinutes(2));
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
            assertThat(busy).isPositive();
            assertThat(IngestServer.counts(warehouse(), "events")).containsExactly(900L, 900L, 404_550L);
        }
    }

    @Test
    void batchesSpilledWhileTheServerIsDownAreReplayedInOrderWhenItIsBackOnTheSameWarehouse() throws Exception {
        Path spill = root.resolve("spill");
        MallardServer first = IngestServer.start(warehouse(), "events");
        try (FaultyHttpProxy proxy = new FaultyHttpProxy(first.httpPort())) {
            ProducerOptions options = quick().producerId("spill-test").maxBatchRows(100).spillDirectory(spill).build();
            try (HttpArrowProducer producer = HttpArrowProducer.builder(proxy.uri(), "events", ROWS).login(IngestServer.USER, IngestServer.PASSWORD)
                    .options(options).build()) {
                for (long i = 0; i < 500; i++) {
                    producer.addRow(i, 0, "before");
                }
                assertThat(producer.flush(Duration.ofMinutes(1))).isTrue();

                proxy.down();
                first.close();
                for (long i = 500; i < 2_000; i++) {
                    producer.addRow(i, 1, "while down");
                }
                Await.until("the batches sealed while the server is down are spilled", () -> spilledFiles(spill.resolve("spill-test")) >= 15);
                assertThat(producer.stats().batchesSpilled()).isGreaterThanOrEqualTo(14);
                int seenWhileDown = proxy.batchIds().size();

                try (MallardServer second = IngestServer.start(warehouse(), "events")) {
                    proxy.up(second.httpPort());
                    assertThat(producer.flush(Duration.ofMinutes(2))).isTrue();
                    assertThat(spilledFiles(spill.resolve("spill-test"))).isZero();
                    List<Long> replayed = proxy.batchIds().subList(seenWhileDown, proxy.batchIds().size()).stream().map(Long::parseLong).toList();
                    assertThat(replayed).isSorted();
                    assertThat(IngestServer.counts(warehouse(), "events")).containsExactly(2_000L, 2_000L, 1_999_000L);
                }
            }
        } finally {
            first.close();
        }
    }

    @Test
    void batchesLeftInTheSpillDirectoryAtCloseAreSentByTheNextProducerWithTheSameId() throws Exception {
        Path spill = root.resolve("spill");
        ProducerOptions options = quick().producerId("restarted-app").maxBatchRows(100).maxBatchDelay(Duration.ofMinutes(1)).spillDirectory(spill)
                .closeTimeout(Duration.ofMillis(500)).build();
        try (MallardServer server = IngestServer.start(warehouse(), "events"); FaultyHttpProxy proxy = new FaultyHttpProxy(server.httpPort())) {
            proxy.down();
            try (HttpArrowProducer producer = HttpArrowProducer.builder(proxy.uri(), "events", ROWS).login(IngestServer.USER, IngestServer.PASSWORD)
                    .options(options).build()) {
                for (long i = 0; i < 1_000; i++) {
                    producer.addRow(i, 0, "app run 1");
                }
            }
            assertThat(spilledFiles(spill.resolve("restarted-app"))).isEqualTo(10);
            proxy.up(server.httpPort());
            try (HttpArrowProducer producer = HttpArrowProducer.builder(proxy.uri(), "events", ROWS).login(IngestServer.USER, IngestServer.PASSWORD)
                    .options(options).build()) {
                for (long i = 1_000; i < 1_100; i++) {
                    producer.addRow(i, 1, "app run 2");
                }
                assertThat(producer.flush(Duration.ofMinutes(1))).isTrue();
                assertThat(producer.stats().batchesAcknowledged()).isEqualTo(11);
            }
            assertThat(spilledFiles(spill.resolve("restarted-app"))).isZero();
            assertThat(IngestServer.counts(warehouse(), "events")).containsExactly(1_100L, 1_100L, 604_450L);
        }
    }

    @Test
    void partitionColumnsAskedForByTheProducerLayTheFilesOutInHiveDirectories() throws Exception {
        try (MallardServer server = IngestServer.start(warehouse(), "events")) {
            URI uri = URI.create("http://127.0.0.1:" + server.httpPort());
            try (HttpArrowProducer producer = HttpArrowProducer.builder(uri, "events", ROWS).login(IngestServer.USER, IngestServer.PASSWORD)
                    .options(quick().partitionBy(List.of("thread")).sortOrder(List.of("id")).build()).build()) {
                for (long i = 0; i < 300; i++) {
                    producer.addRow(i, (int) (i % 3), "partitioned");
                }
            }
            for (int thread = 0; thread < 3; thread++) {
                assertThat(warehouse().resolve("events").resolve("thread=" + thread)).isDirectory();
            }
            assertThat(IngestServer.counts(warehouse(), "events")).containsExactly(300L, 300L, 44_850L);
            assertThat(IngestServer.query(warehouse(), "events", "SELECT count(DISTINCT thread) FROM rows").get(0).get(0)).isEqualTo(3L);
        }
    }

    @Test
    void aBatchLargerThanTheServersMaxPendingWriteIsRejectedAtOnceInsteadOfRetried() throws Exception {
        try (MallardServer server = IngestServer.start(warehouse(), List.of("ingestion.max_pending_write=4000"), "events")) {
            URI uri = URI.create("http://127.0.0.1:" + server.httpPort());
            try (HttpArrowProducer producer = HttpArrowProducer.builder(uri, "events", ROWS).login(IngestServer.USER, IngestServer.PASSWORD)
                    .options(quick().maxBatchRows(1_000).maxBatchDelay(Duration.ofMinutes(1)).build()).build()) {
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
    }

    @Test
    void aBatchForAQueueTheServerDoesNotHaveIsRejectedAndCounted() throws Exception {
        try (MallardServer server = IngestServer.start(warehouse(), "events")) {
            URI uri = URI.create("http://127.0.0.1:" + server.httpPort());
            try (HttpArrowProducer producer = HttpArrowProducer.builder(uri, "no_such_queue", ROWS).login(IngestServer.USER, IngestServer.PASSWORD)
                    .options(quick().build()).build()) {
                producer.addRow(1L, 0, "lost");
                assertThat(producer.flush(Duration.ofMinutes(1))).isTrue();
                assertThat(producer.stats().batchesRejected()).isEqualTo(1);
                assertThat(producer.stats().batchesAcknowledged()).isZero();
            }
        }
    }

    static long spilledFiles(Path dir) throws Exception {
        if (!Files.isDirectory(dir)) {
            return 0;
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().contains(".arrows")).filter(f -> !f.toString().endsWith(".tmp")).count();
        }
    }
}
