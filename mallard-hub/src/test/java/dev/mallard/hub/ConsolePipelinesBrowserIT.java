// SPDX-License-Identifier: Apache-2.0
package dev.mallard.hub;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.server.MallardServer;
import dev.mallard.server.config.ServerConfigReader;
import dev.mallard.testkit.EmbeddedKafka;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The console's pipelines panel in a real browser (mallard-server's {@code src/test/browser/console-e2e.mjs},
 * scenario {@code pipelines}) against a READ_ONLY server hosting a Kafka pipeline while this test publishes events:
 * a reader sees the pipeline and no stop button; a pipeline admin sees its lag, msgs/s and errors charts move, then
 * stops and starts it. Screenshots go to {@code target/console-browser/}. Needs what ConsoleBrowserIT needs; fails
 * under CI without it, and is skipped elsewhere.
 */
class ConsolePipelinesBrowserIT {
    private static final Path SCRIPTS = Path.of("..", "mallard-server", "src", "test", "browser");
    private static final Path ARTIFACTS = Path.of("target", "console-browser");

    @TempDir
    Path dir;

    @Test
    void aPipelineAdminWatchesThePipelinesChartsMoveAndStopsItWhileAReaderSeesNoStopButton() throws Exception {
        Path chromium = Path.of(Optional.ofNullable(System.getenv("CHROMIUM")).orElse("/usr/bin/chromium"));
        List<String> missing = new ArrayList<>();
        if (!nodeRuns()) {
            missing.add("node (apt-get install nodejs npm)");
        }
        if (!Files.isExecutable(chromium)) {
            missing.add("Chromium at " + chromium + " (apt-get install chromium)");
        }
        if (!Files.isDirectory(SCRIPTS.resolve("node_modules").resolve("playwright-core"))) {
            missing.add("playwright-core (npm ci --prefix mallard-server/src/test/browser)");
        }
        if (!missing.isEmpty()) {
            String message = "the console's browser test needs " + String.join(", ", missing) + "; .ci/run installs them";
            if (System.getenv("CI") != null) {
                throw new AssertionError(message);
            }
            Assumptions.abort(message);
        }
        Path screenshots = ARTIFACTS.resolve("screenshots");
        Files.createDirectories(screenshots);
        try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
            String topic = "console-events";
            kafka.createTopic(topic, 2);
            Path pipeline = dir.resolve("events.yml");
            Files.writeString(pipeline, """
                    commands:
                      - name: events
                        sql: CREATE TABLE IF NOT EXISTS events (city VARCHAR, n BIGINT)
                    pipeline:
                      name: events
                      batch_size: 200
                      flush_interval_seconds: 1
                      source:
                        type: kafka
                        kafka:
                          brokers: [%s]
                          group_id: console
                          auto_offset_reset: earliest
                          topics: [%s]
                      handler:
                        type: handlers.InferredMemBatch
                        sql: INSERT INTO events SELECT properties.city, n FROM batch
                      sink:
                        type: noop
                    """.formatted(kafka.bootstrapServers(), topic));
            List<String> overrides = List.of("warehouse=" + dir.resolve("wh"), "database=hub.duckdb", "host=127.0.0.1", "http.port=0",
                    "flight.port=0", "access_mode=READ_ONLY", "users.0.username=ada", "users.0.password=lovelace", "users.1.username=grace",
                    "users.1.password=hopper", "pipeline_admins.0=grace", "pipelines.0=" + pipeline);
            AtomicBoolean publishing = new AtomicBoolean(true);
            try (MallardServer server = MallardServer.start(new ServerConfigReader(ConfigEnvironment.from(Map.of())).read(Optional.empty(), overrides),
                    Hub.hosting())) {
                // Bursts of events, larger than a batch, for as long as the browser watches: the lag rises and falls.
                CompletableFuture<Void> publisher = CompletableFuture.runAsync(() -> publish(kafka.bootstrapServers(), topic, publishing));
                try {
                    ProcessBuilder node = new ProcessBuilder("node", "console-e2e.mjs").directory(SCRIPTS.toFile()).redirectErrorStream(true)
                            .redirectOutput(ARTIFACTS.resolve("console-pipelines-e2e.log").toFile());
                    node.environment().putAll(Map.of("SCENARIO", "pipelines", "PIPELINE", "events", "MALLARD_URL", "http://127.0.0.1:" + server.httpPort(),
                            "MALLARD_USER", "ada", "MALLARD_PASSWORD", "lovelace", "MALLARD_ADMIN", "grace", "MALLARD_ADMIN_PASSWORD", "hopper",
                            "SCREENSHOTS", screenshots.toAbsolutePath().toString(), "CHROMIUM", chromium.toString()));
                    Process process = node.start();
                    // A bound against a hung browser, not a timing check.
                    boolean ended = process.waitFor(5, TimeUnit.MINUTES);
                    if (!ended) {
                        process.destroyForcibly();
                    }
                    String log = Files.readString(ARTIFACTS.resolve("console-pipelines-e2e.log"));
                    assertThat(ended).as("the browser script ended within five minutes:\n%s", log).isTrue();
                    assertThat(process.exitValue()).as("the browser script's steps:\n%s", log).isZero();
                    assertThat(log).contains("console e2e: all steps passed");
                    assertThat(screenshots.resolve("12-pipeline-lag-moves.png")).isNotEmptyFile();
                } finally {
                    publishing.set(false);
                    publisher.get(1, TimeUnit.MINUTES);
                }
            }
        }
    }

    private static void publish(String brokers, String topic, AtomicBoolean publishing) {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, brokers);
        long n = 0;
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties, new StringSerializer(), new StringSerializer())) {
            while (publishing.get()) {
                for (int i = 0; i < 3000; i++, n++) {
                    producer.send(new ProducerRecord<>(topic, "{\"properties\":{\"city\":\"c" + (n % 7) + "\"},\"n\":" + n + "}"));
                }
                producer.flush();
                try {
                    // Paces the bursts (not a synchronisation): the lag falls between them.
                    Thread.sleep(1500);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    private static boolean nodeRuns() {
        try {
            Process process = new ProcessBuilder("node", "--version").redirectErrorStream(true).start();
            process.getInputStream().readAllBytes();
            return process.waitFor(30, TimeUnit.SECONDS) && process.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
