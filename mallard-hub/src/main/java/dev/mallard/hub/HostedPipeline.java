// SPDX-License-Identifier: Apache-2.0
package dev.mallard.hub;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.error.Redactor;
import dev.mallard.flow.config.PipelineConfig;
import dev.mallard.flow.pipeline.PipelineRunner;
import dev.mallard.flow.state.PipelineIdentity;
import java.io.OutputStream;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One pipeline the hub runs: a platform thread of its own that owns a {@link PipelineRunner} on a connection of its
 * own to the server's database. A failure ends the thread, not the server: the pipeline shows FAILED with its error.
 * Stop and start are safe from any thread; a start runs a new runner from the offsets the last one committed.
 */
final class HostedPipeline {
    private static final Logger LOG = LoggerFactory.getLogger(HostedPipeline.class);
    /** The shortest window {@code messages_per_second} is measured over. */
    private static final long RATE_WINDOW_NANOS = Duration.ofSeconds(2).toNanos();

    private final PipelineConfig config;
    private final ConfigEnvironment environment;
    private final PipelineRunner.Host host;
    private final OutputStream console;
    private final String source;

    private PipelineState state = PipelineState.STOPPED;
    private PipelineRunner runner;
    /** The runner that ended last, kept open so its series stay on /metrics (a failed pipeline's above all) until the next start. */
    private PipelineRunner ended;
    private Thread thread;
    private Optional<PipelineStatus.Failure> lastError = Optional.empty();
    // Totals of the runners that ended, so the counts go on across a stop and a start.
    private long pastBatches;
    private long pastMessages;
    private long pastErrors;
    private long rateAtNanos = System.nanoTime();
    private long rateAtMessages;
    private double rate;

    HostedPipeline(PipelineConfig config, ConfigEnvironment environment, PipelineRunner.Host host, OutputStream console) {
        this.config = requireNonNull(config, "config is null");
        this.environment = requireNonNull(environment, "environment is null");
        this.host = requireNonNull(host, "host is null");
        this.console = requireNonNull(console, "console is null");
        PipelineIdentity identity = PipelineIdentity.of(config);
        String type = config.pipeline().source().type();
        this.source = type.equals("kafka") ? type + ":" + String.join(",", identity.topics()) : type;
    }

    String name() {
        return config.pipeline().name();
    }

    int drainDeadlineSeconds() {
        return config.pipeline().drainDeadlineSeconds();
    }

    /** Starts it unless it runs; a pipeline still stopping is let finish first, within its drain deadline. */
    void start() {
        Thread stopping;
        synchronized (this) {
            if (state == PipelineState.STARTING || state == PipelineState.RUNNING) {
                return;
            }
            stopping = thread;
        }
        // Outside the lock: the ending thread takes it to record how it ended.
        if (stopping != null) {
            awaitEnd(drainDeadlineSeconds());
        }
        synchronized (this) {
            if (state == PipelineState.STARTING || state == PipelineState.RUNNING || thread != null) {
                return;
            }
            if (ended != null) {
                ended.close();
                ended = null;
            }
            PipelineRunner next = new PipelineRunner(config, environment, new PipelineRunner.Options(0, console, Optional.empty(), Optional.of(host)));
            runner = next;
            state = PipelineState.STARTING;
            lastError = Optional.empty();
            thread = Thread.ofPlatform().name("pipeline-" + name()).unstarted(() -> run(next));
            thread.start();
            LOG.info("hosted pipeline starting name={} source={}", name(), source);
        }
    }

    /** Asks it to stop: the batch it gathers is written and committed, then its thread ends. */
    synchronized void stop() {
        if (state == PipelineState.STARTING || state == PipelineState.RUNNING) {
            state = PipelineState.STOPPING;
            runner.requestStop();
            LOG.info("hosted pipeline stopping name={}", name());
        }
    }

    /** Waits for its thread to end, at most {@code seconds}; whether it ended. */
    boolean awaitEnd(int seconds) {
        Thread running;
        synchronized (this) {
            running = thread;
        }
        if (running == null) {
            return true;
        }
        try {
            running.join(Duration.ofSeconds(seconds));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return !running.isAlive();
    }

    private void run(PipelineRunner mine) {
        Optional<PipelineStatus.Failure> failure = Optional.empty();
        try {
            mine.run();
        } catch (RuntimeException e) {
            failure = Optional.of(failure(e));
            LOG.error("hosted pipeline failed name={} code={} error={}", name(), failure.get().code(), failure.get().message());
        }
        synchronized (this) {
            ended = mine;
            PipelineRunner.Progress progress = mine.progress();
            pastBatches += progress.batches();
            pastMessages += progress.messages();
            pastErrors += progress.errors();
            lastBatchAtOfPast = progress.lastBatchAt().or(() -> lastBatchAtOfPast);
            if (runner == mine) {
                runner = null;
                thread = null;
                state = failure.isPresent() ? PipelineState.FAILED : PipelineState.STOPPED;
                lastError = failure;
            }
        }
        LOG.info("hosted pipeline ended name={} state={}", name(), failure.isPresent() ? PipelineState.FAILED : PipelineState.STOPPED);
    }

    private static PipelineStatus.Failure failure(RuntimeException e) {
        if (e instanceof MallardException mallard) {
            return new PipelineStatus.Failure(mallard.errorCode().code(), Redactor.redact(String.valueOf(mallard.getMessage())));
        }
        return new PipelineStatus.Failure(ErrorCode.SYSTEM_INTERNAL.code(), Redactor.redact(String.valueOf(e)));
    }

    /** Closes the last runner's meters, once its thread ended (the hub's close). */
    synchronized void release() {
        if (ended != null) {
            ended.close();
            ended = null;
        }
    }

    synchronized PipelineStatus status() {
        PipelineRunner.Progress progress = runner == null ? null : runner.progress();
        if (state == PipelineState.STARTING && progress != null && progress.consuming()) {
            state = PipelineState.RUNNING;
        }
        long messages = pastMessages + (progress == null ? 0 : progress.messages());
        long now = System.nanoTime();
        if (now - rateAtNanos >= RATE_WINDOW_NANOS) {
            rate = (messages - rateAtMessages) * 1e9 / (now - rateAtNanos);
            rateAtNanos = now;
            rateAtMessages = messages;
        }
        Optional<Instant> lastBatchAt = progress == null ? Optional.empty() : progress.lastBatchAt();
        Optional<Long> lag = progress == null ? Optional.empty() : progress.lag();
        return new PipelineStatus(name(), state, source, lag, lastBatchAt.or(() -> lastBatchAtOfPast), pastBatches + (progress == null ? 0 : progress.batches()),
                messages, pastErrors + (progress == null ? 0 : progress.errors()), state == PipelineState.RUNNING || state == PipelineState.STOPPING ? rate : 0,
                lastError);
    }

    private Optional<Instant> lastBatchAtOfPast = Optional.empty();
}
