// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.flow.config.PipelineConfig;
import dev.mallard.flow.config.PipelineConfigReader;
import dev.mallard.testkit.EmbeddedKafka;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.websocket.WsRouting;
import io.helidon.websocket.WsListener;
import io.helidon.websocket.WsSession;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * SQLFlow's Bluesky windowed example (its {@code manager.tumbling_window} block, a WebSocket source, a Kafka sink for
 * the closed windows) run by PipelineRunner: a local WebSocket server sends generated events of Jetstream's shape,
 * the windows go to the broker in this JVM, and what the topic holds is compared with the counts computed here.
 */
class BlueskyWindowedIT {
    private static final String CONFIG = "/sqlflow/bluesky.kafka.windowed.yml";
    private static final String TOPIC = "output-bluesky-post-kind-count-1-minute";
    private static final DateTimeFormatter MINUTE = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss").withZone(ZoneOffset.UTC);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static EmbeddedKafka kafka;

    @BeforeAll
    static void startBroker() {
        kafka = EmbeddedKafka.start();
        kafka.createTopic(TOPIC, 1);
    }

    @AfterAll
    static void stopBroker() {
        kafka.close();
    }

    /** Generated firehose events and, per minute and kind, how many there are. */
    private record Firehose(List<String> events, Map<String, Long> counts) {}

    /**
     * Events as Jetstream sends them (commit, identity and account events, each with its did and time_us), spread over
     * five minutes that ended more than a minute ago, so that SQLFlow's collect query finds every one of them closed.
     */
    private static Firehose firehose(int count, long seed) {
        Random random = new Random(seed);
        Instant start = Instant.now().truncatedTo(ChronoUnit.MINUTES).minus(Duration.ofMinutes(20));
        List<String> events = new ArrayList<>();
        Map<String, Long> counts = new TreeMap<>();
        for (int i = 0; i < count; i++) {
            // Away from the minute's edges by a millisecond or more: time_us / 1000000 is a double in SQLFlow's SQL.
            Instant time = start.plus(Duration.ofMinutes(random.nextInt(5))).plusMillis(1 + random.nextInt(59_998)).plusNanos(random.nextInt(1000) * 1000L);
            long timeUs = ChronoUnit.MICROS.between(Instant.EPOCH, time);
            String did = "did:plc:" + Long.toString(Math.abs(random.nextLong()), 36);
            int pick = random.nextInt(10);
            String kind = pick < 8 ? "commit" : pick == 8 ? "identity" : "account";
            String event = switch (kind) {
                case "commit" -> "{\"did\":\"" + did + "\",\"time_us\":" + timeUs + ",\"kind\":\"commit\",\"commit\":{\"rev\":\"3l" + i
                        + "\",\"operation\":\"create\",\"collection\":\"app.bsky.feed.post\",\"rkey\":\"3k" + i
                        + "\",\"record\":{\"$type\":\"app.bsky.feed.post\",\"createdAt\":\"" + time + "\",\"langs\":[\"en\"],\"text\":\"post "
                        + i + "\"},\"cid\":\"bafyrei" + i + "\"}}";
                case "identity" -> "{\"did\":\"" + did + "\",\"time_us\":" + timeUs + ",\"kind\":\"identity\",\"identity\":{\"did\":\"" + did
                        + "\",\"handle\":\"user" + i + ".bsky.social\",\"seq\":" + (1000 + i) + ",\"time\":\"" + time + "\"}}";
                default -> "{\"did\":\"" + did + "\",\"time_us\":" + timeUs + ",\"kind\":\"account\",\"account\":{\"active\":true,\"did\":\"" + did
                        + "\",\"seq\":" + (1000 + i) + ",\"time\":\"" + time + "\"}}";
            };
            events.add(event);
            counts.merge(MINUTE.format(time.truncatedTo(ChronoUnit.MINUTES)) + " " + kind, 1L, Long::sum);
        }
        return new Firehose(events, counts);
    }

    private static String configText() throws IOException {
        try (InputStream in = BlueskyWindowedIT.class.getResourceAsStream(CONFIG)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** A local Jetstream: sends the events to each connection that opens. */
    private static WebServer jetstream(List<String> events) {
        return WebServer.builder().host("127.0.0.1").port(0).shutdownHook(false)
                .addRouting(WsRouting.builder().endpoint("/subscribe", new WsListener() {
                    @Override
                    public void onOpen(WsSession session) {
                        Thread.ofVirtual().start(() -> events.forEach(event -> session.send(event, true)));
                    }
                }))
                .build()
                .start();
    }

    /** Per minute and kind, the sum of the counts the topic holds, once they add up to {@code total} (or 60 s passed). */
    private static Map<String, Long> published(long total) throws Exception {
        Properties properties = new Properties();
        properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        properties.put(ConsumerConfig.GROUP_ID_CONFIG, "reader-" + UUID.randomUUID());
        properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        Map<String, Long> sums = new TreeMap<>();
        long seen = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(properties, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(TOPIC));
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            boolean more = true;
            while (more) {
                boolean complete = seen >= total;
                // Once complete, one more poll, so that anything published twice would be seen.
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(complete ? 1000 : 200))) {
                    JsonNode row = JSON.readTree(record.value());
                    assertThat(row.path("count").asLong()).as("a published window row: %s", row).isPositive();
                    sums.merge(row.path("iso_string").asText() + " " + row.path("kind").asText(), row.path("count").asLong(), Long::sum);
                    seen += row.path("count").asLong();
                }
                more = !complete && System.nanoTime() < deadline;
            }
        }
        return sums;
    }

    @Test
    void sqlflowsBlueskyWindowedExamplePublishesEveryMinutesCountPerKindToKafka() throws Exception {
        Firehose firehose = firehose(300, 22);
        WebServer server = jetstream(firehose.events());
        try {
            PipelineConfig config = new PipelineConfigReader(ConfigEnvironment.from(Map.of(
                    "SQLFLOW_KAFKA_BROKERS", kafka.bootstrapServers(),
                    "MALLARD_WEBSOCKET_URI", "ws://127.0.0.1:" + server.port() + "/subscribe")))
                    .read("bluesky.kafka.windowed.yml", configText()).orThrow();
            try (PipelineRunner runner = new PipelineRunner(config, ConfigEnvironment.from(Map.of()),
                    new PipelineRunner.Options(firehose.events().size(), new ByteArrayOutputStream()))) {
                assertThat(BoundedRun.run(runner).messagesConsumed()).isEqualTo(firehose.events().size());
            }
        } finally {
            server.stop();
        }
        assertThat(published(firehose.events().size())).isEqualTo(firehose.counts());
    }
}
