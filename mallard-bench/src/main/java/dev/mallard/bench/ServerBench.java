package dev.mallard.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.core.arrow.ArrowExport;
import dev.mallard.core.engine.Engine;
import dev.mallard.server.MallardServer;
import dev.mallard.server.auth.PasswordHash;
import dev.mallard.server.config.AccessMode;
import dev.mallard.server.config.ServerConfig;
import dev.mallard.server.config.UserAccount;
import java.io.InputStream;
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
import java.sql.Statement;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.Callable;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.grpc.CredentialCallOption;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Rows/s of one large result read five ways (in-process export, Flight DoGet, the Flight SQL JDBC driver, HTTP
 * Arrow, HTTP JSONL) from a server in this JVM, and queries/s, p99 latency and CPU time per query of concurrent
 * one-row queries from clients in a child JVM ({@link SmallQueryClients}).
 */
@Command(name = "server", mixinStandardHelpOptions = true, description = {
    "Rows/s of one table (BIGINT, DOUBLE, VARCHAR, TIMESTAMP) read in-process, through Flight DoGet, the Flight SQL",
    "JDBC driver, HTTP Arrow and HTTP JSONL from a server in this JVM; then concurrent clients in a child JVM issuing one-row",
    "queries over JDBC, Flight SQL and HTTP."})
final class ServerBench implements Callable<Integer> {
    static final double FLIGHT_TARGET_RATIO = 0.6;
    static final double HTTP_ARROW_TARGET_RATIO = 0.5;
    static final double SMALL_QUERIES_TARGET = 2_000;
    private static final String USER = "bench";
    private static final String PASSWORD = "bench-password";
    private static final String QUERY = "SELECT * FROM bench_rows";
    private static final String ARROW = "application/vnd.apache.arrow.stream";

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--rows", description = "Rows in the table (default ${DEFAULT-VALUE}).", defaultValue = "10000000")
    long rows;

    @Option(names = "--clients", description = "Concurrent clients for the one-row queries (default ${DEFAULT-VALUE}).", defaultValue = "32")
    int clients;

    @Option(names = "--seconds", description = "How long the clients issue one-row queries (default ${DEFAULT-VALUE}).", defaultValue = "10")
    int seconds;

    @Option(names = "--warmup-seconds", description = "How long the clients issue one-row queries before the measured window (default ${DEFAULT-VALUE}).",
            defaultValue = "3")
    int warmupSeconds;

    @Option(names = "--small-paths", split = ",", description = "The client paths of the one-row queries: jdbc, flight, http (default ${DEFAULT-VALUE}).",
            defaultValue = "jdbc,flight,http")
    List<String> smallPathNames;

    @Option(names = "--fetch-size", description = "Rows per Arrow batch, the server's fetch_size and the in-process export's "
            + "(default ${DEFAULT-VALUE}, the server's default).", defaultValue = "" + ServerConfig.DEFAULT_FETCH_SIZE)
    int fetchSize;

    @Option(names = "--warmup-reads", description = "Untimed reads of the table per path before the timed ones, so the server's and the "
            + "client's code is compiled as in a long-running server (default ${DEFAULT-VALUE}).", defaultValue = "4")
    int warmupReads;

    @Option(names = "--reads", description = "Timed reads of the table per path; the median is reported (default ${DEFAULT-VALUE}).",
            defaultValue = "5")
    int reads;

    @Option(names = "--json", description = "Print one JSON object instead of a table.")
    boolean json;

