// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.server.datasets.DatasetServer;
import dev.mallard.server.datasets.ServeConfig;
import dev.mallard.server.datasets.ServeConfigReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Cached dataset hits per second: {@code mallard serve}'s server in this JVM answers one cached ranged dataset to
 * concurrent HTTP/1.1 clients (keep-alive, one connection each, {@link KeepAliveClient}) in this JVM, against a target
 * of 10,000 requests/s. Each request kind also reports the server's CPU per request (the process's less the client
 * threads'), which a loaded machine does not inflate as it does wall-clock rates.
 */
@Command(name = "datasets", mixinStandardHelpOptions = true, description = {
    "Requests/s of cached dataset hits from concurrent HTTP clients, against a target of 10,000/s.",
    "GET /v1/datasets/{name} (cache: hit) against mallard serve's server in this JVM; also one uncached dataset and",
    "GET /health for contrast."})
final class DatasetsBench implements Callable<Integer> {
    static final double HIT_TARGET = 10_000;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CONFIG = """
            commands:
              - name: events
                sql: |
                  CREATE TABLE events AS SELECT city, TIMESTAMP '2026-01-01 00:00:00' + to_minutes(i) AS ts, (i % 5) + 1 AS n
                  FROM range(0, 20160) r(i), (VALUES ('Baltimore'), ('Lisbon')) c(city);
            serve:
              host: 127.0.0.1
              port: 0
              metrics: {enabled: false}
              datasets:
                - name: events_over_time
                  params:
                    - {name: since, type: timestamp}
                    - {name: until, type: timestamp}
                  range: {since: since, until: until, default: 24h}
                  grains:
                    5m: {max_range: 1d, bucket: 5m, sql: "SELECT time_bucket(INTERVAL 5 minute, ts) AS bucket, sum(n) AS n FROM events WHERE ts >= $since AND ts < $until GROUP BY 1 ORDER BY 1"}
                    1h: {max_range: 14d, bucket: 1h, sql: "SELECT time_bucket(INTERVAL 1 hour, ts) AS bucket, sum(n) AS n FROM events WHERE ts >= $since AND ts < $until GROUP BY 1 ORDER BY 1"}
                  cache: {ttl_seconds: 3600}
                - name: city_totals
                  sql: SELECT city, count(*) AS events, sum(n) AS n FROM events GROUP BY city ORDER BY city
            """;
    private static final String HIT = "/v1/datasets/events_over_time?since=2026-01-02T00:00:00Z&until=2026-01-02T06:00:00Z";
    private static final String UNCACHED = "/v1/datasets/city_totals";

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--clients", description = "Concurrent clients (default ${DEFAULT-VALUE}).", defaultValue = "32")
    int clients;

    @Option(names = "--seconds", description = "The measured window (default ${DEFAULT-VALUE}).", defaultValue = "10")
    int seconds;

    // Long enough for the JIT to compile the hit path on a loaded machine: with 3 s the first kind measured (the hits)
    // paid the compilation, /health after it did not, and a hit looked 4-5x a /health request instead of about 2x.
    @Option(names = "--warmup-seconds", description = "Requests before each measured window (default ${DEFAULT-VALUE}).", defaultValue = "10")
    int warmupSeconds;

    @Option(names = "--json", description = "Print one JSON object instead of a table.")
    boolean json;

    /** A measured window: requests, the server's CPU (the process's less the clients' threads'), the clients' CPU. */
    record Window(long requests, long serverCpuNanos, long clientCpuNanos, double p99Millis, long wallNanos) {
        double perSecond() {
            return requests * 1e9 / wallNanos;
        }

        long serverMicrosPerRequest() {
            return requests == 0 || serverCpuNanos < 0 ? -1 : serverCpuNanos / requests / 1000;
        }

        long clientMicrosPerRequest() {
            return requests == 0 ? -1 : clientCpuNanos / requests / 1000;
        }
    }

