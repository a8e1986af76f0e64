// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.testkit.Await;
import dev.mallard.testkit.EmbeddedKafka;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A windowed Kafka pipeline with a state path as a separate process, killed with SIGKILL at random moments again and
 * again, then run until every bucket is published: each bucket published to the output topic (keyed by bucket and
 * city) carries exactly the count of the published events in it, however often it was published, and every bucket of
 * the reference is there. A record lost by a kill shows as a smaller count, one counted twice as a larger one.
 */
class WindowKillIT {
    private static final List<String> CITIES = List.of("New York", "Baltimore", "Columbus", "Denver", "Austin");
    private static final Instant START = Instant.parse("2015-12-12T19:00:00Z");
    private static final int SIZE_SECONDS = 600;
    private static EmbeddedKafka kafka;

    @TempDir
    Path dir;

    @BeforeAll
    static void startBroker() {
        kafka = EmbeddedKafka.start();
    }

    @AfterAll
    static void stopBroker() {
        kafka.close();
    }

    /** Events one second apart, cities in turn, spread over the partitions by key; returns the reference counts. */
    private static Map<String, Long> publish(String topic, int count) {
        Map<String, Long> reference = new HashMap<>();
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < count; i++) {
                Instant at = START.plusSeconds(i);
                String city = CITIES.get(i % CITIES.size());
                // Keyed by city: each partition's event times rise, as a per-device stream's do.
                producer.send(new ProducerRecord<>(topic, city, "{\"timestamp\":\"" + at + "\",\"properties\":{\"city\":\"" + city + "\"}}"));
                long bucket = at.getEpochSecond() - Math.floorMod(at.getEpochSecond() - Instant.parse("2000-01-03T00:00:00Z").getEpochSecond(),
                        SIZE_SECONDS);
                reference.merge(bucket + "|" + city, 1L, Long::sum);
            }
            producer.flush();
        }
        return reference;
    }

    /** Every record of the output topic so far, as key and value, in the order of each partition. */
    private static List<Map.Entry<String, String>> output(String topic) {
        Properties properties = new Properties();
        properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        List<Map.Entry<String, String>> records = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(properties, new StringDeserializer(), new StringDeserializer())) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic, Duration.ofSeconds(30)).stream()
                    .map(info -> new TopicPartition(topic, info.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions, Duration.ofSeconds(30));
            while (partitions.stream().anyMatch(p -> consumer.position(p, Duration.ofSeconds(30)) < end.get(p))) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                    records.add(Map.entry(record.key(), record.value()));
                }
            }
        }
        return records;
    }

    /** How many records the output topic holds. */
    private static long outputCount(String topic) {
        Properties properties = new Properties();
        properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(properties, new StringDeserializer(), new StringDeserializer())) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic, Duration.ofSeconds(30)).stream()
                    .map(info -> new TopicPartition(topic, info.partition())).toList();
            return consumer.endOffsets(partitions, Duration.ofSeconds(30)).values().stream().mapToLong(Long::longValue).sum();
        }
    }

    /** Per key (bucket|city), every count published for it. */
    private static Map<String, List<Long>> published(String topic) {
        Map<String, List<Long>> counts = new HashMap<>();
        for (Map.Entry<String, String> record : output(topic)) {
            String value = record.getValue();
            long n = Long.parseLong(value.substring(value.indexOf("\"n\":") + 4, value.indexOf('}', value.indexOf("\"n\":"))).trim());
            counts.computeIfAbsent(record.getKey(), key -> new ArrayList<>()).add(n);
        }
        return counts;
    }

    @Test
    void killedWithSigkillAtRandomMomentsAndRestartedEveryWindowCountsEachPublishedEventExactlyOnce() throws Exception {
        int total = 80_000;
        String in = "window-kill-" + UUID.randomUUID();
        String out = in + "-out";
        kafka.createTopic(in, 3);
        kafka.createTopic(out, 1);
        Map<String, Long> reference = publish(in, total);
        Path state = dir.resolve("state").resolve("window.duckdb");
        Path config = dir.resolve("window-kill.yml");
        Files.writeString(config, """
                tables:
                  sql:
                    - name: city_counts
                      sql: CREATE TABLE IF NOT EXISTS city_counts (bucket TIMESTAMPTZ, city VARCHAR, n BIGINT)
                      window:
                        time_column: bucket
                        size_seconds: %d
                        grace_seconds: 0
                        idle_close_seconds: 1
                        emit_sql: SELECT epoch(bucket)::BIGINT || '|' || city AS k, sum(n) AS n FROM closed GROUP BY ALL
                        sink:
                          type: kafka
                          kafka:
                            brokers: [%s]
                            topic: %s
                            key: k
                pipeline:
                  name: window-kill
                  batch_size: 500
                  flush_interval_seconds: 1
                  drain_deadline_seconds: 20
                  state:
                    path: %s
                  source:
                    type: kafka
                    kafka:
                      brokers: [%s]
                      group_id: %s
                      auto_offset_reset: earliest
                      topics: [%s]
                      event_time: {path: timestamp, format: rfc3339}
                  handler:
                    type: handlers.InferredMemBatch
                    sql: |
                      INSERT INTO city_counts
                      SELECT time_bucket(INTERVAL '%d seconds', event_time), properties.city, count(*) FROM batch GROUP BY ALL
                  sink:
                    type: noop
                """.formatted(SIZE_SECONDS, kafka.bootstrapServers(), out, state, kafka.bootstrapServers(), "g-" + UUID.randomUUID(), in,
                SIZE_SECONDS));
        Random random = new Random(22);
        int kills = 0;
        int killsMidStream = 0;
        long publishedBefore = 0;
        while (kills < 5) {
            Path log = dir.resolve("kill-" + kills + ".log");
            Process run = MallardJar.start(log, "run", config.toString());
            long before = publishedBefore;
            // Each kill lands after this run has published more buckets: mid-stream, while buckets close.
            Await.until("more buckets published by " + log, Duration.ofMinutes(2), () -> !run.isAlive() || outputCount(out) > before);
            Thread.sleep(random.nextInt(800));
            if (!run.isAlive()) {
                break;
            }
            run.destroyForcibly();
            assertThat(run.waitFor(30, TimeUnit.SECONDS)).isTrue();
            kills++;
            int buckets = published(out).size();
            if (buckets > 0 && buckets < reference.size()) {
                killsMidStream++;
            }
            publishedBefore = outputCount(out);
            if (buckets >= reference.size()) {
                break;
            }
        }
        assertThat(kills).as("the pipeline was killed").isGreaterThanOrEqualTo(3);
        assertThat(killsMidStream).as("kills that landed while buckets were being published").isGreaterThanOrEqualTo(2);
        Path lastLog = dir.resolve("last.log");
        Process last = MallardJar.start(lastLog, "run", config.toString());
        try {
            // The kills may already have published every bucket: the stop below must still find a running pipeline.
            MallardJar.awaitLog(last, lastLog, "pipeline started");
            // Every partition goes idle at the end of the topic, which closes every bucket.
            Await.until("every bucket published", Duration.ofMinutes(3),
                    () -> !last.isAlive() || published(out).keySet().containsAll(reference.keySet()));
            assertThat(last.isAlive()).as(Files.readString(lastLog)).isTrue();
        } finally {
            last.destroy();
            assertThat(last.waitFor(60, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(last.exitValue()).as(Files.readString(lastLog)).isZero();
        Map<String, List<Long>> published = published(out);
        assertThat(published.keySet()).containsExactlyInAnyOrderElementsOf(reference.keySet());
        reference.forEach((key, n) -> assertThat(published.get(key)).as("every publication of bucket %s", key).containsOnly(n));
    }
}