    @Override
    public Integer call() throws Exception {
        List<SmallQueryClients.Protocol> smallPaths = new java.util.ArrayList<>();
        for (String name : smallPathNames) {
            try {
                smallPaths.add(SmallQueryClients.Protocol.valueOf(name.trim().toUpperCase(java.util.Locale.ROOT)));
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--small-paths takes jdbc, flight and http, not '" + name + "'");
            }
        }
        Path warehouse = Files.createTempDirectory("mallard-bench-server");
        Path script = warehouse.resolve("startup.sql");
        Files.writeString(script, "CREATE TABLE bench_rows AS SELECT range AS id, random() AS x, 'name-' || (range % 1000) AS s,"
                + " TIMESTAMP '2024-01-01' + to_seconds(range) AS ts FROM range(" + rows + ");");
        ServerConfig config = new ServerConfig(warehouse, Optional.empty(), "127.0.0.1", 0, ServerConfig.DEFAULT_HTTP_MAX_BODY_BYTES, 0, Optional.empty(),
                List.of(new UserAccount(USER, PasswordHash.of(PASSWORD))), AccessMode.COMPLETE, Optional.empty(),
                60, ServerConfig.SessionLimits.DEFAULT, fetchSize, 0, Optional.of(script));
        ObjectNode result = new ObjectMapper().createObjectNode();
        try (MallardServer server = MallardServer.start(config)) {
            double inProcess = median(() -> inProcess(server));
            double flight = median(() -> flight(server));
            double jdbc = median(() -> jdbc(server));
            double httpArrow = median(() -> http(server, ARROW, "zstd", HttpClient.Version.HTTP_1_1));
            double http2Arrow = median(() -> http(server, ARROW, "zstd", HttpClient.Version.HTTP_2));
            double httpArrowNone = median(() -> http(server, ARROW, "none", HttpClient.Version.HTTP_1_1));
            double httpJsonl = median(() -> http(server, "application/jsonl", "zstd", HttpClient.Version.HTTP_1_1));
            result.put("rows", rows);
            result.put("inprocess_rows_per_s", Math.round(inProcess));
            result.put("flight_rows_per_s", Math.round(flight));
            result.put("flight_jdbc_rows_per_s", Math.round(jdbc));
            result.put("http_arrow_rows_per_s", Math.round(httpArrow));
            result.put("http2_arrow_rows_per_s", Math.round(http2Arrow));
            result.put("http_arrow_uncompressed_rows_per_s", Math.round(httpArrowNone));
            result.put("http_jsonl_rows_per_s", Math.round(httpJsonl));
            for (SmallQueryClients.Protocol path : smallPaths) {
                SmallQueryClients.Result small = SmallQueryClients.measure(path, "127.0.0.1", server.flightPort(), server.httpPort(), USER, PASSWORD,
                        clients, warmupSeconds, seconds);
                result.put(smallKey("small_queries", path, "per_s"), Math.round(small.perSecond()));
                result.put(smallKey("small_query", path, "p99_ms"), Math.round(small.p99Millis() * 100) / 100.0);
                result.put(smallKey("small_query", path, "server_cpu_us"), Math.round(SmallQueryClients.Result.micros(small.serverCpuNanos(), small.queries())));
                result.put(smallKey("small_query", path, "client_cpu_us"), Math.round(SmallQueryClients.Result.micros(small.clientCpuNanos(), small.queries())));
            }
            result.put("clients", clients);
            result.put("cores", Runtime.getRuntime().availableProcessors());
        } finally {
            try (var files = Files.walk(warehouse)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            }
        }
        if (json) {
            spec.commandLine().getOut().println(result.toString());
            return 0;
        }
        var out = spec.commandLine().getOut();
        double inProcess = result.get("inprocess_rows_per_s").asDouble();
        out.printf("%-40s %14s %14s %8s%n", "measure (" + rows + " rows)", "value", "target", "ratio");
        out.printf("%-40s %14.0f %14s %8s%n", "in-process arrowExportStream rows/s", inProcess, "-", "-");
        row(out, "Flight DoGet rows/s", result.get("flight_rows_per_s").asDouble(), FLIGHT_TARGET_RATIO * inProcess);
        timesInProcess(out, result.get("flight_rows_per_s").asDouble(), inProcess);
        out.printf("%-40s %14.0f %14s %8s%n", "Flight SQL JDBC driver rows/s", result.get("flight_jdbc_rows_per_s").asDouble(), "-", "-");
        row(out, "HTTP Arrow rows/s", result.get("http_arrow_rows_per_s").asDouble(), HTTP_ARROW_TARGET_RATIO * inProcess);
        timesInProcess(out, result.get("http_arrow_rows_per_s").asDouble(), inProcess);
        row(out, "HTTP/2 (h2c) Arrow rows/s", result.get("http2_arrow_rows_per_s").asDouble(), HTTP_ARROW_TARGET_RATIO * inProcess);
        timesInProcess(out, result.get("http2_arrow_rows_per_s").asDouble(), inProcess);
        out.printf("%-40s %14.0f %14s %8s%n", "HTTP JSONL rows/s", result.get("http_jsonl_rows_per_s").asDouble(), "-", "-");
        out.printf("%-40s %14.0f %14s %8s%n", "HTTP Arrow uncompressed rows/s", result.get("http_arrow_uncompressed_rows_per_s").asDouble(), "-", "-");
        for (SmallQueryClients.Protocol path : smallPaths) {
            String name = clients + " " + path.name().toLowerCase(java.util.Locale.ROOT) + " clients, one-row queries/s";
            row(out, name, result.get(smallKey("small_queries", path, "per_s")).asDouble(), SMALL_QUERIES_TARGET);
            out.printf("%-40s %14.2f %14s %8s%n", "  p99 ms", result.get(smallKey("small_query", path, "p99_ms")).asDouble(), "-", "-");
            out.printf("%-40s %14d %14s %8s%n", "  server CPU us/query", result.get(smallKey("small_query", path, "server_cpu_us")).asLong(), "-", "-");
            out.printf("%-40s %14d %14s %8s%n", "  client CPU us/query", result.get(smallKey("small_query", path, "client_cpu_us")).asLong(), "-", "-");
        }
        out.println("ratio is the value over its target: >= 1.00 meets it (Flight >= 0.6 x in-process, HTTP Arrow >= 0.5 x in-process)");
        return 0;
    }

