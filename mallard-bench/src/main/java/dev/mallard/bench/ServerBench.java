// SPDX-License-Identifier: Apache-2.0
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
import dev.mallard.server.rls.RlsClaims;
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
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.Callable;
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
    "Rows/s of one table read in-process and from a server, and one-row query rates under concurrent clients.",
    "The table (BIGINT, DOUBLE, VARCHAR, TIMESTAMP) is read in-process, through Flight DoGet, the Flight SQL JDBC driver,",
    "HTTP Arrow and HTTP JSONL from a server in this JVM; then concurrent clients in a child JVM issue one-row queries",
    "over JDBC, Flight SQL and HTTP."})
final class ServerBench implements Callable<Integer> {
    static final double FLIGHT_TARGET_RATIO = 0.6;
    static final double HTTP_ARROW_TARGET_RATIO = 0.5;
    static final double SMALL_QUERIES_TARGET = 2_000;
    private static final String USER = "bench";
    private static final String PASSWORD = "bench-password";
    private static final String QUERY = "SELECT * FROM bench_rows";
    private static final String ARROW = "application/vnd.apache.arrow.stream";
    static final double RLS_TARGET_RATIO = 0.9;
    private static final String TENANT = "tenant";
    /** The row filter of the RESTRICT_READ_ONLY phase's user, and the one its hand-written queries spell out: half the rows. */
    static final String RLS_FILTER = "id % 2 = 0";
    /** The one-row query of that phase: one row of the table, found by its id (DuckDB skips the row groups the id is not in). */
    private static final String RLS_ONE_ROW = "SELECT id // 2 AS n FROM bench_rows WHERE id = 2 * {n}";

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

    @Option(names = "--rls-paths", split = ",", description = "The client paths of the RESTRICT_READ_ONLY phase's one-row queries: jdbc, flight, "
            + "http, or none (default ${DEFAULT-VALUE}).", defaultValue = "http")
    List<String> rlsPathNames;

    @Option(names = "--rls-reads", description = "Timed rounds of the RESTRICT_READ_ONLY phase's filtered read, 0 to skip it (default ${DEFAULT-VALUE}).",
            defaultValue = "5")
    int rlsReads;

    @Option(names = "--json", description = "Print one JSON object instead of a table.")
    boolean json;

