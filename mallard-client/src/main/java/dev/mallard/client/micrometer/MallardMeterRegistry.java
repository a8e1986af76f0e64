// SPDX-License-Identifier: Apache-2.0
package dev.mallard.client.micrometer;

import static java.util.Objects.requireNonNull;

import dev.mallard.client.ArrowProducer;
import dev.mallard.client.ProducerFullException;
import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.Measurement;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.step.StepMeterRegistry;
import io.micrometer.core.instrument.step.StepRegistryConfig;
import io.micrometer.core.instrument.util.NamedThreadFactory;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A Micrometer push registry (step semantics) that, every {@code step}, writes one row of {@link #SCHEMA} per meter
 * measurement into an ingestion queue through an {@link ArrowProducer}. Counters and timers report what happened
 * within the step; closing the registry publishes the last, partial step and then closes the producer.
 */
public final class MallardMeterRegistry extends StepMeterRegistry {
    /**
     * One row per measurement: {@code timestamp} (TIMESTAMP, UTC, microseconds: when the step was published),
     * {@code name} (the meter's name as registered, e.g. {@code http.server.requests}), {@code type} ({@code counter},
     * {@code gauge}, {@code timer}, {@code distribution_summary}, {@code long_task_timer}, {@code other}...),
     * {@code tags} (MAP(VARCHAR, VARCHAR)), {@code statistic} ({@code count}, {@code total}, {@code total_time},
     * {@code max}, {@code value}, {@code active_tasks}, {@code duration}...), {@code value} (DOUBLE; time in seconds),
     * {@code base_unit} (null when the meter has none). Gauges whose value is NaN (their object is gone) are skipped.
     */
    public static final Schema SCHEMA = new Schema(List.of(
            Field.notNullable("timestamp", new ArrowType.Timestamp(org.apache.arrow.vector.types.TimeUnit.MICROSECOND, null)),
            Field.notNullable("name", ArrowType.Utf8.INSTANCE),
            Field.notNullable("type", ArrowType.Utf8.INSTANCE),
            stringMap("tags"),
            Field.notNullable("statistic", ArrowType.Utf8.INSTANCE),
            Field.notNullable("value", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)),
            Field.nullable("base_unit", ArrowType.Utf8.INSTANCE)));

    private final ArrowProducer producer;
    private final AtomicLong dropped = new AtomicLong();

    /** Starts publishing every {@code config.step()}; {@code producer}'s schema must be {@link #SCHEMA}, and the registry closes it. */
    public MallardMeterRegistry(StepRegistryConfig config, Clock clock, ArrowProducer producer) {
        super(config, clock);
        this.producer = requireNonNull(producer, "producer is null");
        if (!producer.schema().equals(SCHEMA)) {
            throw new IllegalArgumentException("the producer's schema must be MallardMeterRegistry.SCHEMA, got " + producer.schema());
        }
        start(new NamedThreadFactory("mallard-metrics-publisher"));
    }

    /** A configuration that publishes every {@code step}, under the property prefix {@code mallard}. */
    public static StepRegistryConfig config(Duration step) {
        requireNonNull(step, "step is null");
        return new StepRegistryConfig() {
            @Override
            public String prefix() {
                return "mallard";
            }

            @Override
            public String get(String key) {
                return null;
            }

            @Override
            public Duration step() {
                return step;
            }
        };
    }

    private static Field stringMap(String name) {
        Field entries = new Field("entries", FieldType.notNullable(ArrowType.Struct.INSTANCE), List.of(
                Field.notNullable("key", ArrowType.Utf8.INSTANCE),
                Field.nullable("value", ArrowType.Utf8.INSTANCE)));
        return new Field(name, FieldType.nullable(new ArrowType.Map(false)), List.of(entries));
    }

    /** Rows dropped because the producer was full. */
    public long droppedRows() {
        return dropped.get();
    }

    @Override
    protected void publish() {
        Instant now = Instant.ofEpochMilli(clock.wallTime());
        for (Meter meter : getMeters()) {
            Meter.Id id = meter.getId();
            Map<String, String> tags = new LinkedHashMap<>();
            for (Tag tag : id.getTagsAsIterable()) {
                tags.put(tag.getKey(), tag.getValue());
            }
            String type = id.getType().name().toLowerCase(Locale.ROOT);
            for (Measurement measurement : meter.measure()) {
                double value = measurement.getValue();
                if (Double.isNaN(value)) {
                    continue;
                }
                try {
                    producer.addRow(now, id.getName(), type, tags, measurement.getStatistic().getTagValueRepresentation(), value, id.getBaseUnit());
                } catch (ProducerFullException | IllegalStateException e) {
                    dropped.incrementAndGet();
                }
            }
        }
    }

    @Override
    protected TimeUnit getBaseTimeUnit() {
        return TimeUnit.SECONDS;
    }

    @Override
    public void close() {
        try {
            super.close();
        } finally {
            producer.close();
        }
    }
}
