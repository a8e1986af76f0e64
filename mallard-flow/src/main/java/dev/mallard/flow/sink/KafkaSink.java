// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mallard.core.arrow.ArrowExport;
import dev.mallard.core.arrow.JsonLinesWriter;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlText;
import dev.mallard.flow.kafka.KafkaClientSettings;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Produces each result row as one JSON message. {@link #flush} blocks until the brokers acknowledged every
 * message of the batch, so offsets are committed only after the output is durable.
 */
public final class KafkaSink implements Sink {
    private final KafkaProducer<byte[], byte[]> producer;
    private final String topic;
    private final String brokers;
    private final Optional<String> keyColumn;
    private final BufferAllocator allocator;
    private final ByteArrayOutputStream rows = new ByteArrayOutputStream(1 << 16);
    private final JsonLinesWriter writer = new JsonLinesWriter(rows);
    private final AtomicReference<Exception> failure = new AtomicReference<>();

    public KafkaSink(JsonNode block, JsonNode retry, BufferAllocator allocator) {
        requireNonNull(block, "block is null");
        this.allocator = requireNonNull(allocator, "allocator is null");
        this.topic = block.path("topic").asText();
        this.brokers = String.join(",", KafkaClientSettings.brokers(block));
        this.keyColumn = block.path("key").isTextual() ? Optional.of(block.path("key").asText()) : Optional.empty();
        Properties properties = KafkaClientSettings.common(block, "pipeline.sink.kafka");
        int deadlineMillis = retry.path("deadline_seconds").asInt(10) * 1000;
        properties.put(ProducerConfig.ACKS_CONFIG, "all");
        properties.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        properties.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        properties.put(ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(256 * 1024));
        properties.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, Integer.toString(deadlineMillis));
        properties.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, Integer.toString(Math.min(deadlineMillis, 30_000)));
        properties.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, Integer.toString(Math.max(deadlineMillis, Math.min(deadlineMillis, 30_000) + 5)));
        this.producer = KafkaClientSettings.producer(properties, block, "pipeline.sink.kafka", new ByteArraySerializer(), new ByteArraySerializer());
    }

    @Override
    public void write(ResultTable batch) {
        List<byte[]> keys = keyColumn.map(column -> keys(batch, column)).orElse(null);
        rows.reset();
        try (Statement statement = batch.connection().createStatement();
                ResultSet result = statement.executeQuery("SELECT * FROM " + batch.name());
                ArrowReader reader = ArrowExport.export(result, allocator, 8192)) {
            writer.writeAll(reader);
        } catch (SQLException | IOException e) {
            throw new MallardException(ErrorCode.SYSTEM_SINK_WRITE_FAILED, "kafka sink: cannot read the batch: " + e.getMessage(), e);
        }
        byte[] all = rows.toByteArray();
        int start = 0;
        int row = 0;
        for (int i = 0; i < all.length && failure.get() == null; i++) {
            // After the first failure the batch has failed: sending on would wait max.block.ms again for every row.
            if (all[i] == '\n') {
                byte[] value = java.util.Arrays.copyOfRange(all, start, i);
                byte[] key = keys == null ? null : keys.get(row);
                try {
                    producer.send(new ProducerRecord<>(topic, key, value), (metadata, exception) -> {
                        if (exception != null) {
                            failure.compareAndSet(null, exception);
                        }
                    });
                } catch (org.apache.kafka.common.KafkaException e) {
                    failure.compareAndSet(null, e);
                }
                start = i + 1;
                row++;
            }
        }
    }

    private static List<byte[]> keys(ResultTable batch, String column) {
        List<byte[]> keys = new ArrayList<>((int) batch.rows());
        String quoted = SqlText.identifier(column);
        try (Statement statement = batch.connection().createStatement();
                ResultSet result = statement.executeQuery("SELECT CAST(" + quoted + " AS VARCHAR) FROM " + batch.name())) {
            while (result.next()) {
                String key = result.getString(1);
                if (key == null) {
                    throw new MallardException(ErrorCode.USER_SINK_KEY_NULL, "kafka sink: key column '" + column + "' is null in row "
                            + (keys.size() + 1) + " of the batch; make the handler SQL give every row a key (e.g. coalesce)");
                }
                keys.add(key.getBytes(StandardCharsets.UTF_8));
            }
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "kafka sink: key column '" + column
                    + "' is not in the handler's result: " + e.getMessage().lines().findFirst().orElse(""));
        }
        return keys;
    }

    @Override
    public void flush() {
        producer.flush();
        Exception failed = failure.getAndSet(null);
        if (failed != null) {
            boolean unreachable = failed instanceof RetriableException || failed instanceof org.apache.kafka.common.errors.TimeoutException;
            throw new MallardException(unreachable ? ErrorCode.SYSTEM_SINK_UNREACHABLE : ErrorCode.SYSTEM_SINK_WRITE_FAILED,
                    "kafka sink: topic " + topic + " at " + brokers + ": " + failed.getMessage(), failed);
        }
    }

    @Override
    public void close() {
        producer.close(java.time.Duration.ofSeconds(5));
    }
}
