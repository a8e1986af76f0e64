// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.grpc.CredentialCallOption;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * The one-row query clients of {@code bench server}, run in a JVM of their own so that the server's JVM does only
 * the server's work and each side's CPU time can be told apart. Each client is one session issuing
 * {@code SELECT <n> AS n} back to back over one of three paths:
 *
 * <ul>
 *   <li>{@code jdbc}: the Flight SQL JDBC driver, {@code Statement.executeQuery}; three RPCs a query (create prepared
 *       statement, GetFlightInfo, DoGet), as the driver runs every statement prepared (18.3 closes only a Statement's
 *       last prepared statement, when the Statement closes);
 *   <li>{@code flight}: Arrow's {@code FlightSqlClient}, {@code execute} and {@code getStream}; two RPCs;
 *   <li>{@code http}: {@code GET /v1/query} with a bearer token and {@code Accept: application/jsonl}; one request.
 * </ul>
 *
 * <p>The child prints {@code measuring} when its measured window opens (after a warm-up) and then one JSON object:
 * queries, seconds, p99 latency and the CPU time the clients' JVM used in the window.
 */
final class SmallQueryClients {
    static final String MEASURING = "measuring";
    private static final ObjectMapper JSON = new ObjectMapper();

    enum Protocol {
        JDBC, FLIGHT, HTTP
    }

    /** What one run measured, with the CPU time each JVM used in the measured window. */
    record Result(long queries, double seconds, double p99Millis, long clientCpuNanos, long serverCpuNanos) {
        double perSecond() {
            return queries / seconds;
        }

        /** CPU time per query in microseconds, or -1 when the platform does not say. */
        static double micros(long cpuNanos, long queries) {
            return cpuNanos < 0 || queries == 0 ? -1 : cpuNanos / 1e3 / queries;
        }
    }

    private SmallQueryClients() {}

    /**
     * Starts the clients in a child JVM against a server in this JVM and waits for their report; this JVM's CPU time
     * in the child's measured window is the server's.
     */
    static Result measure(Protocol path, String host, int flightPort, int httpPort, String user, String password, int clients,
            int warmupSeconds, int seconds) throws Exception {
        return measure(path, host, flightPort, httpPort, user, password, clients, warmupSeconds, seconds, ONE_ROW);
    }

    /** The query of the one-row phases: {@code {n}} stands for the number each query answers as its one column {@code n}. */
    static final String ONE_ROW = "SELECT {n} AS n";