    @Override
    public Integer call() throws Exception {
        Path file = Files.createTempFile("mallard-datasets-bench", ".yml");
        ObjectNode result = JSON.createObjectNode();
        try {
            Files.writeString(file, CONFIG);
            ServeConfig config = new ServeConfigReader(ConfigEnvironment.from(Map.of())).read(file);
            try (DatasetServer server = DatasetServer.start(config, file.getParent())) {
                double loadBefore = ProcessCpu.loadAverage();
                Window hits = run(server.port(), HIT, "hit");
                Window uncached = run(server.port(), UNCACHED, null);
                Window health = run(server.port(), "/health", null);
                result.put("clients", clients);
                result.put("seconds", seconds);
                result.put("hit_requests_per_s", Math.round(hits.perSecond()));
                result.put("hit_target_per_s", HIT_TARGET);
                result.put("hit_ratio", Math.round(hits.perSecond() / HIT_TARGET * 100) / 100.0);
                result.put("hit_p99_ms", Math.round(hits.p99Millis() * 100) / 100.0);
                result.put("hit_server_cpu_us_per_request", hits.serverMicrosPerRequest());
                result.put("hit_client_cpu_us_per_request", hits.clientMicrosPerRequest());
                result.put("uncached_requests_per_s", Math.round(uncached.perSecond()));
                result.put("uncached_server_cpu_us_per_request", uncached.serverMicrosPerRequest());
                result.put("uncached_client_cpu_us_per_request", uncached.clientMicrosPerRequest());
                result.put("health_requests_per_s", Math.round(health.perSecond()));
                result.put("health_server_cpu_us_per_request", health.serverMicrosPerRequest());
                result.put("health_client_cpu_us_per_request", health.clientMicrosPerRequest());
                result.put("hit_over_health_server_cpu", health.serverMicrosPerRequest() <= 0 ? -1
                        : Math.round(100.0 * hits.serverMicrosPerRequest() / health.serverMicrosPerRequest()) / 100.0);
                result.put("cores", Runtime.getRuntime().availableProcessors());
                result.put("load_average_before", loadBefore);
                result.put("load_average_after", ProcessCpu.loadAverage());
            }
        } finally {
            Files.deleteIfExists(file);
        }
        var out = spec.commandLine().getOut();
        if (json) {
            out.println(result.toString());
            out.flush();
            return 0;
        }
        out.printf("%-44s %14s %14s %8s%n", "measure (" + clients + " clients, " + seconds + " s)", "value", "target", "ratio");
        out.printf("%-44s %14d %14.0f %8.2f%n", "cached dataset hits requests/s", result.get("hit_requests_per_s").asLong(), HIT_TARGET,
                result.get("hit_ratio").asDouble());
        out.printf("%-44s %14.2f %14s %8s%n", "  p99 ms", result.get("hit_p99_ms").asDouble(), "-", "-");
        out.printf("%-44s %14d %14s %8s%n", "  server CPU us/request", result.get("hit_server_cpu_us_per_request").asLong(), "-", "-");
        out.printf("%-44s %14d %14s %8s%n", "  client CPU us/request", result.get("hit_client_cpu_us_per_request").asLong(), "-", "-");
        out.printf("%-44s %14d %14s %8s%n", "uncached dataset requests/s", result.get("uncached_requests_per_s").asLong(), "-", "-");
        out.printf("%-44s %14d %14s %8s%n", "  server CPU us/request", result.get("uncached_server_cpu_us_per_request").asLong(), "-", "-");
        out.printf("%-44s %14d %14s %8s%n", "  client CPU us/request", result.get("uncached_client_cpu_us_per_request").asLong(), "-", "-");
        out.printf("%-44s %14d %14s %8s%n", "GET /health requests/s (the HTTP floor)", result.get("health_requests_per_s").asLong(), "-", "-");
        out.printf("%-44s %14d %14s %8s%n", "  server CPU us/request", result.get("health_server_cpu_us_per_request").asLong(), "-", "-");
        out.printf("%-44s %14d %14s %8s%n", "  client CPU us/request", result.get("health_client_cpu_us_per_request").asLong(), "-", "-");
        out.printf("%-44s %14.2f %14s %8s%n", "hit server CPU / health server CPU", result.get("hit_over_health_server_cpu").asDouble(), "-", "-");
        out.printf("cores %d, load average %.2f before, %.2f after; the clients (one kept-alive socket each, on their own threads) share"
                + " this JVM with the server, and their threads' CPU is measured apart%n",
                result.get("cores").asInt(), result.get("load_average_before").asDouble(), result.get("load_average_after").asDouble());
        out.flush();
        return 0;
    }

