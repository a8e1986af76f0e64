// SPDX-License-Identifier: Apache-2.0
package dev.mallard.testkit;

import static java.util.Objects.requireNonNull;

import java.time.Duration;

/**
 * A bounded wait for a condition, for tests: polls until it holds, and fails naming what it waited for when the
 * time is up. Never a fixed sleep, and never a wait that runs out silently.
 */
public final class Await {
    /** The longest a test waits for anything unless it says otherwise. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);
    private static final long POLL_MILLIS = 25;

    /** A condition that may throw (reading a file, asking a broker). */
    @FunctionalInterface
    public interface Condition {
        boolean holds() throws Exception;
    }

    private Await() {}

    /** {@link #until(String, Duration, Condition)} with {@link #DEFAULT_TIMEOUT}. */
    public static void until(String what, Condition condition) throws Exception {
        until(what, DEFAULT_TIMEOUT, condition);
    }

    /**
     * Returns once {@code condition} holds; throws {@link AssertionError} saying {@code what} was not reached within
     * {@code timeout}. The condition's own exceptions propagate.
     */
    public static void until(String what, Duration timeout, Condition condition) throws Exception {
        requireNonNull(what, "what is null");
        requireNonNull(condition, "condition is null");
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.holds()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("waited " + timeout.toSeconds() + " s for: " + what);
            }
            Thread.sleep(POLL_MILLIS);
        }
    }
}
