// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * The peer: Kafka Streams counting events by city the way its documentation would, parsing each message with
 * Jackson, grouping by the city (which repartitions through the broker) and counting into a state store. Everything
 * else is Streams' default: at-least-once, one stream thread, the record cache, commits every 30 s.
 */
final class StreamsWorker {
    static final String STORE = "city-counts";
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(30);

    private StreamsWorker() {}

    /** Which store the count goes into. */
    enum Store {
        ROCKSDB, IN_MEMORY
    }

    static WorkerReport run(String bootstrapServers, String topic, String applicationId, long messages, Path stateDir, Store store)
            throws InterruptedException {
        requireNonNull(bootstrapServers, "bootstrapServers is null");
        requireNonNull(topic, "topic is null");
        requireNonNull(applicationId, "applicationId is null");
        requireNonNull(stateDir, "stateDir is null");
        requireNonNull(store, "store is null");
        Properties settings = new Properties();
        settings.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        settings.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        settings.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        Clock clock = new Clock(messages);
        ObjectMapper json = new ObjectMapper();
        Materialized<String, Long, KeyValueStore<Bytes, byte[]>> materialized = (store == Store.IN_MEMORY
                ? Materialized.<String, Long>as(Stores.inMemoryKeyValueStore(STORE))
                : Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as(STORE))
                .withKeySerde(Serdes.String())
                .withValueSerde(Serdes.Long());
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(topic, Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()))
                .peek((key, value) -> clock.arrived())
                .groupBy((key, value) -> city(json, value), Grouped.with(Serdes.String(), Serdes.ByteArray()))
                // count() with a tally: the same aggregation count() runs, plus the stopwatch.
                .aggregate(() -> 0L, (city, value, total) -> {
                    clock.counted();
                    return total + 1;
                }, materialized);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Map<String, Long> counts = new HashMap<>();
        long peak;
        KafkaStreams streams = new KafkaStreams(builder.build(), settings);
        // Not try-with-resources: KafkaStreams.close() without a timeout can wait forever.
        try (Watchdog watchdog = Watchdog.start("Kafka Streams", clock::progress, messages, BenchWorker.IDLE_LIMIT)) {
            streams.setUncaughtExceptionHandler(e -> {
                failure.set(e);
                clock.abort();
                return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
            });
            streams.start();
            clock.await();
            if (failure.get() != null) {
                throw new IllegalStateException("Kafka Streams failed: " + failure.get(), failure.get());
            }
            ReadOnlyKeyValueStore<String, Long> view = streams.store(
                    StoreQueryParameters.fromNameAndType(STORE, QueryableStoreTypes.<String, Long>keyValueStore()));
            try (KeyValueIterator<String, Long> all = view.all()) {
                while (all.hasNext()) {
                    KeyValue<String, Long> entry = all.next();
                    counts.put(entry.key, entry.value);
                }
            }
            peak = PeakRss.selfKib();
        } finally {
            streams.close(CLOSE_TIMEOUT);
        }
        return new WorkerReport(clock.progress(), clock.elapsedNanos(), clock.cpuNanos(), ProcessCpu.selfNanos(), peak, counts, Map.of());
    }

    private static String city(ObjectMapper json, byte[] value) {
        try {
            return json.readTree(value).path("properties").path("city").asText();
        } catch (IOException e) {
            throw new UncheckedIOException("a message is not JSON", e);
        }
    }

    /** When the first message reached the topology and when the count took in the last one. */
    private static final class Clock {
        private final long expected;
        private final AtomicLong counted = new AtomicLong();
        private final CountDownLatch done = new CountDownLatch(1);
        private volatile long first;
        private volatile long last;
        private volatile long firstCpu;
        private volatile long lastCpu;

        Clock(long expected) {
            this.expected = expected;
        }

        void arrived() {
            if (first == 0) {
                first = System.nanoTime();
                firstCpu = ProcessCpu.selfNanos();
            }
        }

        void counted() {
            if (counted.incrementAndGet() == expected) {
                last = System.nanoTime();
                lastCpu = ProcessCpu.selfNanos();
                done.countDown();
            }
        }

        void abort() {
            done.countDown();
        }

        void await() throws InterruptedException {
            done.await();
        }

        long progress() {
            return counted.get();
        }

        long elapsedNanos() {
            return last - first;
        }

        long cpuNanos() {
            return ProcessCpu.between(firstCpu, lastCpu);
        }
    }
}