    /** The JSON key of a one-row query figure: the JDBC path keeps the names it had before the other paths came. */
    private static String smallKey(String prefix, SmallQueryClients.Protocol path, String suffix) {
        return path == SmallQueryClients.Protocol.JDBC ? prefix + "_" + suffix
                : prefix + "_" + path.name().toLowerCase(java.util.Locale.ROOT) + "_" + suffix;
    }

    /** The line under a large read's: the value as a multiple of the in-process export, the figure its target is stated in. */
    private static void timesInProcess(java.io.PrintWriter out, double value, double inProcess) {
        out.printf("%-40s %14.2f %14s %8s%n", "  x in-process", value / inProcess, "-", "-");
    }

    private static void row(java.io.PrintWriter out, String name, double value, double target) {
        out.printf("%-40s %14.0f %14.0f %8.2f%n", name, value, target, value / target);
    }

    /**
     * Rows/s of the median of {@code --reads} timed reads, after {@code --warmup-reads} untimed ones: on two cores the JIT
     * needs several reads of 10M rows to compile a path's code (a DoGet read 13-16M rows/s on its second read and 28-32M
     * from about its fifteenth).
     */
    private double median(Callable<Long> read) throws Exception {
        double[] perSecond = new double[Math.max(1, reads)];
        for (int run = 0; run < warmupReads + perSecond.length; run++) {
            long start = System.nanoTime();
            long count = read.call();
            double elapsed = (System.nanoTime() - start) / 1e9;
            if (count != rows) {
                throw new IllegalStateException("read " + count + " rows, expected " + rows);
            }
            if (run >= warmupReads) {
                perSecond[run - warmupReads] = count / elapsed;
            }
        }
        java.util.Arrays.sort(perSecond);
        return perSecond[perSecond.length / 2];
    }

    private long inProcess(MallardServer server) throws Exception {
        // The same table through a DuckDB connection of the same process: the limit the listeners are compared to.
        try (Connection connection = server.engineSession(); Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery(QUERY);
                BufferAllocator allocator = new RootAllocator();
                ArrowReader reader = ArrowExport.export(rs, allocator, fetchSize)) {
            long count = 0;
            while (reader.loadNextBatch()) {
                count += reader.getVectorSchemaRoot().getRowCount();
            }
            return count;
        }
    }

    private long flight(MallardServer server) throws Exception {
        try (BufferAllocator allocator = new RootAllocator();
                FlightClient client = FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", server.flightPort())).build()) {
            CredentialCallOption bearer = client.authenticateBasicToken(USER, PASSWORD).orElseThrow();
            FlightSqlClient sql = new FlightSqlClient(client);
            FlightInfo info = sql.execute(QUERY, bearer);
            long count = 0;
            try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), bearer)) {
                while (stream.next()) {
                    count += stream.getRoot().getRowCount();
                }
            }
            return count;
        }
    }

    private long jdbc(MallardServer server) throws Exception {
        try (Connection connection = jdbcConnection(server); Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery(QUERY)) {
            long count = 0;
            while (rs.next()) {
                count++;
            }
            return count;
        }
    }

    private static Connection jdbcConnection(MallardServer server) throws Exception {
        Properties properties = new Properties();
        properties.put("user", USER);
        properties.put("password", PASSWORD);
        return DriverManager.getConnection("jdbc:arrow-flight-sql://127.0.0.1:" + server.flightPort() + "/?useEncryption=false", properties);
    }

    /** One query over HTTP: 1.1 for the recorded HTTP figures (as before the server spoke HTTP/2), 2 for its own line. */
    private long http(MallardServer server, String accept, String arrowCompression, HttpClient.Version version) throws Exception {
        HttpClient http = HttpClient.newBuilder().version(version).build();
        String basic = "Basic " + Base64.getEncoder().encodeToString((USER + ":" + PASSWORD).getBytes(StandardCharsets.UTF_8));
        HttpResponse<InputStream> response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort()
                        + "/v1/query?q=" + URLEncoder.encode(QUERY, StandardCharsets.UTF_8)))
                .header("Authorization", basic).header("Accept", accept).header("x-dd-arrow-compression", arrowCompression).build(),
                HttpResponse.BodyHandlers.ofInputStream());
        if (response.statusCode() != 200) {
            throw new IllegalStateException("HTTP " + response.statusCode() + ": " + new String(response.body().readAllBytes(), StandardCharsets.UTF_8));
        }
        try (InputStream body = response.body()) {
            if (accept.equals("application/jsonl")) {
                long lines = 0;
                byte[] buffer = new byte[1 << 16];
                for (int read; (read = body.read(buffer)) > 0; ) {
                    for (int i = 0; i < read; i++) {
                        if (buffer[i] == '\n') {
                            lines++;
                        }
                    }
                }
                return lines;
            }
            try (BufferAllocator allocator = new RootAllocator();
                    ArrowStreamReader reader = new ArrowStreamReader(body, allocator, org.apache.arrow.compression.CommonsCompressionFactory.INSTANCE)) {
                long count = 0;
                while (reader.loadNextBatch()) {
                    count += reader.getVectorSchemaRoot().getRowCount();
                }
                return count;
            }
        }
    }
}
