// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.pipeline;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs a pipeline on a thread of its own for at most a deadline, then asks it to drain: a pipeline that never
 * reaches its message limit fails its test with what it consumed instead of hanging the build.
 */
final class BoundedRun {
    static final Duration DEADLINE = Duration.ofSeconds(90);

    private BoundedRun() {}

    static PipelineRunner.Outcome run(PipelineRunner runner) {
        return run(runner, DEADLINE);
    }

    static PipelineRunner.Outcome run(PipelineRunner runner, Duration deadline) {
        AtomicReference<PipelineRunner.Outcome> outcome = new AtomicReference<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread running = Thread.ofPlatform().name("pipeline").start(() -> {
            try {
                outcome.set(runner.run());
            } catch (Throwable e) {
                failure.set(e);
            }
        });
        try {
            running.join(deadline);
            if (running.isAlive()) {
                runner.requestStop();
                running.join(Duration.ofSeconds(60));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while the pipeline ran", e);
        }
        if (running.isAlive()) {
            throw new AssertionError("the pipeline did not stop within a minute of being asked to");
        }
        if (failure.get() instanceof RuntimeException e) {
            throw e;
        }
        if (failure.get() instanceof Error e) {
            throw e;
        }
        return outcome.get();
    }
}