    /**
     * Clients request {@code path} for the warm-up, then the measured window; each answer must carry {@code cache}
     * when given. The clients' threads' CPU time is measured apart, so the rest of the process's is the server's.
     */
    private Window run(int port, String path, String expectedCache) throws Exception {
        // One request first, so a cached answer is stored before any client counts.
        try (KeepAliveClient prime = new KeepAliveClient(port, path)) {
            prime.get();
        }
        byte[] expected = expectedCache == null ? null : ("\"cache\":\"" + expectedCache + "\"").getBytes(StandardCharsets.US_ASCII);
        AtomicBoolean measuring = new AtomicBoolean();
        AtomicBoolean stop = new AtomicBoolean();
        long[] counts = new long[clients];
        List<long[]> latencies = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        CountDownLatch failed = new CountDownLatch(1);
        CountDownLatch connected = new CountDownLatch(clients);
        Throwable[] failure = new Throwable[1];
        for (int c = 0; c < clients; c++) {
            int client = c;
            long[] mine = new long[1 << 20];
            latencies.add(mine);
            threads.add(Thread.ofPlatform().name("bench-client-" + c).start(() -> {
                try (KeepAliveClient http = new KeepAliveClient(port, path)) {
                    connected.countDown();
                    while (!stop.get()) {
                        long started = System.nanoTime();
                        int status = http.get();
                        long took = System.nanoTime() - started;
                        if (status != 200 || (expected != null && measuring.get() && !http.bodyContains(expected, 512))) {
                            throw new IllegalStateException("unexpected answer " + status + ": " + http.body());
                        }
                        if (measuring.get()) {
                            int n = (int) counts[client]++;
                            if (n < mine.length) {
                                mine[n] = took;
                            }
                        }
                    }
                } catch (Throwable e) {
                    failure[0] = e;
                    failed.countDown();
                    connected.countDown();
                }
            }));
        }
        connected.await(60, java.util.concurrent.TimeUnit.SECONDS);
        failed.await(warmupSeconds, java.util.concurrent.TimeUnit.SECONDS);
        long clientCpuBefore = threadsCpu(threads);
        long cpuBefore = ProcessCpu.selfNanos();
        long started = System.nanoTime();
        measuring.set(true);
        failed.await(seconds, java.util.concurrent.TimeUnit.SECONDS);
        measuring.set(false);
        long wall = System.nanoTime() - started;
        long cpu = ProcessCpu.between(cpuBefore, ProcessCpu.selfNanos());
        long clientCpu = threadsCpu(threads) - clientCpuBefore;
        stop.set(true);
        for (Thread thread : threads) {
            thread.join();
        }
        if (failure[0] != null) {
            throw new IllegalStateException("a client failed: " + failure[0].getMessage(), failure[0]);
        }
        long total = Arrays.stream(counts).sum();
        long[] all = new long[(int) Math.min(Integer.MAX_VALUE - 8, total)];
        int at = 0;
        for (int c = 0; c < clients; c++) {
            int n = (int) Math.min(counts[c], latencies.get(c).length);
            System.arraycopy(latencies.get(c), 0, all, at, n);
            at += n;
        }
        long[] measured = Arrays.copyOf(all, at);
        Arrays.sort(measured);
        double p99 = measured.length == 0 ? 0 : measured[(int) Math.min(measured.length - 1, Math.ceil(measured.length * 0.99) - 1)] / 1e6;
        return new Window(total, cpu < 0 ? -1 : cpu - clientCpu, clientCpu, p99, wall);
    }

    /** The CPU time (user and system) the client threads have used so far. */
    private static long threadsCpu(List<Thread> threads) {
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (Thread thread : threads) {
            sum += Math.max(0, mx.getThreadCpuTime(thread.threadId()));
        }
        return sum;
    }
}
