// SPDX-License-Identifier: Apache-2.0
package dev.mallard.testkit;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/** Plain kafka-clients producers and consumers, the way any other client would reach the broker. */
final class Records {
    /** What a consumer read: values in arrival order and the count per partition. */
    record Consumed(List<String> values, Map<Integer, Integer> perPartition) {}

    private Records() {}

    /** Sends {@code count} keyed records and waits for every acknowledgement. */
    static void produce(String bootstrapServers, String topic, int count) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(
                Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers),
                new ByteArraySerializer(), new ByteArraySerializer())) {
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                sent.add(producer.send(new ProducerRecord<>(topic, bytes("key-" + i), bytes("value-" + i))));
            }
            for (Future<RecordMetadata> acknowledgement : sent) {
                acknowledgement.get();
            }
        }
    }

    /**
     * Reads with a consumer group from the committed offsets (or the earliest) until {@code expected} records have
     * come or 20 s have passed, then polls once more to catch any extra, and commits.
     */
    static Consumed consume(String bootstrapServers, String topic, String group, int expected) {
        List<String> values = new ArrayList<>();
        Map<Integer, Integer> perPartition = new TreeMap<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ConsumerConfig.GROUP_ID_CONFIG, group,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false),
                new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            boolean extraPoll = false;
            while (!extraPoll && System.nanoTime() < deadline) {
                extraPoll = values.size() >= expected;
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(extraPoll ? 500 : 200))) {
                    values.add(new String(record.value(), StandardCharsets.UTF_8));
                    perPartition.merge(record.partition(), 1, Integer::sum);
                }
            }
            consumer.commitSync();
        }
        return new Consumed(values, perPartition);
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