    /**
     * As {@link #measure(Protocol, String, int, int, String, String, int, int, int)}, each query {@code template} with
     * {@code {n}} replaced; it must answer one row, {@code n}.
     */
    static Result measure(Protocol path, String host, int flightPort, int httpPort, String user, String password, int clients,
            int warmupSeconds, int seconds, String template) throws Exception {
        List<String> command = childJava(SmallQueryClients.class);
        command.addAll(List.of(path.name(), host, String.valueOf(flightPort),
                String.valueOf(httpPort), user, password, String.valueOf(clients), String.valueOf(warmupSeconds), String.valueOf(seconds), template));
        Process child = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            child.getOutputStream().close();
            long serverStart = -1;
            for (String line; (line = out.readLine()) != null; ) {
                if (line.equals(MEASURING)) {
                    serverStart = ProcessCpu.selfNanos();
                } else if (line.startsWith("{")) {
                    long server = ProcessCpu.between(serverStart, ProcessCpu.selfNanos());
                    JsonNode report = JSON.readTree(line);
                    return new Result(report.get("queries").asLong(), report.get("seconds").asDouble(), report.get("p99_ms").asDouble(),
                            report.get("cpu_ns").asLong(), server);
                }
            }
            throw new IllegalStateException("the " + path + " clients exited with " + child.waitFor() + " and no report; see their stderr above");
        } finally {
            if (!child.waitFor(30, TimeUnit.SECONDS)) {
                child.destroyForcibly();
            }
        }
    }

    /** {@code java} with the launcher's flags and MALLARD_JAVA_OPTS (no JFR recording), running {@code main} from the bench's jar. */
    static List<String> childJava(Class<?> main) {
        Path benchJar;
        try {
            benchJar = Path.of(SmallQueryClients.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException("cannot locate mallard-bench.jar", e);
        }
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-opens=java.base/java.nio=ALL-UNNAMED", "--enable-native-access=ALL-UNNAMED"));
        if (Runtime.version().feature() >= 23) {
            command.add("--sun-misc-unsafe-memory-access=allow");
        }
        command.addAll(ChildJvm.mallardJavaOpts().stream().filter(option -> !option.startsWith("-XX:StartFlightRecording")).toList());
        command.addAll(List.of("-cp", benchJar.toString(), main.getName()));
        return command;
    }

    public static void main(String[] args) {
        int exit = 0;
        try {
            Protocol path = Protocol.valueOf(args[0].toUpperCase(Locale.ROOT));
            ObjectNode report = run(path, args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3]), args[4], args[5],
                    Integer.parseInt(args[6]), Integer.parseInt(args[7]), Integer.parseInt(args[8]), args.length > 9 ? args[9] : ONE_ROW);
            System.out.println(report);
        } catch (Exception e) {
            e.printStackTrace();
            exit = 1;
        }
        System.out.flush();
        // The Flight and JDBC clients leave non-daemon threads behind; the report is out.
        System.exit(exit);
    }

    /** A client: one query, run again and again. */
    private interface Client extends AutoCloseable {
        void query(int n) throws Exception;
    }

    private static ObjectNode run(Protocol path, String host, int flightPort, int httpPort, String user, String password, int clients,
            int warmupSeconds, int seconds, String template) throws Exception {
        List<Client> opened = new ArrayList<>();
        try (BufferAllocator allocator = new RootAllocator()) {
            try {
                for (int i = 0; i < clients; i++) {
                    opened.add(switch (path) {
                        case JDBC -> jdbc(host, flightPort, user, password, template);
                        case FLIGHT -> flight(allocator, host, flightPort, user, password, template);
                        case HTTP -> http(host, httpPort, user, password, template);
                    });
                }
                loop(opened, warmupSeconds);
                System.out.println(MEASURING);
                System.out.flush();
                long cpuStart = ProcessCpu.selfNanos();
                long start = System.nanoTime();
                long[] latencies = loop(opened, seconds);
                double elapsed = (System.nanoTime() - start) / 1e9;
                long cpu = ProcessCpu.between(cpuStart, ProcessCpu.selfNanos());
                ObjectNode report = JSON.createObjectNode();
                report.put("queries", latencies.length);
                report.put("seconds", elapsed);
                report.put("p99_ms", latencies.length == 0 ? 0
                        : latencies[(int) Math.min(latencies.length - 1, Math.ceil(latencies.length * 0.99) - 1)] / 1e6);
                report.put("cpu_ns", cpu);
                return report;
            } finally {
                for (Client client : opened) {
                    client.close();
                }
            }
        }
    }

    /** Every client queries back to back for {@code seconds}; the sorted latencies of all queries, in nanoseconds. */
    private static long[] loop(List<Client> clients, int seconds) throws Exception {
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        try (ExecutorService pool = Executors.newFixedThreadPool(clients.size())) {
            List<Future<long[]>> results = new ArrayList<>();
            for (Client client : clients) {
                results.add(pool.submit((Callable<long[]>) () -> {
                    long[] latencies = new long[1 << 12];
                    int n = 0;
                    while (System.nanoTime() < deadline) {
                        long begin = System.nanoTime();
                        client.query(n % 1000);
                        if (n == latencies.length) {
                            latencies = Arrays.copyOf(latencies, n * 2);
                        }
                        latencies[n++] = System.nanoTime() - begin;
                    }
                    return Arrays.copyOf(latencies, n);
                }));
            }
            List<long[]> all = new ArrayList<>();
            for (Future<long[]> result : results) {
                all.add(result.get());
            }
            long[] merged = all.stream().flatMapToLong(Arrays::stream).sorted().toArray();
            return merged;
        }
    }

    private static Client jdbc(String host, int port, String user, String password, String template) throws Exception {
        Properties properties = new Properties();
        properties.put("user", user);
        properties.put("password", password);
        Connection connection = DriverManager.getConnection("jdbc:arrow-flight-sql://" + host + ":" + port + "/?useEncryption=false", properties);
        Statement statement = connection.createStatement();
        return new Client() {
            @Override
            public void query(int n) throws Exception {
                try (ResultSet rs = statement.executeQuery(text(template, n))) {
                    if (!rs.next()) {
                        throw new IllegalStateException("no row");
                    }
                }
            }

            @Override
            public void close() throws Exception {
                try (connection; statement) {
                    // closed in reverse order
                }
            }
        };
    }

    private static Client flight(BufferAllocator allocator, String host, int port, String user, String password, String template) {
        FlightClient client = FlightClient.builder(allocator, Location.forGrpcInsecure(host, port)).build();
        CredentialCallOption bearer = client.authenticateBasicToken(user, password).orElseThrow();
        FlightSqlClient sql = new FlightSqlClient(client);
        return new Client() {
            @Override
            public void query(int n) throws Exception {
                FlightInfo info = sql.execute(text(template, n), bearer);
                long rows = 0;
                try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), bearer)) {
                    while (stream.next()) {
                        rows += stream.getRoot().getRowCount();
                    }
                }
                if (rows != 1) {
                    throw new IllegalStateException("read " + rows + " rows, expected 1");
                }
            }

            @Override
            public void close() throws Exception {
                client.close();
            }
        };
    }

    private static Client http(String host, int port, String user, String password, String template) throws IOException, InterruptedException {
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        String body = JSON.createObjectNode().put("username", user).put("password", password).toString();
        HttpResponse<String> login = http.send(HttpRequest.newBuilder(URI.create("http://" + host + ":" + port + "/v1/login"))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        if (login.statusCode() != 200) {
            throw new IllegalStateException("login answered " + login.statusCode() + ": " + login.body());
        }
        String bearer = "Bearer " + JSON.readTree(login.body()).get("accessToken").asText();
        return new Client() {
            @Override
            public void query(int n) throws Exception {
                HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://" + host + ":" + port + "/v1/query?q="
                                + URLEncoder.encode(text(template, n), StandardCharsets.UTF_8)))
                        .header("Authorization", bearer).header("Accept", "application/jsonl").build(), HttpResponse.BodyHandlers.ofString());
                if (response.statusCode() != 200 || !response.body().equals("{\"n\":" + n + "}\n")) {
                    throw new IllegalStateException("HTTP " + response.statusCode() + ": " + response.body());
                }
            }

            @Override
            public void close() {
                http.close();
            }
        };
    }

    private static String text(String template, int n) {
        return template.replace("{n}", Integer.toString(n));
    }
}
