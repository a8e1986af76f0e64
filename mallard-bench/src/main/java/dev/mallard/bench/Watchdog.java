// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * Ends a worker process that stops making progress, so a lost message or a dead broker fails the bench with a
 * reason instead of hanging it. Halts rather than exits: a stuck consumer's close could hang the exit too.
 */
final class Watchdog implements AutoCloseable {
    static final int STALLED_EXIT = 3;

    private final Thread thread;

    private Watchdog(Thread thread) {
        this.thread = thread;
    }

    /** Watches {@code progress} (messages so far, of {@code target}) and halts when it stands still for {@code idle}. */
    static Watchdog start(String what, LongSupplier progress, long target, Duration idle) {
        requireNonNull(what, "what is null");
        requireNonNull(progress, "progress is null");
        requireNonNull(idle, "idle is null");
        Thread thread = Thread.ofPlatform().daemon().name("bench-watchdog").start(() -> {
            long last = -1;
            long since = System.nanoTime();
            while (!Thread.currentThread().isInterrupted()) {
                long now = progress.getAsLong();
                if (now != last) {
                    last = now;
                    since = System.nanoTime();
                } else if (System.nanoTime() - since > idle.toNanos()) {
                    System.err.println("bench worker stalled: " + what + " saw no new message for " + idle.toSeconds() + " s after "
                            + now + " of " + target);
                    System.err.flush();
                    Runtime.getRuntime().halt(STALLED_EXIT);
                }
                try {
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        return new Watchdog(thread);
    }

    @Override
    public void close() {
        thread.interrupt();
    }
}
