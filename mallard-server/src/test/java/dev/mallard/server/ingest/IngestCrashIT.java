// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Producers send numbered batches while the server, a child JVM, is killed with SIGKILL at random moments (five times)
 * and restarted. Each producer re-sends a batch with the same producer and batch id until it is acknowledged. Afterwards
 * the queue's files hold every batch exactly once; while the server is down every visible file is a whole Parquet file;
 * and a reader of the queue's view never sees part of a batch.
 */
class IngestCrashIT {
    private static final int PRODUCERS = 3;
    private static final int BATCHES = 6;
    private static final int ROWS = 300;
    private static final int KILLS = 5;
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @TempDir
    Path root;

    @Test
    void everyAcknowledgedBatchLandsExactlyOnceAcrossSigkills() throws Exception {
        Random random = new Random();
        Process child = startChild();
        AtomicBoolean done = new AtomicBoolean();
        AtomicInteger acknowledged = new AtomicInteger();
        ConcurrentLinkedQueue<String> torn = new ConcurrentLinkedQueue<>();
        ExecutorService pool = Executors.newFixedThreadPool(PRODUCERS + 1);
        try {
            List<Future<?>> producers = new ArrayList<>();
            for (int p = 0; p < PRODUCERS; p++) {
                int producer = p;
                producers.add(pool.submit(() -> {
                    for (int b = 0; b < BATCHES; b++) {
                        byte[] body = IngestFixtures.batch("p" + producer, ((long) producer * BATCHES + b) * ROWS, ROWS);
                        while (!send(body, "p" + producer, b)) {
                            Thread.sleep(50);
                        }
                        acknowledged.incrementAndGet();
                    }
                    return null;
                }));
            }
            Future<?> reader = pool.submit(() -> {
                while (!done.get()) {
                    readWholeBatchesOnly(torn);
                    Thread.sleep(100);
                }
                return null;
            });
            for (int kill = 0; kill < KILLS; kill++) {
                int before = acknowledged.get();
                // A random moment while batches are in flight.
                long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200 + random.nextInt(1200));
                while (System.nanoTime() < until || acknowledged.get() == before && acknowledged.get() < PRODUCERS * BATCHES) {
                    Thread.sleep(10);
                }
                child.destroyForcibly();
                assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
                assertEveryVisibleFileIsWhole();
                child = startChild();
            }
            for (Future<?> producer : producers) {
                producer.get(5, TimeUnit.MINUTES);
            }
            done.set(true);
            reader.get(1, TimeUnit.MINUTES);
            // The queue's table, kept in the database file across the kills, holds each commit once too.
            int port = Integer.parseInt(Files.readString(root.resolve("port")).trim());
            HttpResponse<String> rows = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/query"))
                    .header("Authorization", "Bearer " + token(port)).header("Accept", "application/jsonl")
                    .POST(HttpRequest.BodyPublishers.ofString(IngestFixtures.JSON.writeValueAsString(Map.of("query",
                            "SELECT count(*) AS n, count(DISTINCT id) AS d FROM events_rows")))).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(rows.statusCode()).as(rows.body()).isEqualTo(200);
            long total = (long) PRODUCERS * BATCHES * ROWS;
            assertThat(IngestFixtures.JSON.readTree(rows.body().trim()).path("n").asLong()).as(rows.body()).isEqualTo(total);
            assertThat(IngestFixtures.JSON.readTree(rows.body().trim()).path("d").asLong()).as(rows.body()).isEqualTo(total);
        } finally {
            done.set(true);
            pool.shutdownNow();
            child.destroyForcibly();
            child.waitFor(60, TimeUnit.SECONDS);
        }

