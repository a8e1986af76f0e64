// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.retry;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.Test;

class BackoffTest {
    private final Backoff backoff = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(2));

    @Test
    void eachFailureDoublesTheCeilingUntilTheCapAndJitterStaysWithinHalfToAll() {
        Random random = new Random(7);
        long[] ceilings = {100, 200, 400, 800, 1600, 2000, 2000, 2000};
        for (int failures = 1; failures <= ceilings.length; failures++) {
            for (int i = 0; i < 200; i++) {
                long delay = backoff.delay(failures, random).toMillis();
                assertThat(delay).as("failures=%d", failures).isBetween(ceilings[failures - 1] / 2, ceilings[failures - 1]);
            }
        }
    }

    @Test
    void aHugeFailureCountStaysAtTheCap() {
        assertThat(backoff.delay(10_000, new Random(1)).toMillis()).isBetween(1000L, 2000L);
    }

    @Test
    void jitterSpreadsClientsApart() {
        Random random = new Random(3);
        long distinct = java.util.stream.IntStream.range(0, 50).mapToLong(i -> backoff.delay(4, random).toMillis()).distinct().count();
        assertThat(distinct).isGreaterThan(10);
    }

    @Test
    void aZeroInitialWaitRetriesAtOnceAndAMaxBelowTheInitialIsRefused() {
        assertThat(new Backoff(Duration.ZERO, Duration.ZERO).delay(3, new Random(1))).isZero();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new Backoff(Duration.ofSeconds(2), Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