    @Override
    public Integer call() throws Exception {
        List<SmallQueryClients.Protocol> smallPaths = protocols(smallPathNames, "--small-paths");
        List<SmallQueryClients.Protocol> rlsPaths = protocols(rlsPathNames, "--rls-paths");
        Path warehouse = Files.createTempDirectory("mallard-bench-server");
        Path script = warehouse.resolve("startup.sql");
        Files.writeString(script, "CREATE TABLE bench_rows AS SELECT range AS id, random() AS x, 'name-' || (range % 1000) AS s,"
                + " TIMESTAMP '2024-01-01' + to_seconds(range) AS ts FROM range(" + rows + ");");
        ServerConfig config = new ServerConfig(warehouse, Optional.empty(), "127.0.0.1", 0, ServerConfig.DEFAULT_HTTP_MAX_BODY_BYTES, 0, Optional.empty(),
                List.of(new UserAccount(USER, PasswordHash.of(PASSWORD))), AccessMode.COMPLETE, Optional.empty(),
                60, ServerConfig.SessionLimits.DEFAULT, fetchSize, 0, Optional.of(script));
        Path rlsWarehouse = Files.createDirectories(warehouse.resolve("rls"));
        // The same table on a RESTRICT_READ_ONLY server whose one user reads it through a row filter.
        ServerConfig rlsConfig = new ServerConfig(rlsWarehouse, Optional.empty(), "127.0.0.1", 0, ServerConfig.DEFAULT_HTTP_MAX_BODY_BYTES, 0,
                Optional.empty(), List.of(new UserAccount(TENANT, PasswordHash.of(PASSWORD), Map.of(RlsClaims.TABLE, "bench_rows",
                        RlsClaims.FILTER, RLS_FILTER), List.of())), AccessMode.RESTRICT_READ_ONLY, Optional.empty(),
                60, ServerConfig.SessionLimits.DEFAULT, fetchSize, 0, Optional.of(script));
        ObjectNode result = new ObjectMapper().createObjectNode();
        result.put("load_average_start", ProcessCpu.loadAverage());
        try (MallardServer server = MallardServer.start(config)) {
            Rounds doGet;
            try (FlightReadClient client = FlightReadClient.start("127.0.0.1", server.flightPort(), USER, PASSWORD, QUERY)) {
                doGet = rounds(() -> inProcess(server), client, rows, reads);
            }
            double inProcess = doGet.baseline().rowsPerSecond();
            double jdbc = median(() -> jdbc(server));
            double httpArrow = median(() -> http(server, ARROW, "zstd", HttpClient.Version.HTTP_1_1));
            double http2Arrow = median(() -> http(server, ARROW, "zstd", HttpClient.Version.HTTP_2));
            double httpArrowNone = median(() -> http(server, ARROW, "none", HttpClient.Version.HTTP_1_1));
            double httpJsonl = median(() -> http(server, "application/jsonl", "zstd", HttpClient.Version.HTTP_1_1));
            result.put("rows", rows);
            result.put("inprocess_rows_per_s", Math.round(inProcess));
            result.put("inprocess_cpu_ns_per_row", round2(doGet.baseline().cpuNanosPerRow()));
            result.put("flight_rows_per_s", Math.round(doGet.measured().rowsPerSecond()));
            result.put("flight_x_inprocess", round2(doGet.ratio()));
            result.put("flight_server_cpu_ns_per_row", round2(doGet.measured().cpuNanosPerRow()));
            result.put("flight_client_cpu_ns_per_row", round2(doGet.clientCpuNanosPerRow()));
            result.put("flight_jdbc_rows_per_s", Math.round(jdbc));
            result.put("http_arrow_rows_per_s", Math.round(httpArrow));
            result.put("http2_arrow_rows_per_s", Math.round(http2Arrow));
            result.put("http_arrow_uncompressed_rows_per_s", Math.round(httpArrowNone));
            result.put("http_jsonl_rows_per_s", Math.round(httpJsonl));
            for (SmallQueryClients.Protocol path : smallPaths) {
                SmallQueryClients.Result small = SmallQueryClients.measure(path, "127.0.0.1", server.flightPort(), server.httpPort(), USER, PASSWORD,
                        clients, warmupSeconds, seconds);
                putSmall(result, "", path, small);
            }
            if (!rlsPaths.isEmpty() || rlsReads > 0) {
                try (MallardServer rls = MallardServer.start(rlsConfig)) {
                    rowLevelSecurity(result, server, rls, rlsPaths);
                }
            }
            result.put("clients", clients);
            result.put("cores", Runtime.getRuntime().availableProcessors());
        } finally {
            try (var files = Files.walk(warehouse)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            }
        }
        result.put("load_average_end", ProcessCpu.loadAverage());
        if (json) {
            spec.commandLine().getOut().println(result.toString());
            return 0;
        }
        print(spec.commandLine().getOut(), result, smallPaths, rlsPaths);
        return 0;
    }

    /**
     * RESTRICT_READ_ONLY against the same queries with the filter written by hand on the COMPLETE server: the filtered
     * read of the whole table through DoGet, rounds alternating the two, then the one-row queries of each path.
     */
    private void rowLevelSecurity(ObjectNode result, MallardServer server, MallardServer rls, List<SmallQueryClients.Protocol> paths) throws Exception {
        long expected = (rows + 1) / 2;
        if (rlsReads > 0) {
            Rounds read;
            try (FlightReadClient hand = FlightReadClient.start("127.0.0.1", server.flightPort(), USER, PASSWORD, QUERY + " WHERE " + RLS_FILTER);
                    FlightReadClient filtered = FlightReadClient.start("127.0.0.1", rls.flightPort(), TENANT, PASSWORD, QUERY)) {
                read = rounds(() -> {
                    FlightReadClient.Read once = hand.read();
                    return new Sample(once.rows(), once.nanos(), once.serverCpuNanos());
                }, filtered, expected, rlsReads);
            }
            result.put("rls_read_rows", expected);
            result.put("rls_hand_read_rows_per_s", Math.round(read.baseline().rowsPerSecond()));
            result.put("rls_read_rows_per_s", Math.round(read.measured().rowsPerSecond()));
            result.put("rls_read_x_hand", round2(read.ratio()));
            result.put("rls_hand_read_server_cpu_ns_per_row", round2(read.baseline().cpuNanosPerRow()));
            result.put("rls_read_server_cpu_ns_per_row", round2(read.measured().cpuNanosPerRow()));
        }
        for (SmallQueryClients.Protocol path : paths) {
            SmallQueryClients.Result hand = SmallQueryClients.measure(path, "127.0.0.1", server.flightPort(), server.httpPort(), USER, PASSWORD,
                    clients, warmupSeconds, seconds, RLS_ONE_ROW + " AND (" + RLS_FILTER + ")");
            SmallQueryClients.Result filtered = SmallQueryClients.measure(path, "127.0.0.1", rls.flightPort(), rls.httpPort(), TENANT, PASSWORD,
                    clients, warmupSeconds, seconds, RLS_ONE_ROW);
            putSmall(result, "rls_hand_", path, hand);
            putSmall(result, "rls_", path, filtered);
            result.put("rls_" + path.name().toLowerCase(java.util.Locale.ROOT) + "_x_hand", round2(filtered.perSecond() / hand.perSecond()));
        }
    }

