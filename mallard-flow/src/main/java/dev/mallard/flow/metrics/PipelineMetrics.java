// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.metrics;

import static java.util.Objects.requireNonNull;
import static java.util.concurrent.TimeUnit.NANOSECONDS;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.metrics.MetricsRegistry;
import dev.mallard.flow.config.PipelineConfig;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.InstantSource;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The meters of one running pipeline, under SQLFlow's series names (see {@code docs/metrics.md} for the
 * names as exposed). The runner calls one typed method per event; every meter carries the tag
 * {@code pipeline=<name>}.
 *
 * <p>Counters and histograms exist from construction, at zero, so a rate is defined from the first scrape.
 * Gauges appear with their first reading, because a zero before any reading would be a false one (a lag
 * observed at 1970, a state file of no bytes). The {@code state_*} meters exist only for a pipeline with a
 * state path; the state methods of one without throw.
 *
 * <p>The methods are safe from any thread and, once a meter exists, allocate nothing: meters are looked up
 * by enum ordinal, by partition number or by a string the caller already holds. Close it to remove its
 * meters from the registry, e.g. before a pipeline of the same name starts again in this process.
 */
public final class PipelineMetrics implements AutoCloseable {
    private static final int PHASES = Phase.values().length;
    private static final Tags RESULT_OK = Tags.of("result", "ok");
    private static final Tags RESULT_ERROR = Tags.of("result", "error");
    private static final String FLUSHES = "Sink flushes, by result: ok, or error for a sink write or flush that failed";
    private static final String COMMITS = "State transactions with their offsets, by result: ok, or error for one that failed";
    private static final String RETRIES = "Sink attempts retried after a failure";

    private final MeterRegistry meters;
    private final MetricsRegistry registry;
    private final Tags tags;
    private final InstantSource clock;
    private final boolean stateful;
    private final Set<Meter> owned = ConcurrentHashMap.newKeySet();

    private final Counter messages;
    private final Counter payloadBytes;
    private final Counter handlerRows;
    private final Counter rowsAccepted;
    private final Counter rowsWritten;
    private final Counter flushes;
    private volatile Counter failedFlushes;
    private final Counter retries;
    private final ConcurrentHashMap<String, Counter> windowRetries = new ConcurrentHashMap<>();
    /** {@code sink_rows_accepted} and {@code sink_rows_written} of the other sinks, by role and type ("manager\nkafka"). */
    private final ConcurrentHashMap<String, Counter[]> otherSinkRows = new ConcurrentHashMap<>();
    private final Timer sourceRead;
    private final Timer sinkFlush;
    private final Timer batch;
    private final Counter stateCommits;
    private volatile Counter failedStateCommits;
    private final Timer stateCommit;
    private final Tags pipelineSink;

    private final AtomicLong lastFlushRows = new AtomicLong();
    private final AtomicLong lagObservedAt = new AtomicLong();
    private final AtomicLong stateDbBytes = new AtomicLong();
    private volatile boolean lastFlushRowsShown;
    private volatile boolean lagObservedAtShown;
    private volatile boolean stateDbBytesShown;

    private final AtomicReferenceArray<Timer> phases = new AtomicReferenceArray<>(PHASES);
    /** Indexed by {@code code.ordinal() * PHASES + phase.ordinal()}. */
    private final AtomicReferenceArray<Counter> errors = new AtomicReferenceArray<>(ErrorCode.values().length * PHASES);
    private final ConcurrentHashMap<String, PartitionLags> lags = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, AtomicLong> tableRows = new ConcurrentHashMap<>();

    /** The metrics of {@code pipeline}, with the state meters when it has a state path. */
    public static PipelineMetrics of(MetricsRegistry registry, PipelineConfig.Pipeline pipeline) {
        requireNonNull(pipeline, "pipeline is null");
        return new PipelineMetrics(registry, pipeline.name(), pipeline.sink().type(), pipeline.statePath().isPresent(), InstantSource.system());
    }

    /** As {@link #PipelineMetrics(MetricsRegistry, String, String, boolean, InstantSource)} on the system clock. */
    public PipelineMetrics(MetricsRegistry registry, String pipeline, String sinkType, boolean stateful) {
        this(registry, pipeline, sinkType, stateful, InstantSource.system());
    }

