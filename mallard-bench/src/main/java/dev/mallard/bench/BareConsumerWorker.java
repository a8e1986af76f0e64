// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The limit: a kafka-clients consumer with its default settings that reads every message and does nothing with
 * it. It neither parses nor commits; touching each value's length only keeps the loop honest.
 */
final class BareConsumerWorker {
    private BareConsumerWorker() {}

    static WorkerReport run(String bootstrapServers, String topic, String group, long messages) {
        requireNonNull(bootstrapServers, "bootstrapServers is null");
        requireNonNull(topic, "topic is null");
        requireNonNull(group, "group is null");
        Map<String, Object> settings = Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ConsumerConfig.GROUP_ID_CONFIG, group,
                ConsumerConfig.CLIENT_ID_CONFIG, "bench-bare",
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        AtomicLong seen = new AtomicLong();
        long bytes = 0;
        long first = 0;
        long firstCpu = 0;
        long last;
        long lastCpu;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(settings, new ByteArrayDeserializer(), new ByteArrayDeserializer());
                Watchdog watchdog = Watchdog.start("the bare consumer", seen::get, messages, BenchWorker.IDLE_LIMIT)) {
            consumer.subscribe(List.of(topic));
            long count = 0;
            while (count < messages) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                if (records.isEmpty()) {
                    continue;
                }
                if (first == 0) {
                    first = System.nanoTime();
                    firstCpu = ProcessCpu.selfNanos();
                }
                for (ConsumerRecord<byte[], byte[]> record : records) {
                    bytes += record.value().length;
                }
                count += records.count();
                seen.set(count);
            }
            last = System.nanoTime();
            lastCpu = ProcessCpu.selfNanos();
        }
        long cpu = ProcessCpu.between(firstCpu, lastCpu);
        long peak = PeakRss.selfKib();
        if (bytes <= 0) {
            throw new IllegalStateException("the bare consumer read only empty messages");
        }
        return new WorkerReport(seen.get(), last - first, cpu, ProcessCpu.selfNanos(), peak, Map.of(), Map.of());
    }
}
