// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.flow.config.PipelineConfig;
import dev.mallard.flow.config.PipelineConfigReader;
import dev.mallard.flow.pipeline.PipelineRunner;
import dev.mallard.hub.Hub;
import dev.mallard.server.MallardServer;
import dev.mallard.server.config.ServerConfig;
import dev.mallard.server.config.ServerConfigReader;
import dev.mallard.testkit.EmbeddedKafka;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * A pipeline hosted in a server (the hub) against the same pipeline run alone as {@code mallard run} runs it, on one
 * embedded broker in this JVM: CPU time of the pipeline's thread per message while clients query its view over
 * HTTP, and the freshness of the view over HTTP after a batch commits.
 */
@Command(name = "hub", mixinStandardHelpOptions = true, description = {
    "A pipeline keeping a materialized view, run alone and hosted in a server while clients query the view.",
    "Alone is as mallard run; hosted, clients query the view over HTTP. Measures the pipeline thread's CPU per message,",
    "hosted / alone (limit 1/0.9), and commit-to-visible-over-HTTP freshness."})
final class HubBench implements Callable<Integer> {
    static final double THROUGHPUT_TARGET_RATIO = 0.9;
    static final double FRESHNESS_TARGET_P50_MS = 10;
    private static final String USER = "bench";
    private static final String PASSWORD = "bench-password";
    private static final String VIEW_SQL = "SELECT coalesce(sum(events), 0) AS n FROM city_totals";

    @Option(names = "--messages", description = "Messages per run (default ${DEFAULT-VALUE}).", defaultValue = "200000")
    long messages;

    @Option(names = "--clients", description = "Clients querying the view during the hosted run (default ${DEFAULT-VALUE}).", defaultValue = "8")
    int clients;

    @Option(names = "--commits", description = "Single-event commits timed for freshness (default ${DEFAULT-VALUE}).", defaultValue = "50")
    int commits;

    @Option(names = "--json", description = "Print one JSON object instead of a table.")
    boolean json;

    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();

