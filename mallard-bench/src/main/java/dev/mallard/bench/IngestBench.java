// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.server.MallardServer;
import dev.mallard.server.auth.PasswordHash;
import dev.mallard.server.config.AccessMode;
import dev.mallard.server.config.ServerConfig;
import dev.mallard.server.config.UserAccount;
import dev.mallard.server.ingest.IngestionConfig;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.grpc.CredentialCallOption;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.duckdb.DuckDBResultSet;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Rows/s of a stream of Arrow batches (the four columns of {@code bench server}) acknowledged by a server's ingestion
 * queue, through {@code POST /v1/ingest} and Flight {@code DoPut}, with one and with several producers; against DuckDB
 * writing the same rows to Parquet in-process in the same run. Every acknowledgement is a committed, fsynced file.
 */
@Command(name = "ingest", mixinStandardHelpOptions = true, description = {
    "Rows/s of Arrow batches written to Parquet over HTTP and Flight DoPut, by 1 and by N producers.",
    "100k-row batches (BIGINT, DOUBLE, VARCHAR, TIMESTAMP) through POST /v1/ingest and DoPut, each acknowledged once",
    "committed; vs DuckDB's COPY of the same rows to Parquet in-process."})
final class IngestBench implements Callable<Integer> {
    static final double TARGET_RATIO = 0.5;
    private static final String USER = "bench";
    private static final String PASSWORD = "bench-password";
    private static final String ARROW = "application/vnd.apache.arrow.stream";
    /** Distinct batches encoded once and sent in turn, so the producers' memory does not grow with --rows. */
    private static final int DISTINCT_BATCHES = 8;

    @Option(names = "--rows", description = "Rows in the stream (default ${DEFAULT-VALUE}).", defaultValue = "10000000")
    long rows;

    @Option(names = "--batch-rows", description = "Rows per batch (default ${DEFAULT-VALUE}).", defaultValue = "100000")
    int batchRows;

    @Option(names = "--producers", description = "Producers of the concurrent runs (default ${DEFAULT-VALUE}).", defaultValue = "8")
    int producers;

    @Option(names = "--json", description = "Print one JSON object instead of a table.")
    boolean json;

    /** @param cpuNanosPerRow this process's CPU time (server and producers, every thread) per row sent, -1 if unknown */
    private record Run(double rowsPerSecond, double p99Millis, long batches, double cpuNanosPerRow) {}

