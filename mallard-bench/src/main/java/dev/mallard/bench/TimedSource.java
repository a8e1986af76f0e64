// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import static java.util.Objects.requireNonNull;

import dev.mallard.flow.source.Message;
import dev.mallard.flow.source.Source;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The pipeline's own source with a stopwatch around it: it notes when the first message arrives and when the batch
 * holding the last expected message has been committed back to the source, which is the last thing a batch does.
 * At that moment it also takes the pipeline's metrics, before the runner closes them.
 */
final class TimedSource implements Source {
    private final Source delegate;
    private final long expected;
    private final Supplier<String> scrape;
    private volatile long polled;
    private long firstPollStarted;
    private long firstMessage;
    private long firstCpu;
    private long lastCpu;
    private long lastCommitted;
    private long commitNanos;
    private String finalMetrics = "";
    // The next offset committed per partition: the topic is fresh, so their sum is the messages committed, which is
    // what counts (what was polled may run ahead of it).
    private final java.util.Map<Partition, Long> committed = new java.util.HashMap<>();

    TimedSource(Source delegate, long expected, Supplier<String> scrape) {
        this.delegate = requireNonNull(delegate, "delegate is null");
        this.expected = expected;
        this.scrape = requireNonNull(scrape, "scrape is null");
    }

    @Override
    public List<Message> poll(Duration timeout, int max) {
        long started = System.nanoTime();
        if (firstPollStarted == 0) {
            firstPollStarted = started;
        }
        List<Message> messages = delegate.poll(timeout, max);
        if (!messages.isEmpty() && firstMessage == 0) {
            firstMessage = System.nanoTime();
            firstCpu = ProcessCpu.selfNanos();
        }
        polled += messages.size();
        return messages;
    }

    @Override
    public void commit(Map<Partition, Long> nextOffsets) {
        long started = System.nanoTime();
        delegate.commit(nextOffsets);
        long done = System.nanoTime();
        if (lastCommitted != 0) {
            return;
        }
        commitNanos += done - started;
        committed.putAll(nextOffsets);
        if (committed.values().stream().mapToLong(Long::longValue).sum() >= expected) {
            lastCommitted = done;
            lastCpu = ProcessCpu.selfNanos();
            finalMetrics = scrape.get();
        }
    }

    @Override
    public void processed(Map<Partition, Long> nextOffsets) {
        delegate.processed(nextOffsets);
    }

    @Override
    public java.util.Set<Partition> takeRevoked() {
        return delegate.takeRevoked();
    }

    @Override
    public java.util.Optional<java.util.Set<Partition>> assignment() {
        return delegate.assignment();
    }

    @Override
    public void close() {
        delegate.close();
    }

    /** Messages handed to the pipeline so far; read by the watchdog's thread. */
    long polled() {
        return polled;
    }

    boolean finished() {
        return lastCommitted != 0;
    }

    /** From the first message's arrival to the commit of the batch that held the last one. */
    long elapsedNanos() {
        return lastCommitted - firstMessage;
    }

    /** CPU time the process used over {@link #elapsedNanos()}, or -1. */
    long cpuNanos() {
        return ProcessCpu.between(firstCpu, lastCpu);
    }

    /** How long the pipeline waited for the first message (joining the group, the first fetch): not measured. */
    long waitBeforeFirstNanos() {
        return firstMessage - firstPollStarted;
    }

    /** Time spent in {@link #commit} up to and including the last batch's. */
    long commitNanos() {
        return commitNanos;
    }

    /** The Prometheus text the pipeline exported right after its last commit. */
    String finalMetrics() {
        return finalMetrics;
    }
}
