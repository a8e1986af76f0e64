// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.window;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.metrics.MetricsRegistry;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The series of one window (docs/windows.md), tagged {@code pipeline} and {@code window}. Times are event times
 * in seconds since the epoch; the gauges read NaN until there is a value.
 */
public final class WindowMetrics {
    private final Counter closed;
    private final Counter refusedLate;
    private final Counter refusedFuture;
    private final Counter recomputedLate;
    private final Counter finalizedReplays;
    private final Counter recomputes;
    private final AtomicLong watermarkMicros = new AtomicLong(Watermark.NONE);
    private final AtomicLong newestBucketMicros = new AtomicLong(Watermark.NONE);
    private final AtomicLong closedAtMicros = new AtomicLong(Watermark.NONE);
    private final InstantSource clock;

    public WindowMetrics(MetricsRegistry registry, String pipeline, String window) {
        this(registry, pipeline, window, InstantSource.system());
    }

    public WindowMetrics(MetricsRegistry registry, String pipeline, String window, InstantSource clock) {
        requireNonNull(registry, "registry is null");
        this.clock = requireNonNull(clock, "clock is null");
        MeterRegistry meters = registry.meters();
        Tags tags = Tags.of("pipeline", pipeline, "window", window);
        closed = Counter.builder("window_closed").description("Buckets the window closed and published.").tags(tags).register(meters);
        refusedLate = Counter.builder("window_late_rows").description("Records refused or recomputed because their bucket had closed.")
                .tags(tags).tag("outcome", "refused").register(meters);
        refusedFuture = Counter.builder("window_late_rows").description("Records refused or recomputed because their bucket had closed.")
                .tags(tags).tag("outcome", "future").register(meters);
        recomputedLate = Counter.builder("window_late_rows").description("Records refused or recomputed because their bucket had closed.")
                .tags(tags).tag("outcome", "recomputed").register(meters);
        finalizedReplays = Counter.builder("window_late_rows").description("Records refused or recomputed because their bucket had closed.")
                .tags(tags).tag("outcome", "finalized").register(meters);
        recomputes = Counter.builder("window_recomputes").description("Closed buckets republished whole after a late record joined them.")
                .tags(tags).register(meters);
        Gauge.builder("window_watermark_seconds", watermarkMicros, WindowMetrics::seconds)
                .description("The window's watermark, in event time.").tags(tags).register(meters);
        Gauge.builder("window_newest_bucket_start_seconds", newestBucketMicros, WindowMetrics::seconds)
                .description("The start of the newest bucket a record was written to.").tags(tags).register(meters);
        Gauge.builder("window_close_lag_seconds", this, WindowMetrics::closeLag)
                .description("How far the window's closes trail its watermark, in event time; 0 while closes keep up.")
                .tags(tags).register(meters);
    }

    void watermark(long micros) {
        watermarkMicros.set(micros);
    }

    void newestBucket(long micros) {
        newestBucketMicros.accumulateAndGet(micros, Math::max);
    }

    /** Records decided late on arrival: refused, refused as from the future, or admitted into a closed bucket. */
    void late(long refused, long future, long recomputed) {
        if (refused > 0) {
            refusedLate.increment(refused);
        }
        if (future > 0) {
            refusedFuture.increment(future);
        }
        if (recomputed > 0) {
            recomputedLate.increment(recomputed);
        }
    }

    /** Replayed records of buckets a previous owner of their partition already published: dropped. */
    void finalized(long replayed) {
        if (replayed > 0) {
            finalizedReplays.increment(replayed);
        }
    }

    void closed(long buckets, long republished, long watermark) {
        closed.increment(buckets);
        recomputes.increment(republished);
        closedAtMicros.set(watermark);
    }

    /** Where the window had closed when it started (its state's record), before any close of this run. */
    void closedAt(long watermark) {
        closedAtMicros.set(watermark);
    }

    /**
     * SQLFlow's reading: the watermark the data has reached minus how far closes have committed, in event time, so
     * zero whenever a close keeps up and growing while closes fail. No wall clock enters it: a quiet stream, or
     * old data replayed, is not a window falling behind.
     */
    private double closeLag() {
        long w = watermarkMicros.get();
        long settled = closedAtMicros.get();
        if (w == Watermark.NONE || settled == Watermark.NONE) {
            return 0;
        }
        return Math.max(0, w - settled) / 1e6;
    }

    private static double seconds(AtomicLong micros) {
        long value = micros.get();
        return value == Watermark.NONE ? Double.NaN : value / 1e6;
    }
}