    private List<SmallQueryClients.Protocol> protocols(List<String> names, String option) {
        List<SmallQueryClients.Protocol> paths = new java.util.ArrayList<>();
        for (String name : names) {
            if (name.isBlank() || name.equals("none")) {
                continue;
            }
            try {
                paths.add(SmallQueryClients.Protocol.valueOf(name.trim().toUpperCase(java.util.Locale.ROOT)));
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), option + " takes jdbc, flight, http or none, not '" + name + "'");
            }
        }
        return paths;
    }

    private static void putSmall(ObjectNode result, String prefix, SmallQueryClients.Protocol path, SmallQueryClients.Result small) {
        result.put(prefix + smallKey("small_queries", path, "per_s"), Math.round(small.perSecond()));
        result.put(prefix + smallKey("small_query", path, "p99_ms"), Math.round(small.p99Millis() * 100) / 100.0);
        result.put(prefix + smallKey("small_query", path, "server_cpu_us"), Math.round(SmallQueryClients.Result.micros(small.serverCpuNanos(), small.queries())));
        result.put(prefix + smallKey("small_query", path, "client_cpu_us"), Math.round(SmallQueryClients.Result.micros(small.clientCpuNanos(), small.queries())));
    }

    private static double round2(double value) {
        return Math.round(value * 100) / 100.0;
    }

    private void print(java.io.PrintWriter out, ObjectNode result, List<SmallQueryClients.Protocol> smallPaths, List<SmallQueryClients.Protocol> rlsPaths) {
        double inProcess = result.get("inprocess_rows_per_s").asDouble();
        double loadStart = result.get("load_average_start").asDouble();
        double loadEnd = result.get("load_average_end").asDouble();
        int cores = result.get("cores").asInt();
        out.printf("load average %.1f at the start, %.1f at the end, %d cores: %s%n", loadStart, loadEnd, cores,
                Math.max(loadStart, loadEnd) > cores ? "LOADED (other work shares the cores; compare the ratios and CPU per unit, not the rates)"
                        : "quiet");
        out.printf("%-44s %14s %14s %8s%n", "measure (" + rows + " rows)", "value", "target", "ratio");
        out.printf("%-44s %14.0f %14s %8s%n", "in-process arrowExportStream rows/s", inProcess, "-", "-");
        out.printf("%-44s %14.2f %14s %8s%n", "  CPU ns/row", result.get("inprocess_cpu_ns_per_row").asDouble(), "-", "-");
        double flightX = result.get("flight_x_inprocess").asDouble();
        out.printf("%-44s %14.0f %14.0f %8.2f%n", "Flight DoGet rows/s (client in a child JVM)", result.get("flight_rows_per_s").asDouble(),
                FLIGHT_TARGET_RATIO * inProcess, flightX / FLIGHT_TARGET_RATIO);
        out.printf("%-44s %14.2f %14.2f %8.2f%n", "  x in-process (median of the rounds)", flightX, FLIGHT_TARGET_RATIO, flightX / FLIGHT_TARGET_RATIO);
        out.printf("%-44s %14.2f %14s %8s%n", "  server CPU ns/row", result.get("flight_server_cpu_ns_per_row").asDouble(), "-", "-");
        out.printf("%-44s %14.2f %14s %8s%n", "    x in-process CPU ns/row", result.get("flight_server_cpu_ns_per_row").asDouble()
                / result.get("inprocess_cpu_ns_per_row").asDouble(), "-", "-");
        out.printf("%-44s %14.2f %14s %8s%n", "  client CPU ns/row", result.get("flight_client_cpu_ns_per_row").asDouble(), "-", "-");
        out.printf("%-44s %14.0f %14s %8s%n", "Flight SQL JDBC driver rows/s", result.get("flight_jdbc_rows_per_s").asDouble(), "-", "-");
        row(out, "HTTP Arrow rows/s", result.get("http_arrow_rows_per_s").asDouble(), HTTP_ARROW_TARGET_RATIO * inProcess);
        timesInProcess(out, result.get("http_arrow_rows_per_s").asDouble(), inProcess);
        row(out, "HTTP/2 (h2c) Arrow rows/s", result.get("http2_arrow_rows_per_s").asDouble(), HTTP_ARROW_TARGET_RATIO * inProcess);
        timesInProcess(out, result.get("http2_arrow_rows_per_s").asDouble(), inProcess);
        out.printf("%-44s %14.0f %14s %8s%n", "HTTP JSONL rows/s", result.get("http_jsonl_rows_per_s").asDouble(), "-", "-");
        out.printf("%-44s %14.0f %14s %8s%n", "HTTP Arrow uncompressed rows/s", result.get("http_arrow_uncompressed_rows_per_s").asDouble(), "-", "-");
        for (SmallQueryClients.Protocol path : smallPaths) {
            printSmall(out, result, "", clients + " " + path.name().toLowerCase(java.util.Locale.ROOT) + " clients, one-row queries/s", path,
                    SMALL_QUERIES_TARGET);
        }
        if (result.has("rls_read_rows_per_s")) {
            double x = result.get("rls_read_x_hand").asDouble();
            out.printf("%-44s %14.0f %14s %8s%n", "RLS: hand-filtered DoGet rows/s (" + result.get("rls_read_rows").asLong() + " rows)",
                    result.get("rls_hand_read_rows_per_s").asDouble(), "-", "-");
            out.printf("%-44s %14.2f %14s %8s%n", "  server CPU ns/row", result.get("rls_hand_read_server_cpu_ns_per_row").asDouble(), "-", "-");
            out.printf("%-44s %14.0f %14s %8s%n", "RLS: RESTRICT_READ_ONLY DoGet rows/s", result.get("rls_read_rows_per_s").asDouble(), "-", "-");
            out.printf("%-44s %14.2f %14s %8s%n", "  server CPU ns/row", result.get("rls_read_server_cpu_ns_per_row").asDouble(), "-", "-");
            out.printf("%-44s %14.2f %14.2f %8.2f%n", "  x hand-filtered (median of the rounds)", x, RLS_TARGET_RATIO, x / RLS_TARGET_RATIO);
        }
        for (SmallQueryClients.Protocol path : rlsPaths) {
            String name = path.name().toLowerCase(java.util.Locale.ROOT);
            printSmall(out, result, "rls_hand_", "RLS: " + name + " one-row q/s, filter by hand", path, 0);
            printSmall(out, result, "rls_", "RLS: " + name + " one-row q/s, RESTRICT_READ_ONLY", path, 0);
            double x = result.get("rls_" + name + "_x_hand").asDouble();
            out.printf("%-44s %14.2f %14.2f %8.2f%n", "  x hand-filtered", x, RLS_TARGET_RATIO, x / RLS_TARGET_RATIO);
            out.printf("%-44s %14.2f %14s %8s%n", "  server CPU per query, x hand-filtered",
                    result.get("rls_" + smallKey("small_query", path, "server_cpu_us")).asDouble()
                            / result.get("rls_hand_" + smallKey("small_query", path, "server_cpu_us")).asDouble(), "-", "-");
        }
        out.println("ratio is the value over its target: >= 1.00 meets it (Flight >= 0.6 x in-process, HTTP Arrow >= 0.5 x in-process, "
                + "one-row queries >= 2,000/s, RESTRICT_READ_ONLY >= 0.9 x the filter by hand)");
    }

    private void printSmall(java.io.PrintWriter out, ObjectNode result, String prefix, String name, SmallQueryClients.Protocol path, double target) {
        double perSecond = result.get(prefix + smallKey("small_queries", path, "per_s")).asDouble();
        if (target > 0) {
            row(out, name, perSecond, target);
        } else {
            out.printf("%-44s %14.0f %14s %8s%n", name, perSecond, "-", "-");
        }
        out.printf("%-44s %14.2f %14s %8s%n", "  p99 ms", result.get(prefix + smallKey("small_query", path, "p99_ms")).asDouble(), "-", "-");
        out.printf("%-44s %14d %14s %8s%n", "  server CPU us/query", result.get(prefix + smallKey("small_query", path, "server_cpu_us")).asLong(), "-", "-");
        out.printf("%-44s %14d %14s %8s%n", "  client CPU us/query", result.get(prefix + smallKey("small_query", path, "client_cpu_us")).asLong(), "-", "-");
    }

    /** One read: rows, wall time, and the CPU time of the JVM that served it. */
    record Sample(long rows, long nanos, long cpuNanos) {}

    /** A reader of the baseline side of a round. */
    @FunctionalInterface
    interface Baseline {
        Sample read() throws Exception;
    }

    /** The medians of a phase's rounds: the baseline's figures, the measured reader's, and the median of the per-round ratios. */
    record Rounds(Figures baseline, Figures measured, double ratio, double clientCpuNanosPerRow) {}

    /** Median rows/s and CPU time per row of one side. */
    record Figures(double rowsPerSecond, double cpuNanosPerRow) {}

    /**
     * Alternates the baseline with a read through the child client, {@code --warmup-reads} rounds untimed and then
     * {@code timed} rounds; each round's ratio (measured rows/s over baseline rows/s) compares two reads made seconds
     * apart, so a load that changes between rounds moves both sides of a ratio alike. Medians over the rounds.
     */
    private Rounds rounds(Baseline baseline, FlightReadClient client, long expected, int timed) throws Exception {
        int n = Math.max(1, timed);
        double[] baseRate = new double[n];
        double[] baseCpu = new double[n];
        double[] rate = new double[n];
        double[] cpu = new double[n];
        double[] clientCpu = new double[n];
        double[] ratio = new double[n];
        for (int round = 0; round < warmupReads + n; round++) {
            Sample base = baseline.read();
            FlightReadClient.Read read = client.read();
            if (base.rows() != expected || read.rows() != expected) {
                throw new IllegalStateException("read " + base.rows() + " and " + read.rows() + " rows, expected " + expected);
            }
            if (round >= warmupReads) {
                int i = round - warmupReads;
                baseRate[i] = base.rows() / (base.nanos() / 1e9);
                baseCpu[i] = (double) base.cpuNanos() / base.rows();
                rate[i] = read.rowsPerSecond();
                cpu[i] = (double) read.serverCpuNanos() / read.rows();
                clientCpu[i] = (double) read.clientCpuNanos() / read.rows();
                ratio[i] = rate[i] / baseRate[i];
            }
        }
        return new Rounds(new Figures(median(baseRate), median(baseCpu)), new Figures(median(rate), median(cpu)), median(ratio), median(clientCpu));
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        java.util.Arrays.sort(sorted);
        return sorted[sorted.length / 2];
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

    private Sample inProcess(MallardServer server) throws Exception {
        // The same table through a DuckDB connection of the same process: the limit the listeners are compared to.
        long cpuStart = ProcessCpu.selfNanos();
        long start = System.nanoTime();
        try (Connection connection = server.engineSession(); Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery(QUERY);
                BufferAllocator allocator = new RootAllocator();
                ArrowReader reader = ArrowExport.export(rs, allocator, fetchSize)) {
            long count = 0;
            while (reader.loadNextBatch()) {
                count += reader.getVectorSchemaRoot().getRowCount();
            }
            return new Sample(count, System.nanoTime() - start, ProcessCpu.between(cpuStart, ProcessCpu.selfNanos()));
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