    @Override
    public Integer call() throws Exception {
        Path root = Files.createTempDirectory("mallard-bench-ingest");
        Path warehouse = root.resolve("warehouse");
        IngestionConfig.Queue queue = IngestionConfig.Queue.named("bench", "lake/bench");
        ServerConfig config = new ServerConfig(warehouse, Optional.empty(), "127.0.0.1", 0, ServerConfig.DEFAULT_HTTP_MAX_BODY_BYTES, 0, Optional.empty(),
                List.of(new UserAccount(USER, PasswordHash.of(PASSWORD))), AccessMode.COMPLETE, Optional.empty(), 60,
                ServerConfig.SessionLimits.DEFAULT, ServerConfig.DEFAULT_FETCH_SIZE, 0, Optional.empty())
                .withIngestion(new IngestionConfig(List.of(queue), Optional.empty(), Optional.empty(), 1L << 30));
        ObjectNode result = new ObjectMapper().createObjectNode();
        long batches = Math.max(1, rows / batchRows);
        long streamRows = batches * batchRows;
        try (MallardServer server = MallardServer.start(config); BufferAllocator allocator = new RootAllocator()) {
            List<byte[]> encoded = encode(server, allocator);
            double[] duckdbCpu = new double[1];
            double duckdb = duckdbCopy(server, warehouse.resolve("reference.parquet"), streamRows, duckdbCpu);
            String token = login(server.httpPort());
            Run http1 = http(server.httpPort(), token, encoded, batches, 1, "h1");
            Run httpN = http(server.httpPort(), token, encoded, batches, producers, "hn");
            Run flight1;
            Run flightN;
            try (FlightClient flight = FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", server.flightPort())).build()) {
                CredentialCallOption bearer = flight.authenticateBasicToken(USER, PASSWORD).orElseThrow();
                FlightSqlClient sql = new FlightSqlClient(flight);
                flight1 = flight(sql, bearer, allocator, encoded, batches, 1, "f1");
                flightN = flight(sql, bearer, allocator, encoded, batches, producers, "fn");
            }
            long landed = count(server, "SELECT count(*) FROM bench");
            if (landed != 4 * streamRows) {
                throw new IllegalStateException("the queue holds " + landed + " rows, not " + 4 * streamRows);
            }
            result.put("rows", streamRows);
            result.put("batch_rows", batchRows);
            result.put("producers", producers);
            result.put("duckdb_copy_rows_per_s", Math.round(duckdb));
            result.put("duckdb_copy_cpu_ns_per_row", Math.round(duckdbCpu[0]));
            put(result, "http_1", http1, duckdb);
            put(result, "http_" + producers, httpN, duckdb);
            put(result, "doput_1", flight1, duckdb);
            put(result, "doput_" + producers, flightN, duckdb);
            result.put("target_ratio", TARGET_RATIO);
            result.put("peak_rss_mib", PeakRss.selfKib() / 1024);
            result.put("cores", Runtime.getRuntime().availableProcessors());
        } finally {
            deleteTree(root);
        }
        if (json) {
            System.out.println(result.toPrettyString());
        } else {
            result.fields().forEachRemaining(field -> System.out.printf("%-32s %s%n", field.getKey(), field.getValue()));
        }
        return 0;
    }

    private static void put(ObjectNode result, String name, Run run, double duckdb) {
        result.put(name + "_rows_per_s", Math.round(run.rowsPerSecond()));
        result.put(name + "_ratio", Math.round(run.rowsPerSecond() / duckdb * 100) / 100.0);
        result.put(name + "_p99_ack_ms", Math.round(run.p99Millis() * 10) / 10.0);
        result.put(name + "_cpu_ns_per_row", Math.round(run.cpuNanosPerRow()));
    }

    /** The batches as Arrow IPC streams, from DuckDB's export of the {@code bench server} table's rows. */
    private List<byte[]> encode(MallardServer server, BufferAllocator allocator) throws Exception {
        List<byte[]> encoded = new ArrayList<>();
        try (Connection connection = server.engineSession(); Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery("SELECT range AS id, random() AS x, 'name-' || (range % 1000) AS s,"
                        + " TIMESTAMP '2024-01-01' + to_seconds(range) AS ts FROM range(" + (long) batchRows * DISTINCT_BATCHES + ")");
                ArrowReader reader = (ArrowReader) rs.unwrap(DuckDBResultSet.class).arrowExportStream(allocator, batchRows)) {
            while (reader.loadNextBatch()) {
                VectorSchemaRoot root = reader.getVectorSchemaRoot();
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                try (ArrowStreamWriter writer = new ArrowStreamWriter(root, null, out)) {
                    writer.start();
                    writer.writeBatch();
                    writer.end();
                }
                encoded.add(out.toByteArray());
            }
        }
        return encoded;
    }