        assertThat(torn).as("batches a reader saw in part").isEmpty();
        assertEveryVisibleFileIsWhole();
        long expected = (long) PRODUCERS * BATCHES * ROWS;
        try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:"); Statement statement = duckdb.createStatement();
                ResultSet rs = statement.executeQuery("SELECT count(*), count(DISTINCT id), min(id), max(id) FROM read_parquet('"
                        + root.resolve("warehouse/lake/events") + "/**/*.parquet')")) {
            rs.next();
            assertThat(rs.getLong(1)).as("rows on disk").isEqualTo(expected);
            assertThat(rs.getLong(2)).as("distinct ids on disk").isEqualTo(expected);
            assertThat(rs.getLong(3)).isZero();
            assertThat(rs.getLong(4)).isEqualTo(expected - 1);
        }
    }

    /** Sends one batch; true once it is acknowledged, false when it should be sent again (server down, refusing, restarting). */
    private boolean send(byte[] body, String producer, int batch) throws InterruptedException {
        try {
            int port = Integer.parseInt(Files.readString(root.resolve("port")).trim());
            String token = token(port);
            HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/ingest?ingestion_queue=events"))
                    .timeout(Duration.ofSeconds(30)).header("Authorization", "Bearer " + token).header("Content-Type", Ingestion.ARROW_STREAM)
                    .header("x-dd-producer-id", producer).header("x-dd-producer-batch-id", String.valueOf(batch))
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() == 200) {
                return true;
            }
            assertThat(response.statusCode()).as(response.body()).isIn(429, 500, 503);
            return false;
        } catch (IOException | NumberFormatException e) {
            return false;
        }
    }

    private final java.util.concurrent.ConcurrentHashMap<Integer, String> tokens = new java.util.concurrent.ConcurrentHashMap<>();

    private String token(int port) throws IOException {
        String token = tokens.get(port);
        if (token == null) {
            try {
                token = IngestFixtures.login(port);
            } catch (Exception e) {
                throw new IOException("login failed: " + e.getMessage(), e);
            }
            tokens.put(port, token);
        }
        return token;
    }

    /** Through the queue's view: each batch (ids id // ROWS) has all its rows or none. */
    private void readWholeBatchesOnly(ConcurrentLinkedQueue<String> torn) {
        try {
            int port = Integer.parseInt(Files.readString(root.resolve("port")).trim());
            String sql = "SELECT id // " + ROWS + " AS batch, count(*) AS n FROM events GROUP BY 1 HAVING count(*) <> " + ROWS;
            HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/query"))
                    .timeout(Duration.ofSeconds(30)).header("Authorization", "Bearer " + token(port)).header("Accept", "application/jsonl")
                    .POST(HttpRequest.BodyPublishers.ofString(IngestFixtures.JSON.writeValueAsString(Map.of("query", sql)))).build(),
                    HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() == 200 && !response.body().isBlank()) {
                torn.add(response.body());
            }
        } catch (IOException | NumberFormatException | InterruptedException e) {
            // the server is down or the view does not exist yet: nothing to read
        }
    }

    /** Every file a reader of the directory can see is a whole file DuckDB reads (a torn file would not be). */
    private void assertEveryVisibleFileIsWhole() throws Exception {
        Path directory = root.resolve("warehouse/lake/events");
        if (!Files.exists(directory)) {
            return;
        }
        List<Path> files;
        try (Stream<Path> walk = Files.walk(directory)) {
            files = walk.filter(Files::isRegularFile).toList();
        }
        try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:"); Statement statement = duckdb.createStatement()) {
            for (Path file : files) {
                assertThat(file.getFileName().toString()).endsWith(".parquet").doesNotStartWith(".");
                try (ResultSet rs = statement.executeQuery("SELECT count(*) FROM read_parquet('" + file + "')")) {
                    rs.next();
                    assertThat(rs.getLong(1)).as(file.toString()).isPositive();
                }
            }
        }
    }

    private Process startChild() throws Exception {
        Files.deleteIfExists(root.resolve("port"));
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        // C1 only and the serial collector: the child is started six times and lives seconds; its start is most of this test's time.
        List<String> command = new ArrayList<>(List.of(java.toString(), "--add-opens=java.base/java.nio=ALL-UNNAMED", "--enable-native-access=ALL-UNNAMED",
                "-Xmx512m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"), IngestServerChild.class.getName(), root.toString()));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(root.resolve("child.log").toFile()).start();
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (!Files.exists(root.resolve("port"))) {
            if (!process.isAlive()) {
                throw new AssertionError("the server child exited: " + Files.readString(root.resolve("child.log")));
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the server child did not start within two minutes");
            }
            Thread.sleep(50);
        }
        return process;
    }
}
