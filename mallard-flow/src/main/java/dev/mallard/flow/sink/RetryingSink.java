// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.retry.Backoff;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Retries a sink that could not reach its service ({@code system.sink.unreachable}) along the config's
 * {@code sink.retry} ladder: exponential backoff from {@code initial_backoff_ms} to {@code max_backoff_ms} with jitter
 * (each wait between half and all of its step, {@link Backoff}),
 * at most {@code max_attempts} tries within {@code deadline_seconds}. A user fault or a refused write is not
 * retried: trying again would fail the same way. Each try writes the whole batch again (the result table
 * outlives the attempt) and flushes it.
 */
public final class RetryingSink extends ForwardingSink {
    private static final Logger LOG = LoggerFactory.getLogger(RetryingSink.class);

    /**
     * The ladder, with the defaults of docs/configuration.md. Without {@code max_attempts} the deadline alone ends
     * it: four attempts with the default backoffs gave up after 0.7 s of an outage, not the documented 10 s.
     */
    public record Ladder(int maxAttempts, Duration initialBackoff, Duration maxBackoff, Duration deadline) {
        public Ladder {
            if (maxBackoff.compareTo(initialBackoff) < 0) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "sink.retry.max_backoff_ms (" + maxBackoff.toMillis()
                        + ") is below initial_backoff_ms (" + initialBackoff.toMillis() + "); raise max_backoff_ms or lower initial_backoff_ms");
            }
        }

        Backoff backoff() {
            return new Backoff(initialBackoff, maxBackoff);
        }

        public static Ladder of(JsonNode retry) {
            return new Ladder(retry.path("max_attempts").asInt(Integer.MAX_VALUE), Duration.ofMillis(retry.path("initial_backoff_ms").asLong(100)),
                    Duration.ofMillis(retry.path("max_backoff_ms").asLong(2000)), Duration.ofSeconds(retry.path("deadline_seconds").asLong(10)));
        }
    }

    /** Told of every retry, for the sink_retry_count metric. */
    public interface RetryListener {
        void retried();
    }

    private final Ladder ladder;
    private final RetryListener listener;
    private ResultTable pending;
    private volatile boolean retrying;

    public RetryingSink(Sink sink, Ladder ladder, RetryListener listener) {
        super(sink);
        this.ladder = requireNonNull(ladder, "ladder is null");
        this.listener = requireNonNull(listener, "listener is null");
    }

    @Override
    public void write(ResultTable batch) {
        pending = batch;
    }

    @Override
    public void flush() {
        if (pending == null) {
            sink.flush();
            return;
        }
        ResultTable batch = pending;
        pending = null;
        long deadline = System.nanoTime() + ladder.deadline().toNanos();
        Backoff backoffs = ladder.backoff();
        for (int attempt = 1; ; attempt++) {
            try {
                sink.write(batch);
                sink.flush();
                if (retrying) {
                    LOG.info("sink reachable again attempt={}", attempt);
                    retrying = false;
                }
                return;
            } catch (MallardException e) {
                retrying = e.errorCode() == ErrorCode.SYSTEM_SINK_UNREACHABLE;
                boolean retriable = e.errorCode() == ErrorCode.SYSTEM_SINK_UNREACHABLE;
                Duration backoff = backoffs.delay(attempt, ThreadLocalRandom.current());
                boolean timeLeft = System.nanoTime() + backoff.toNanos() < deadline;
                if (!retriable || attempt >= ladder.maxAttempts() || !timeLeft) {
                    if (retriable) {
                        throw new MallardException(ErrorCode.SYSTEM_SINK_UNREACHABLE, "gave up after " + attempt + " attempts within "
                                + ladder.deadline().toSeconds() + " s (sink.retry): " + e.getMessage(), e);
                    }
                    throw e;
                }
                LOG.warn("sink unreachable, retrying attempt={} backoff_ms={} error={}", attempt, backoff.toMillis(), e.getMessage());
                listener.retried();
                sleep(backoff);
            }
        }
    }

    /** True while the sink's service is not answering and a flush is being retried. Read from other threads (/healthz). */
    public boolean unreachable() {
        return retrying;
    }

    private static void sleep(Duration backoff) {
        try {
            Thread.sleep(backoff);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new MallardException(ErrorCode.SYSTEM_SINK_UNREACHABLE, "interrupted while waiting to retry the sink");
        }
    }
}