    /** DuckDB's own COPY of the same rows (a table of them) to one Parquet file, fsynced as ingestion's are: rows/s. */
    private double duckdbCopy(MallardServer server, Path file, long streamRows, double[] cpuNanosPerRow) throws Exception {
        try (Connection connection = server.engineSession(); Statement statement = connection.createStatement()) {
            statement.execute("CREATE TEMP TABLE reference AS SELECT range AS id, random() AS x, 'name-' || (range % 1000) AS s,"
                    + " TIMESTAMP '2024-01-01' + to_seconds(range) AS ts FROM range(" + streamRows + ")");
            long started = System.nanoTime();
            long cpu = ProcessCpu.selfNanos();
            statement.execute("COPY reference TO '" + file + "' (FORMAT parquet)");
            try (var channel = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.READ)) {
                channel.force(true);
            }
            double seconds = (System.nanoTime() - started) / 1e9;
            long used = ProcessCpu.between(cpu, ProcessCpu.selfNanos());
            cpuNanosPerRow[0] = used < 0 ? -1 : used / (double) streamRows;
            statement.execute("DROP TABLE reference");
            return streamRows / seconds;
        }
    }

    private Run http(int port, String token, List<byte[]> encoded, long batches, int threads, String producer) throws Exception {
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        return concurrently(batches, threads, (thread, batch) -> {
            while (true) {
                HttpResponse<String> response = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/ingest?ingestion_queue=bench"))
                        .timeout(Duration.ofMinutes(5)).header("Authorization", "Bearer " + token).header("Content-Type", ARROW)
                        .header("x-dd-producer-id", producer + "-" + thread).header("x-dd-producer-batch-id", String.valueOf(batch))
                        .POST(HttpRequest.BodyPublishers.ofByteArray(encoded.get((int) (batch % encoded.size())))).build(),
                        HttpResponse.BodyHandlers.ofString());
                if (response.statusCode() == 200) {
                    return;
                }
                if (response.statusCode() != 429) {
                    throw new IllegalStateException("ingest answered " + response.statusCode() + ": " + response.body());
                }
                Thread.sleep(10);
            }
        });
    }

    private Run flight(FlightSqlClient sql, CredentialCallOption bearer, BufferAllocator allocator, List<byte[]> encoded, long batches, int threads,
            String producer) throws Exception {
        return concurrently(batches, threads, (thread, batch) -> {
            try (ArrowStreamReader reader = new ArrowStreamReader(new ByteArrayInputStream(encoded.get((int) (batch % encoded.size()))), allocator)) {
                reader.loadNextBatch();
                sql.executeIngest(reader.getVectorSchemaRoot(), new FlightSqlClient.ExecuteIngestOptions("", TableDefinitionOptions.getDefaultInstance(),
                        null, null, Map.of("ingestion_queue", "bench", "x-dd-producer-id", producer + "-" + thread, "x-dd-producer-batch-id",
                                String.valueOf(batch))), bearer);
            }
        });
    }

    private interface Send {
        void send(int thread, long batch) throws Exception;
    }

    /** Sends batches 0..batches-1 from {@code threads} producers, each its share in order; rows/s and the p99 acknowledgement. */
    private Run concurrently(long batches, int threads, Send send) throws Exception {
        ConcurrentLinkedQueue<Long> latencies = new ConcurrentLinkedQueue<>();
        AtomicInteger next = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        long started = System.nanoTime();
        long cpu = ProcessCpu.selfNanos();
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                futures.add(pool.submit(() -> {
                    long batch;
                    while ((batch = next.getAndIncrement()) < batches) {
                        long at = System.nanoTime();
                        send.send(thread, batch);
                        latencies.add(System.nanoTime() - at);
                    }
                    return null;
                }));
            }
            for (Future<?> future : futures) {
                future.get();
            }
        } finally {
            pool.shutdownNow();
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        long used = ProcessCpu.between(cpu, ProcessCpu.selfNanos());
        List<Long> sorted = new ArrayList<>(latencies);
        Collections.sort(sorted);
        double p99 = sorted.isEmpty() ? 0 : sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(sorted.size() * 0.99) - 1)) / 1e6;
        double rowsSent = batches * (double) batchRows;
        return new Run(rowsSent / seconds, p99, batches, used < 0 ? -1 : used / rowsSent);
    }

    private static long count(MallardServer server, String sql) throws Exception {
        try (Connection connection = server.engineSession(); Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static String login(int port) throws Exception {
        String body = "{\"username\":\"" + USER + "\",\"password\":\"" + PASSWORD + "\"}";
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/login"))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        return new ObjectMapper().readTree(response.body()).path("accessToken").asText();
    }

    private static void deleteTree(Path root) throws java.io.IOException {
        try (var walk = Files.walk(root)) {
            for (Path path : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;
}
