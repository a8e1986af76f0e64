// SPDX-License-Identifier: Apache-2.0
package dev.mallard.testkit;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Publishes test messages to a Kafka topic, as fast as one producer reasonably goes: batched and compressed, each
 * acknowledged by all in-sync replicas, idempotent so retries do not duplicate. Messages have no key, so they
 * spread over the partitions batch by batch.
 */
public final class Publisher implements AutoCloseable {
    /** How long {@link #connect} waits for a broker to answer before it calls the brokers unreachable. */
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);

    private final String bootstrapServers;
    private final Progress progress;
    private final Admin admin;
    private final KafkaProducer<byte[], byte[]> producer;

    private Publisher(String bootstrapServers, Progress progress, Admin admin, KafkaProducer<byte[], byte[]> producer) {
        this.bootstrapServers = requireNonNull(bootstrapServers, "bootstrapServers is null");
        this.progress = requireNonNull(progress, "progress is null");
        this.admin = requireNonNull(admin, "admin is null");
        this.producer = requireNonNull(producer, "producer is null");
    }

    /** {@link #connect(String, Progress, Duration)} with {@link #DEFAULT_CONNECT_TIMEOUT}. */
    public static Publisher connect(String bootstrapServers, Progress progress) {
        return connect(bootstrapServers, progress, DEFAULT_CONNECT_TIMEOUT);
    }

    /**
     * Connects to the brokers and waits until one answers, so a wrong address fails here, quickly and by name,
     * rather than as a produce timeout a minute later.
     *
     * @throws MallardException {@code system.kafka.unreachable} when no broker answers within the timeout;
     *     {@code user.cli.argument_invalid} when the servers are malformed or their names do not resolve
     */
    public static Publisher connect(String bootstrapServers, Progress progress, Duration connectTimeout) {
        requireNonNull(bootstrapServers, "bootstrapServers is null");
        requireNonNull(progress, "progress is null");
        requireNonNull(connectTimeout, "connectTimeout is null");
        Admin admin = client(bootstrapServers, () -> Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers)));
        try {
            awaitBroker(admin, bootstrapServers, connectTimeout);
            KafkaProducer<byte[], byte[]> producer = client(bootstrapServers, () -> new KafkaProducer<>(Map.<String, Object>of(
                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                    ProducerConfig.CLIENT_ID_CONFIG, "mallard-publish",
                    ProducerConfig.ACKS_CONFIG, "all",
                    ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                    // Full batches are what make a single producer fast; 10 ms of waiting fills them at any rate that matters.
                    ProducerConfig.LINGER_MS_CONFIG, 10,
                    ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024,
                    ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4"),
                    new ByteArraySerializer(), new ByteArraySerializer()));
            return new Publisher(bootstrapServers, progress, admin, producer);
        } catch (RuntimeException e) {
            admin.close(Duration.ZERO);
            throw e;
        }
    }

    /**
     * Creates the topic unless it exists, with this many partitions or else the broker's default, and waits until
     * the broker serves it. Returns whether it created the topic.
     */
    public boolean ensureTopic(String topic, Optional<Integer> partitions) {
        return Topics.ensure(admin, requireNonNull(topic, "topic is null"), requireNonNull(partitions, "partitions is null"));
    }

    /** Publishes {@code count} events from the generator and returns how many the brokers acknowledged (all of them). */
    public long publish(String topic, EventGenerator events, long count) {
        requireNonNull(topic, "topic is null");
        requireNonNull(events, "events is null");
        if (count < 0) {
            throw new IllegalArgumentException("count must not be negative, was " + count);
        }
        Delivery delivery = new Delivery(topic, count);
        for (long i = 0; i < count; i++) {
            delivery.send(events.next());
        }
        return delivery.finish();
    }

    /** Publishes each non-blank line of the file, as it is, one message per line. */
    public long publishLines(String topic, Path file) {
        return publishLines(topic, file, Long.MAX_VALUE);
    }

    /** Publishes the first {@code limit} non-blank lines of the file, as they are, one message per line. */
    public long publishLines(String topic, Path file, long limit) {
        requireNonNull(topic, "topic is null");
        requireNonNull(file, "file is null");
        if (limit < 0) {
            throw new IllegalArgumentException("limit must not be negative, was " + limit);
        }
        Delivery delivery = new Delivery(topic, -1);
        try (BufferedReader lines = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            long sent = 0;
            String line;
            while (sent < limit && (line = lines.readLine()) != null) {
                if (!line.isBlank()) {
                    delivery.send(line.getBytes(StandardCharsets.UTF_8));
                    sent++;
                }
            }
        } catch (NoSuchFileException e) {
            throw new MallardException(ErrorCode.USER_CONFIG_NOT_FOUND, file + " does not exist", e);
        } catch (IOException e) {
            throw new MallardException(ErrorCode.USER_CONFIG_NOT_FOUND, "cannot read " + file + ": " + e.getMessage(), e);
        }
        return delivery.finish();
    }

    @Override
    public void close() {
        try {
            producer.close();
        } finally {
            admin.close();
        }
    }

    /** Sends without waiting per message; counts acknowledgements and keeps the first failure. */
    private final class Delivery implements Callback {
        private final String topic;
        private final long total;
        private final AtomicLong acknowledged = new AtomicLong();
        private final AtomicReference<Exception> failure = new AtomicReference<>();
        private final int partitions;
        private long sent;

        Delivery(String topic, long total) {
            this.topic = topic;
            this.total = total;
            // Round robin rather than the sticky partitioner: test data should reach every partition of the
            // topic, whatever the batching does, so multi-partition tests really read several partitions.
            this.partitions = Math.max(1, producer.partitionsFor(topic).size());
        }

        void send(byte[] value) {
            throwIfFailed();
            try {
                producer.send(new ProducerRecord<>(topic, (int) (sent++ % partitions), null, value), this);
            } catch (KafkaException e) {
                throw failure(e);
            }
            progress.update(acknowledged.get(), total);
        }

        long finish() {
            try {
                producer.flush();
            } catch (KafkaException e) {
                throw failure(e);
            } finally {
                progress.finish();
            }
            throwIfFailed();
            return acknowledged.get();
        }

        @Override
        public void onCompletion(RecordMetadata metadata, Exception exception) {
            if (exception == null) {
                acknowledged.incrementAndGet();
            } else {
                failure.compareAndSet(null, exception);
            }
        }

        private void throwIfFailed() {
            Exception first = failure.get();
            if (first != null) {
                throw failure(first);
            }
        }

        private MallardException failure(Exception e) {
            ErrorCode code = e instanceof TimeoutException ? ErrorCode.SYSTEM_KAFKA_UNREACHABLE : ErrorCode.SYSTEM_KAFKA_FAILED;
            return new MallardException(code, "publishing to " + topic + " at " + bootstrapServers + " failed after "
                    + acknowledged.get() + " messages: " + EmbeddedKafka.rootMessage(e), e);
        }
    }

    private static void awaitBroker(Admin admin, String bootstrapServers, Duration timeout) {
        try {
            admin.describeCluster(new DescribeClusterOptions().timeoutMs((int) timeout.toMillis()))
                    .nodes().get(timeout.toMillis() + 1_000, TimeUnit.MILLISECONDS);
        } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new MallardException(ErrorCode.SYSTEM_KAFKA_UNREACHABLE, "no Kafka broker answered at " + bootstrapServers
                    + " within " + timeout.toSeconds() + " s: " + EmbeddedKafka.rootMessage(e), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new MallardException(ErrorCode.SYSTEM_KAFKA_UNREACHABLE, "interrupted while connecting to " + bootstrapServers, e);
        }
    }

    /** Creates a client, turning Kafka's complaints about the servers themselves into a user fault. */
    private static <T> T client(String bootstrapServers, java.util.function.Supplier<T> create) {
        try {
            return create.get();
        } catch (KafkaException e) {
            if (e instanceof ConfigException || e.getCause() instanceof ConfigException) {
                throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID,
                        "bootstrap servers '" + bootstrapServers + "' are not usable: " + EmbeddedKafka.rootMessage(e), e);
            }
            throw new MallardException(ErrorCode.SYSTEM_KAFKA_FAILED,
                    "cannot create a Kafka client for " + bootstrapServers + ": " + EmbeddedKafka.rootMessage(e), e);
        }
    }
}
