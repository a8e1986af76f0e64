// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.window;

import static java.util.Objects.requireNonNull;

import dev.mallard.flow.source.Source.Partition;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * One window's watermark W: the event time up to which every bucket is complete. Pure logic, driven by the
 * pipeline (and by the simulator in tests) with event times in microseconds and a monotonic clock in nanoseconds.
 *
 * <ul>
 *   <li>Per partition, candidate(p) = newest event time placed from p - grace; W is the minimum over the
 *       partitions that could still deliver.
 *   <li>A partition that has delivered nothing holds W where it is, and so does one whose session failed,
 *       which is never idle.
 *   <li>A partition silent for idle_close (from the later of its last record and its assignment) leaves the
 *       minimum once its source confirmed it is read to its end ({@link #readToEnd}); when every partition is idle,
 *       W = newest event time + one bucket, which closes everything held. Silence alone is not enough: a process too
 *       slow to read a partition's waiting records would otherwise close the buckets those records are on time for.
 *   <li>A partition another member now holds (revoked) leaves the minimum.
 *   <li>W never moves backwards.
 * </ul>
 *
 * Not thread-safe: the pipeline's thread owns it.
 */
public final class Watermark {
    /** No watermark yet: nothing is closed. */
    public static final long NONE = Long.MIN_VALUE;

    private final long sizeMicros;
    private final long graceMicros;
    private final long idleNanos;
    private final Map<Partition, PartitionState> partitions = new HashMap<>();
    private long value;
    private long newest = NONE;

    private static final class PartitionState {
        long newest = NONE;
        long activeSinceNanos;
        boolean failed;
        boolean atEnd;

        PartitionState(long nowNanos) {
            this.activeSinceNanos = nowNanos;
        }
    }

    /** @param initial the watermark recorded in the state, or {@link #NONE} */
    public Watermark(long sizeSeconds, long graceSeconds, long idleCloseSeconds, long initial) {
        if (sizeSeconds < 1 || graceSeconds < 0 || idleCloseSeconds < 1) {
            throw new IllegalArgumentException("size " + sizeSeconds + ", grace " + graceSeconds + ", idle " + idleCloseSeconds);
        }
        this.sizeMicros = sizeSeconds * 1_000_000L;
        this.graceMicros = graceSeconds * 1_000_000L;
        this.idleNanos = idleCloseSeconds * 1_000_000_000L;
        this.value = initial;
    }

    /** W in microseconds since the epoch, or {@link #NONE}. */
    public long value() {
        return value;
    }

    /** The partitions this reader holds now: new ones start their idle clock, missing ones leave the minimum. */
    public void assignment(Set<Partition> held, long nowNanos) {
        requireNonNull(held, "held is null");
        partitions.keySet().retainAll(held);
        for (Partition partition : held) {
            partitions.computeIfAbsent(partition, p -> new PartitionState(nowNanos));
        }
    }

    /** The partition's session failed: it holds the minimum and is never idle until it delivers again. */
    public void failed(Partition partition, long nowNanos) {
        partitions.computeIfAbsent(partition, p -> new PartitionState(nowNanos)).failed = true;
    }

    /**
     * The partition is read again from an earlier position to rebuild its rows: until the replay places records it
     * holds W where it is, as a partition that has delivered nothing does, so no bucket closes half rebuilt.
     */
    public void rebuilding(Partition partition, long nowNanos) {
        PartitionState state = partitions.computeIfAbsent(partition, p -> new PartitionState(nowNanos));
        state.newest = NONE;
        state.activeSinceNanos = Math.max(state.activeSinceNanos, nowNanos);
        state.atEnd = false;
    }

    /** The source confirmed the partition has no record this reader has not read: silent, it may count as idle. */
    public void readToEnd(Partition partition) {
        PartitionState state = partitions.get(partition);
        if (state != null) {
            state.atEnd = true;
        }
    }

    /** Whether the source confirmed the partition read to its end and nothing arrived from it since. */
    public boolean isReadToEnd(Partition partition) {
        PartitionState state = partitions.get(partition);
        return state != null && state.atEnd;
    }

    /** The partition's source answers again after a failure: silent, it may count as idle again. */
    public void recovered(Partition partition) {
        PartitionState state = partitions.get(partition);
        if (state != null) {
            state.failed = false;
        }
    }

    /** Whether the partition's session failed ({@link #failed}) and it has not delivered or recovered since. */
    public boolean isFailed(Partition partition) {
        PartitionState state = partitions.get(partition);
        return state != null && state.failed;
    }

    /** The partitions silent for idle_close_seconds at this instant, failed or not. */
    public Set<Partition> silent(long nowNanos) {
        Set<Partition> silent = new java.util.HashSet<>();
        partitions.forEach((partition, state) -> {
            if (nowNanos - state.activeSinceNanos >= idleNanos) {
                silent.add(partition);
            }
        });
        return silent;
    }

    /** A record arrived from the partition (placed or refused): its idle clock restarts. */
    public void arrived(Partition partition, long nowNanos) {
        PartitionState state = partitions.computeIfAbsent(partition, p -> new PartitionState(nowNanos));
        state.activeSinceNanos = Math.max(state.activeSinceNanos, nowNanos);
        state.failed = false;
        state.atEnd = false;
    }

    /** A record with this event time was written (committed) from the partition. */
    public void placed(Partition partition, long eventMicros, long nowNanos) {
        arrived(partition, nowNanos);
        PartitionState state = partitions.get(partition);
        state.newest = Math.max(state.newest, eventMicros);
        newest = Math.max(newest, eventMicros);
    }

    /**
     * Moves W past every bucket placed so far (newest event time + one bucket), as if every partition had gone
     * idle. For {@code dev invoke}, which runs one batch and then shows everything the window would publish.
     *
     * @return true when W moved forward
     */
    public boolean closeEverything() {
        long candidate = newest == NONE ? NONE : newest + sizeMicros;
        if (candidate > value) {
            value = candidate;
            return true;
        }
        return false;
    }

    /**
     * Recomputes W at this instant of the monotonic clock.
     *
     * @return true when W moved forward
     */
    public boolean advance(long nowNanos) {
        if (partitions.isEmpty()) {
            return false;
        }
        long minimum = Long.MAX_VALUE;
        boolean allIdle = true;
        boolean held = false;
        for (PartitionState state : partitions.values()) {
            boolean idle = !state.failed && state.atEnd && nowNanos - state.activeSinceNanos >= idleNanos;
            if (idle) {
                continue;
            }
            allIdle = false;
            if (state.failed || state.newest == NONE) {
                held = true;
            } else {
                minimum = Math.min(minimum, state.newest - graceMicros);
            }
        }
        long candidate;
        if (allIdle) {
            candidate = newest == NONE ? NONE : newest + sizeMicros;
        } else if (held) {
            candidate = NONE;
        } else {
            candidate = minimum;
        }
        if (candidate > value) {
            value = candidate;
            return true;
        }
        return false;
    }
}