    @Override
    public Integer call() throws Exception {
        ObjectNode result = new ObjectMapper().createObjectNode();
        try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
            String topic = "hub-bench";
            kafka.createTopic(topic, 1);
            publish(kafka, topic, 0, messages);
            Path dir = Files.createTempDirectory("mallard-bench-hub");
            ConfigEnvironment environment = ConfigEnvironment.from(Map.of());

            // Alone: the runner mallard run uses, on its own state file.
            PipelineConfig alone = config(environment, dir.resolve("alone.yml"), pipelineYaml(kafka, topic, "g-alone", dir.resolve("alone.duckdb"), 1000));
            AtomicLong aloneCpu = new AtomicLong();
            long aloneStarted = System.nanoTime();
            Thread run = Thread.ofPlatform().name("pipeline-alone").start(() -> {
                try (PipelineRunner runner = new PipelineRunner(alone, environment, new PipelineRunner.Options(messages, OutputStream.nullOutputStream()))) {
                    runner.run();
                }
                aloneCpu.set(threads.getCurrentThreadCpuTime());
            });
            run.join();
            double aloneSeconds = (System.nanoTime() - aloneStarted) / 1e9;

            // Hosted, while clients query its view over HTTP.
            Path pipeline = dir.resolve("hosted.yml");
            Files.writeString(pipeline, pipelineYaml(kafka, topic, "g-hosted", dir.resolve("hosted.duckdb"), 1000));
            ServerConfig server = new ServerConfigReader(environment, Map.of()).read(Optional.empty(), List.of("warehouse=" + dir.resolve("wh"),
                    "database=hub.duckdb", "host=127.0.0.1", "http.port=0", "flight.port=0", "users.0.username=" + USER, "users.0.password=" + PASSWORD,
                    "pipelines.0=" + pipeline));
            AtomicReference<Hub> hub = new AtomicReference<>();
            long hostedStarted = System.nanoTime();
            try (MallardServer started = MallardServer.start(server, context -> {
                Hub h = Hub.start(context, environment);
                hub.set(h);
                return h;
            })) {
                HttpClient http = HttpClient.newHttpClient();
                AtomicBoolean querying = new AtomicBoolean(true);
                AtomicLong queries = new AtomicLong();
                AtomicLong failures = new AtomicLong();
                List<Thread> readers = new ArrayList<>();
                for (int i = 0; i < clients; i++) {
                    readers.add(Thread.ofPlatform().name("client-" + i).start(() -> {
                        while (querying.get()) {
                            if (query(http, started.httpPort()) < 0) {
                                failures.incrementAndGet();
                            }
                            queries.incrementAndGet();
                        }
                    }));
                }
                while (hub.get().pipeline("hosted").messages() < messages) {
                    if (hub.get().pipeline("hosted").state() == dev.mallard.hub.PipelineState.FAILED) {
                        throw new IllegalStateException("the hosted pipeline failed: " + hub.get().pipeline("hosted").lastError());
                    }
                    Thread.sleep(5);
                }
                double hostedSeconds = (System.nanoTime() - hostedStarted) / 1e9;
                long hostedCpu = threadCpu("pipeline-hosted");
                querying.set(false);
                for (Thread reader : readers) {
                    reader.join();
                }
                double aloneCpuPerMessage = aloneCpu.get() / (double) messages;
                double hostedCpuPerMessage = hostedCpu / (double) messages;
                result.put("messages", messages);
                result.put("clients", clients);
                result.put("alone_seconds", round(aloneSeconds));
                result.put("hosted_seconds", round(hostedSeconds));
                result.put("alone_cpu_us_per_message", round(aloneCpuPerMessage / 1000));
                result.put("hosted_cpu_us_per_message", round(hostedCpuPerMessage / 1000));
                result.put("throughput_ratio_by_cpu", round(aloneCpuPerMessage / hostedCpuPerMessage));
                result.put("throughput_ratio_by_wall", round(aloneSeconds / hostedSeconds));
                result.put("client_queries", queries.get());
                result.put("client_failures", failures.get());

                // Freshness: one event per batch; the time from the batch's commit (the runner's last_batch_at, taken after it)
                // to the first HTTP answer that shows it, from a client asking back to back on one session, with the bearer
                // token of one login (a Basic request opens a session, a DuckDB connection, of its own each time).
                String bearer = "Bearer " + login(http, started.httpPort());
                List<Double> freshness = new ArrayList<>();
                long seen = query(http, started.httpPort(), bearer);
                for (int i = 0; i < commits; i++) {
                    Optional<Instant> before = hub.get().pipeline("hosted").lastBatchAt();
                    publish(kafka, topic, messages + i, 1);
                    while (true) {
                        long n = query(http, started.httpPort(), bearer);
                        if (n > seen) {
                            seen = n;
                            break;
                        }
                    }
                    Instant visible = Instant.now();
                    Optional<Instant> committed = hub.get().pipeline("hosted").lastBatchAt();
                    while (committed.equals(before)) {
                        Thread.sleep(1);
                        committed = hub.get().pipeline("hosted").lastBatchAt();
                    }
                    freshness.add(Math.max(0, Duration.between(committed.get(), visible).toNanos() / 1e6));
                }
                freshness.sort(Double::compare);
                result.put("freshness_p50_ms", round(freshness.get(freshness.size() / 2)));
                result.put("freshness_p99_ms", round(freshness.get((int) Math.min(freshness.size() - 1, Math.ceil(freshness.size() * 0.99) - 1))));
                result.put("freshness_max_ms", round(freshness.getLast()));
            }
            result.put("cores", Runtime.getRuntime().availableProcessors());
            result.put("load_average", round(ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage()));
        }
        if (json) {
            System.out.println(result);
        } else {
            result.fields().forEachRemaining(field -> System.out.printf("%-28s %s%n", field.getKey(), field.getValue()));
            System.out.printf("%-28s %s (limit >= %.1f)%n", "throughput ratio (cpu)", result.path("throughput_ratio_by_cpu"), THROUGHPUT_TARGET_RATIO);
            System.out.printf("%-28s %s ms (limit <= %.0f), p99 %s ms%n", "freshness p50", result.path("freshness_p50_ms"), FRESHNESS_TARGET_P50_MS,
                    result.path("freshness_p99_ms"));
        }
        return 0;
    }

    private long threadCpu(String name) {
        for (Thread thread : Thread.getAllStackTraces().keySet()) {
            if (thread.getName().equals(name)) {
                return threads.getThreadCpuTime(thread.threadId());
            }
        }
        throw new IllegalStateException("no thread " + name);
    }

    private static double round(double value) {
        return Math.round(value * 100) / 100.0;
    }

    private static PipelineConfig config(ConfigEnvironment environment, Path file, String yaml) throws Exception {
        Files.writeString(file, yaml);
        return new PipelineConfigReader(environment).read(file).orThrow();
    }

    private static String pipelineYaml(EmbeddedKafka kafka, String topic, String group, Path state, int batchSize) {
        String name = group.substring(2);
        return """
                commands:
                  - name: events
                    sql: |
                      CREATE TABLE IF NOT EXISTS events (city VARCHAR, n BIGINT);
                      CREATE MATERIALIZED VIEW IF NOT EXISTS city_totals AS
                        SELECT city, count(*) AS events, sum(n) AS total FROM events GROUP BY city
                pipeline:
                  name: %s
                  batch_size: %d
                  flush_interval_seconds: 1
                  state:
                    path: %s
                  source:
                    type: kafka
                    kafka:
                      brokers: [%s]
                      group_id: %s
                      auto_offset_reset: earliest
                      topics: [%s]
                  handler:
                    type: handlers.InferredMemBatch
                    sql: INSERT INTO events SELECT properties.city, n FROM batch
                  sink:
                    type: noop
                """.formatted(name, batchSize, state, kafka.bootstrapServers(), group, topic);
    }

    private static long query(HttpClient http, int port) {
        return query(http, port, "Basic " + Base64.getEncoder().encodeToString((USER + ":" + PASSWORD).getBytes(StandardCharsets.UTF_8)));
    }

    private static String login(HttpClient http, int port) throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/login"))
                .POST(HttpRequest.BodyPublishers.ofString("{\"username\":\"" + USER + "\",\"password\":\"" + PASSWORD + "\"}")).build(),
                HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IllegalStateException("login failed: " + response.statusCode() + " " + response.body());
        }
        return new com.fasterxml.jackson.databind.ObjectMapper().readTree(response.body()).path("accessToken").asText();
    }

    private static long query(HttpClient http, int port, String authorization) {
        try {
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/query?q="
                    + URLEncoder.encode(VIEW_SQL, StandardCharsets.UTF_8)))
                    .header("Authorization", authorization)
                    .header("Accept", "application/jsonl").build(), HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                return -1;
            }
            String body = response.body().trim();
            return Long.parseLong(body.substring(body.indexOf(':') + 1, body.indexOf('}')).trim());
        } catch (Exception e) {
            return -1;
        }
    }

    private static void publish(EmbeddedKafka kafka, String topic, long from, long count) {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        properties.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties, new StringSerializer(), new StringSerializer())) {
            for (long i = from; i < from + count; i++) {
                producer.send(new ProducerRecord<>(topic, "{\"properties\":{\"city\":\"city-" + (i % 50) + "\"},\"n\":" + i + "}"));
            }
            producer.flush();
        }
    }
}
