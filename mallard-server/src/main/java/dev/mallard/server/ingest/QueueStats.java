// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.ingest;

import static java.util.Objects.requireNonNull;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;

/** What a queue has written, for {@code GET /v1/ingestion/queues} and {@code /metrics}. Thread-safe. */
final class QueueStats {
    static final Duration RATE_WINDOW = Duration.ofSeconds(60);

    private record Sample(Instant at, long rows) {}

    private final Clock clock;
    private final Instant started;
    private final Deque<Sample> recent = new ArrayDeque<>();
    private long batches;
    private long rows;
    private long bytes;
    private Instant lastBatchAt;
    private String minMark;
    private String maxMark;

    QueueStats(Clock clock) {
        this.clock = requireNonNull(clock, "clock is null");
        this.started = clock.instant();
    }

    /** @param live whether it was committed now (counted in the rate), not replayed from the log */
    synchronized void committed(CommitLog.Commit commit, boolean live) {
        batches += commit.batches().size();
        rows += commit.rows();
        bytes += commit.bytes();
        lastBatchAt = Instant.parse(commit.at());
        for (CommitLog.Mark mark : commit.marks()) {
            if (!mark.min().equals("null") && (minMark == null || mark.min().compareTo(minMark) < 0)) {
                minMark = mark.min();
            }
            if (!mark.max().equals("null") && (maxMark == null || mark.max().compareTo(maxMark) > 0)) {
                maxMark = mark.max();
            }
        }
        if (live) {
            recent.addLast(new Sample(clock.instant(), commit.rows()));
        }
    }

    synchronized long batches() {
        return batches;
    }

    synchronized long rows() {
        return rows;
    }

    synchronized long bytes() {
        return bytes;
    }

    synchronized Optional<Instant> lastBatchAt() {
        return Optional.ofNullable(lastBatchAt);
    }

    /** The least and greatest watermark timestamp over every batch, when the queue keeps watermarks and has some. */
    synchronized Optional<String[]> watermark() {
        return minMark == null || maxMark == null ? Optional.empty() : Optional.of(new String[] {minMark, maxMark});
    }

    /** Rows committed per second over the last minute (or since the server started, if that is shorter). */
    synchronized double rowsPerSecond() {
        Instant now = clock.instant();
        Instant from = now.minus(RATE_WINDOW);
        while (!recent.isEmpty() && recent.peekFirst().at().isBefore(from)) {
            recent.pollFirst();
        }
        long sum = recent.stream().mapToLong(Sample::rows).sum();
        Instant since = started.isAfter(from) ? started : from;
        double seconds = Math.max(1.0, Duration.between(since, now).toMillis() / 1000.0);
        return sum / seconds;
    }
}
