// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** `mallard dev kafka` and `mallard dev publish` as separate processes, the way a script uses them. */
class DevKafkaIT {

    @TempDir
    Path dir;

    private Process broker;

    record Run(int exit, String out, String err) {}

    @AfterEach
    void stopBroker() throws InterruptedException {
        if (broker != null && broker.isAlive()) {
            broker.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
    }

    private static List<String> command(String... args) {
        return MallardJar.command(args);
    }

    private static Run mallard(String... args) throws IOException, InterruptedException {
        Path out = Files.createTempFile("mallard-out", ".txt");
        Path err = Files.createTempFile("mallard-err", ".txt");
        Process process = new ProcessBuilder(command(args)).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("mallard finished").isTrue();
        return new Run(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    /** Starts `dev kafka` and returns its first stdout line, waiting at most 60 s for it. */
    private String startBroker(Path stderr, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("dev", "kafka"));
        command.addAll(List.of(args));
        broker = new ProcessBuilder(command(command.toArray(String[]::new))).redirectError(stderr.toFile()).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(broker.getInputStream(), StandardCharsets.UTF_8));
        return CompletableFuture.supplyAsync(() -> {
            try {
                return out.readLine();
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }).get(60, TimeUnit.SECONDS);
    }

    @Test
    void publishedEventsReachTheBrokerOfAnotherProcessWhichStopsOnSigterm() throws Exception {
        int port = freePort();
        Path brokerErr = dir.resolve("broker-err.txt");
        long started = System.nanoTime();
        String ready = startBroker(brokerErr, "--port", Integer.toString(port));
        long readyMillis = (System.nanoTime() - started) / 1_000_000;
        assertThat(ready).as(Files.readString(brokerErr)).isEqualTo("kafka ready at 127.0.0.1:" + port);
        System.err.println("dev kafka was ready " + readyMillis + " ms after its process started");

        Run publish = mallard("dev", "publish", "--brokers", "127.0.0.1:" + port, "--topic", "city-events",
                "--num-messages", "2000", "--partitions", "3");
        assertThat(publish.exit()).as(publish.err()).isZero();
        assertThat(publish.out()).isEqualTo("published 2000 messages to city-events\n");
        assertThat(publish.err()).as("no progress off a terminal, no Kafka chatter").doesNotContain("published").doesNotContain("INFO");

        Path file = dir.resolve("events.jsonl");
        Files.writeString(file, "{\"event\":\"a\",\"properties\":{\"city\":\"Lyon\"}}\n\n{\"event\":\"b\",\"properties\":{\"city\":\"Lyon\"}}\n");
        Run fromFile = mallard("dev", "publish", "--brokers", "127.0.0.1:" + port, "--topic", "city-events", "--from-file", file.toString());
        assertThat(fromFile.exit()).as(fromFile.err()).isZero();
        assertThat(fromFile.out()).isEqualTo("published 2 messages to city-events\n");

        List<String> values = consume("127.0.0.1:" + port, "city-events", 2002);
        assertThat(values).hasSize(2002);
        assertThat(values.stream().filter(value -> value.contains("\"city\":\"New York\""))).hasSize(1000);
        assertThat(values.stream().filter(value -> value.contains("\"city\":\"Baltimore\""))).hasSize(1000);
        assertThat(values.stream().filter(value -> value.contains("\"city\":\"Lyon\""))).hasSize(2);

        broker.destroy();
        assertThat(broker.waitFor(30, TimeUnit.SECONDS)).as("the broker process exits on SIGTERM").isTrue();
        assertThat(broker.exitValue()).as("the JVM's exit code for SIGTERM").isEqualTo(143);
        assertThat(Files.readString(brokerErr)).contains("stopped").doesNotContain("ERROR");
    }

    @Test
    void publishingToAPortWithoutABrokerFailsWithAClearError() throws Exception {
        int port = freePort();
        Run run = mallard("dev", "publish", "--brokers", "127.0.0.1:" + port, "--topic", "t", "--num-messages", "1");
        assertThat(run.exit()).isEqualTo(1);
        assertThat(run.out()).isEmpty();
        assertThat(run.err()).contains("error: system.kafka.unreachable: no Kafka broker answered at 127.0.0.1:" + port)
                .doesNotContain("WARN");
    }

    @Test
    void aPortAlreadyTakenIsReportedInOneLine() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            Run run = mallard("dev", "kafka", "--port", Integer.toString(taken.getLocalPort()));
            assertThat(run.exit()).isEqualTo(1);
            assertThat(run.out()).isEmpty();
            assertThat(run.err().strip()).startsWith("error: system.kafka.failed: ").contains(":" + taken.getLocalPort()).doesNotContain("\n");
        }
    }

    @Test
    void publishWithoutACountOrAFileIsAUsageError() throws Exception {
        Run run = mallard("dev", "publish", "--topic", "t");
        assertThat(run.exit()).isEqualTo(2);
        assertThat(run.err()).contains("user.cli.argument_invalid").contains("--num-messages");
    }

    private static List<String> consume(String bootstrapServers, String topic, int expected) {
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ConsumerConfig.GROUP_ID_CONFIG, "dev-kafka-it",
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"),
                new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (values.size() < expected && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    values.add(new String(record.value(), StandardCharsets.UTF_8));
                }
            }
        }
        return values;
    }
}
