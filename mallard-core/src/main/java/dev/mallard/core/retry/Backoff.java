// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.retry;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.random.RandomGenerator;

/**
 * Capped exponential backoff with jitter, Mallard's one: the n-th consecutive failure waits a random time between
 * half and all of {@code min(max, initial * 2^(n-1))}, so many clients dropped at once do not retry in step. Used by
 * the WebSocket source's reconnects and the sinks' {@code sink.retry} ladder. (mallard-client has its own: it runs on
 * Java 17 and depends on no Mallard module.)
 */
public record Backoff(Duration initial, Duration max) {
    /** Reconnects: from a quarter second to half a minute. */
    public static final Backoff DEFAULT = new Backoff(Duration.ofMillis(250), Duration.ofSeconds(30));

    public Backoff {
        requireNonNull(initial, "initial is null");
        requireNonNull(max, "max is null");
        if (initial.isNegative() || max.compareTo(initial) < 0) {
            throw new IllegalArgumentException("backoff needs 0 <= initial <= max, was " + initial + ", " + max);
        }
    }

    /** The wait before attempt {@code failures + 1}, after {@code failures >= 1} consecutive failures. */
    public Duration delay(int failures, RandomGenerator random) {
        long cap = max.toMillis();
        long base = initial.toMillis();
        for (int i = 1; i < failures && base < cap; i++) {
            base *= 2;
        }
        base = Math.min(base, cap);
        return Duration.ofMillis(base / 2 + random.nextLong(base / 2 + 1));
    }
}
