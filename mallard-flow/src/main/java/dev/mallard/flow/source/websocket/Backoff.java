// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.source.websocket;

import java.time.Duration;
import java.util.random.RandomGenerator;

/**
 * Capped exponential backoff with jitter: the n-th consecutive failure waits a random time between half and all
 * of {@code min(max, initial * 2^(n-1))}, so many clients dropped at once do not reconnect in step.
 */
record Backoff(Duration initial, Duration max) {
    static final Backoff DEFAULT = new Backoff(Duration.ofMillis(250), Duration.ofSeconds(30));

    Backoff {
        if (initial.isNegative() || initial.isZero() || max.compareTo(initial) < 0) {
            throw new IllegalArgumentException("backoff needs 0 < initial <= max, was " + initial + ", " + max);
        }
    }

    /** The wait before attempt {@code failures + 1}, after {@code failures >= 1} consecutive failures. */
    Duration delay(int failures, RandomGenerator random) {
        long cap = max.toMillis();
        long base = initial.toMillis();
        for (int i = 1; i < failures && base < cap; i++) {
            base *= 2;
        }
        base = Math.min(base, cap);
        return Duration.ofMillis(base / 2 + random.nextLong(base / 2 + 1));
    }
}