    /**
     * @param pipeline the value of every meter's {@code pipeline} tag
     * @param stateful whether the pipeline has a state path, which decides whether the {@code state_*} meters
     *     exist
     * @param clock the wall clock behind {@code consumer_lag_observed_timestamp}
     * @throws IllegalStateException when the registry already holds a pipeline of that name
     */
    public PipelineMetrics(MetricsRegistry registry, String pipeline, String sinkType, boolean stateful, InstantSource clock) {
        this.registry = requireNonNull(registry, "registry is null");
        this.meters = registry.meters();
        requireNonNull(pipeline, "pipeline is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.stateful = stateful;
        // Micrometer hands back the existing meter for an existing name and tags, so a second object would
        // silently share counters with the first and its gauges would never be read.
        if (meters.find("message_count").tag("pipeline", pipeline).meter() != null) {
            throw new IllegalStateException("the metrics of pipeline " + pipeline + " are already registered; close them first");
        }
        this.tags = Tags.of("pipeline", pipeline);
        // SQLFlow's labels: the sink's type, and which of the pipeline's sinks it is (pipeline, manager for a window's).
        this.pipelineSink = Tags.of("sink", requireNonNull(sinkType, "sinkType is null"), "role", "pipeline");

        messages = counter("message_count", "messages", "Messages read from the source");
        payloadBytes = counter("message_payload_bytes", "bytes",
                "Bytes of message values read from the source; keys, headers and framing excluded");
        handlerRows = counter("handler_rows_read", null, "Rows the handler loaded into the batch table its SQL ran over");
        rowsAccepted = counter("sink_rows_accepted", null, "Result rows handed to the sink", pipelineSink);
        rowsWritten = counter("sink_rows_written", null, "Result rows the sink delivered", pipelineSink);
        flushes = counter("sink_flush_count", "flushes", FLUSHES, RESULT_OK);
        retries = counter("sink_retry_count", null, RETRIES, pipelineSink);
        sourceRead = latency("source_read_latency", "Time to read one poll of messages from the source");
        sinkFlush = latency("sink_flush_latency", "Time of a sink flush that succeeded");
        batch = latency("batch_processing_latency", "Time from a batch's first message to its flush");
        if (stateful) {
            stateCommits = counter("state_commit_count", "commits", COMMITS, RESULT_OK);
            stateCommit = latency("state_commit_latency", "Time to commit state and offsets together");
        } else {
            stateCommits = null;
            stateCommit = null;
        }
    }

    /**
     * One poll of the source: {@code count} messages of {@code payloadBytes} value bytes in all. An empty poll
     * counts too, its read time being real.
     */
    public void messagesRead(int count, long payloadBytes, long readNanos) {
        messages.increment(count);
        this.payloadBytes.increment(payloadBytes);
        sourceRead.record(readNanos, NANOSECONDS);
    }

    /** Rows the handler loaded into the batch table, the rows the SQL ran over. */
    public void handlerRowsRead(long rows) {
        handlerRows.increment(rows);
    }

    /**
     * How long one stage of a batch took, whether or not it succeeded: unlike {@code sink_flush_latency}, a
     * phase that fails after thirty seconds still shows thirty seconds.
     */
    public void phase(Phase phase, long nanos) {
        int index = phase.ordinal();
        Timer timer = phases.get(index);
        if (timer == null) {
            timer = registerPhase(phase);
        }
        timer.record(nanos, NANOSECONDS);
    }

    /** The pipeline's sink: rows handed to it, and rows it delivered (its flush returned). */
    public void sinkWritten(long rowsAccepted, long rowsWritten) {
        this.rowsAccepted.increment(rowsAccepted);
        this.rowsWritten.increment(rowsWritten);
    }

    /**
     * Rows handed to ({@code accepted}) or delivered by ({@code written}) one of the pipeline's other sinks: a window's
     * ({@code role="manager"}) or the dead-letter sink ({@code role="dlq"}), under the sink's type. Each series appears
     * with the sink's first rows.
     */
    public void otherSinkRows(String role, String sinkType, long accepted, long written) {
        requireNonNull(role, "role is null");
        requireNonNull(sinkType, "sinkType is null");
        Counter[] counters = otherSinkRows.computeIfAbsent(role + "\n" + sinkType, key -> new Counter[] {
                counter("sink_rows_accepted", null, "Result rows handed to the sink", Tags.of("sink", sinkType, "role", role)),
                counter("sink_rows_written", null, "Result rows the sink delivered", Tags.of("sink", sinkType, "role", role))});
        counters[0].increment(accepted);
        counters[1].increment(written);
    }

    /** A flush that succeeded: its rows become {@code sink_flush_num_rows}. */
    public void sinkFlushed(long rows, long nanos) {
        lastFlushRows.set(rows);
        if (!lastFlushRowsShown) {
            showLastFlushRows();
        }
        flushes.increment();
        sinkFlush.record(nanos, NANOSECONDS);
    }

    /** An attempt of the pipeline's sink retried. */
    public void sinkRetry() {
        retries.increment();
    }

    /** An attempt of a window's sink retried, counted under {@code role="manager"} and its sink's type. */
    public void windowSinkRetry(String sinkType) {
        Counter counter = windowRetries.get(requireNonNull(sinkType, "sinkType is null"));
        if (counter == null) {
            counter = windowRetries.computeIfAbsent(sinkType,
                    type -> counter("sink_retry_count", null, RETRIES, Tags.of("sink", type, "role", "manager")));
        }
        counter.increment();
    }

    /** A batch done, from its first message to its flush. */
    public void batchProcessed(long nanos) {
        batch.record(nanos, NANOSECONDS);
    }

    /** One failure, counted by its code's class, domain and code and by the phase it happened in. */
    public void error(ErrorCode code, Phase phase) {
        int index = code.ordinal() * PHASES + phase.ordinal();
        Counter counter = errors.get(index);
        if (counter == null) {
            counter = registerError(code, phase);
        }
        counter.increment();
        // As SQLFlow counts them: a failed sink write or flush is a flush with result=error, a failed commit a commit.
        if (phase == Phase.SINK_WRITE || phase == Phase.SINK_FLUSH) {
            failedFlushes().increment();
        } else if (phase == Phase.STATE_COMMIT && stateful) {
            failedStateCommits().increment();
        }
    }

    private synchronized Counter failedFlushes() {
        if (failedFlushes == null) {
            failedFlushes = counter("sink_flush_count", "flushes", FLUSHES, RESULT_ERROR);
        }
        return failedFlushes;
    }

    private synchronized Counter failedStateCommits() {
        if (failedStateCommits == null) {
            failedStateCommits = counter("state_commit_count", "commits", COMMITS, RESULT_ERROR);
        }
        return failedStateCommits;
    }

    /**
     * The lag of one partition, updated in place; also stamps {@code consumer_lag_observed_timestamp} with
     * now, because a consumer cut off from its brokers keeps reporting its last lag and only the stamp's
     * age tells.
     */
    public void consumerLag(String topic, int partition, long lag) {
        if (partition < 0) {
            throw new IllegalArgumentException("partition " + partition + " is negative");
        }
        PartitionLags partitions = lags.get(topic);
        if (partitions == null) {
            partitions = lags.computeIfAbsent(topic, PartitionLags::new);
        }
        AtomicLong value = partitions.get(partition);
        if (value == null) {
            value = registerLag(partitions, partition);
        }
        value.set(lag);
        lagObservedAt.set(clock.millis() / 1000);
        if (!lagObservedAtShown) {
            showLagObservedAt();
        }
    }

    /** Drops the lag series of a partition this consumer no longer owns, so its last lag stops showing. */
    public void partitionRevoked(String topic, int partition) {
        PartitionLags partitions = lags.get(requireNonNull(topic, "topic is null"));
        if (partition >= 0 && partitions != null && partitions.remove(partition) != null) {
            Meter gauge = meters.find("consumer_lag").tags(tags).tag("topic", topic).tag("partition", Integer.toString(partition)).meter();
            if (gauge != null) {
                owned.remove(gauge);
                meters.remove(gauge);
            }
        }
    }

    /** A state transaction committed together with its offsets. */
    public void stateCommitted(long nanos) {
        requireState();
        stateCommits.increment();
        stateCommit.record(nanos, NANOSECONDS);
    }

    public void stateDbSize(long bytes) {
        requireState();
        stateDbBytes.set(bytes);
        if (!stateDbBytesShown) {
            showStateDbBytes();
        }
    }

    public void stateTableRows(String table, long rows) {
        requireState();
        AtomicLong value = tableRows.get(table);
        if (value == null) {
            value = registerTableRows(table);
        }
        value.set(rows);
    }

    /** Removes this pipeline's meters from the registry; later calls still count, unseen. */
    @Override
    public void close() {
        for (Meter meter : owned) {
            meters.remove(meter);
        }
        owned.clear();
    }

    private Counter counter(String name, String unit, String description) {
        return counter(name, unit, description, Tags.empty());
    }

    private Counter counter(String name, String unit, String description, Tags extra) {
        return own(Counter.builder(name).baseUnit(unit).description(description).tags(tags).tags(extra).register(meters));
    }

    private Timer latency(String name, String description) {
        return own(registry.latency(name, description, tags));
    }

    private void gauge(String name, String unit, String description, Tags extra, AtomicLong value) {
        own(Gauge.builder(name, value, AtomicLong::get)
                .baseUnit(unit)
                .description(description)
                .tags(tags)
                .tags(extra)
                .strongReference(true)
                .register(meters));
    }

    private <M extends Meter> M own(M meter) {
        owned.add(meter);
        return meter;
    }

    private synchronized Timer registerPhase(Phase phase) {
        Timer timer = phases.get(phase.ordinal());
        if (timer == null) {
            timer = own(registry.latency("phase_duration", "Time of each stage of a batch, failed or not",
                    tags.and("phase", phase.label())));
            phases.set(phase.ordinal(), timer);
        }
        return timer;
    }

    private synchronized Counter registerError(ErrorCode code, Phase phase) {
        int index = code.ordinal() * PHASES + phase.ordinal();
        Counter counter = errors.get(index);
        if (counter == null) {
            counter = own(Counter.builder("error_count")
                    .description("Failures, by error code and the phase they happened in")
                    .tags(tags)
                    .tags("class", code.errorClass(), "domain", code.domain(), "code", code.code(), "phase", phase.label())
                    .register(meters));
            errors.set(index, counter);
        }
        return counter;
    }

    private synchronized AtomicLong registerLag(PartitionLags partitions, int partition) {
        AtomicLong value = partitions.get(partition);
        if (value == null) {
            value = new AtomicLong();
            gauge("consumer_lag", "messages", "Messages between the last one read and the partition's end",
                    Tags.of("topic", partitions.topic, "partition", Integer.toString(partition)), value);
            partitions.put(partition, value);
        }
        return value;
    }

    private synchronized AtomicLong registerTableRows(String table) {
        AtomicLong value = tableRows.get(requireNonNull(table, "table is null"));
        if (value == null) {
            value = new AtomicLong();
            gauge("state_table_rows", "rows", "Rows in each table of the state database", Tags.of("table", table), value);
            tableRows.put(table, value);
        }
        return value;
    }

    private synchronized void showLastFlushRows() {
        if (!lastFlushRowsShown) {
            gauge("sink_flush_num_rows", "rows", "Rows in the last sink flush that succeeded", Tags.empty(), lastFlushRows);
            lastFlushRowsShown = true;
        }
    }

    private synchronized void showLagObservedAt() {
        if (!lagObservedAtShown) {
            gauge("consumer_lag_observed_timestamp", "seconds",
                    "When consumer_lag was last observed, in Unix seconds; a lag is only as current as this",
                    Tags.empty(), lagObservedAt);
            lagObservedAtShown = true;
        }
    }

    private synchronized void showStateDbBytes() {
        if (!stateDbBytesShown) {
            gauge("state_db_size_bytes", "bytes", "Size of the state database file", Tags.empty(), stateDbBytes);
            stateDbBytesShown = true;
        }
    }

    private void requireState() {
        if (!stateful) {
            throw new IllegalStateException("the pipeline has no state path, so it has no state metrics");
        }
    }

    /**
     * One topic's lags, indexed by partition number: partitions are small dense integers, and an array
     * read needs neither a boxed key nor a lock.
     */
    private static final class PartitionLags {
        private final String topic;
        private volatile AtomicLong[] byPartition = new AtomicLong[0];

        PartitionLags(String topic) {
            this.topic = requireNonNull(topic, "topic is null");
        }

        AtomicLong get(int partition) {
            AtomicLong[] current = byPartition;
            return partition < current.length ? current[partition] : null;
        }

        synchronized void put(int partition, AtomicLong value) {
            AtomicLong[] grown = byPartition;
            if (partition >= grown.length) {
                grown = Arrays.copyOf(grown, partition + 1);
            } else {
                grown = grown.clone();
            }
            grown[partition] = value;
            byPartition = grown;
        }

        synchronized AtomicLong remove(int partition) {
            AtomicLong[] current = byPartition;
            if (partition >= current.length || current[partition] == null) {
                return null;
            }
            AtomicLong[] shrunk = current.clone();
            AtomicLong removed = shrunk[partition];
            shrunk[partition] = null;
            byPartition = shrunk;
            return removed;
        }
    }
}
