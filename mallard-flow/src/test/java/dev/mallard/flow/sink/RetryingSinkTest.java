// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.engine.Engine;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The ladder around a sink whose outcome per attempt is scripted (a real sink that fails on cue). */
class RetryingSinkTest {
    private final Engine engine = Engine.inMemory();
    private final ResultTable batch = new ResultTable(engine.connection(), "t", 1);
    private final RetryingSink.Ladder ladder = new RetryingSink.Ladder(4, Duration.ofMillis(1), Duration.ofMillis(4), Duration.ofSeconds(10));

    @AfterEach
    void close() {
        engine.close();
    }

    /** A sink that fails its first flushes with the given code, then succeeds. */
    private static final class FlakySink implements Sink {
        private final List<ErrorCode> failures;
        private final List<String> calls = new ArrayList<>();

        FlakySink(List<ErrorCode> failures) {
            this.failures = new ArrayList<>(failures);
        }

        @Override
        public void write(ResultTable batch) {
            calls.add("write " + batch.name());
        }

        @Override
        public void flush() {
            calls.add("flush");
            if (!failures.isEmpty()) {
                ErrorCode code = failures.removeFirst();
                throw new MallardException(code, "scripted " + code.code());
            }
        }
    }

    @Test
    void anUnreachableSinkIsRetriedWithTheWholeBatchUntilItSucceeds() {
        FlakySink flaky = new FlakySink(List.of(ErrorCode.SYSTEM_SINK_UNREACHABLE, ErrorCode.SYSTEM_SINK_UNREACHABLE));
        AtomicInteger retries = new AtomicInteger();
        RetryingSink sink = new RetryingSink(flaky, ladder, retries::incrementAndGet);
        sink.write(batch);
        sink.flush();
        assertThat(flaky.calls).containsExactly("write t", "flush", "write t", "flush", "write t", "flush");
        assertThat(retries).hasValue(2);
    }

    @Test
    void aLadderThatRunsOutIsUnreachableNamingTheAttempts() {
        FlakySink flaky = new FlakySink(List.of(ErrorCode.SYSTEM_SINK_UNREACHABLE, ErrorCode.SYSTEM_SINK_UNREACHABLE,
                ErrorCode.SYSTEM_SINK_UNREACHABLE, ErrorCode.SYSTEM_SINK_UNREACHABLE, ErrorCode.SYSTEM_SINK_UNREACHABLE));
        RetryingSink sink = new RetryingSink(flaky, ladder, () -> {});
        sink.write(batch);
        assertThatThrownBy(sink::flush).isInstanceOf(MallardException.class)
                .hasMessageContaining("gave up after 4 attempts")
                .satisfies(e -> assertThat(((MallardException) e).errorCode().exitCode().code()).isEqualTo(12));
    }

    @Test
    void refusedWritesAndUserFaultsAreNotRetried() {
        for (ErrorCode code : List.of(ErrorCode.SYSTEM_SINK_WRITE_FAILED, ErrorCode.USER_SINK_KEY_NULL)) {
            FlakySink flaky = new FlakySink(List.of(code));
            RetryingSink sink = new RetryingSink(flaky, ladder, () -> {});
            sink.write(batch);
            assertThatThrownBy(sink::flush).satisfies(e -> assertThat(((MallardException) e).errorCode()).isEqualTo(code));
            assertThat(flaky.calls).containsExactly("write t", "flush");
        }
    }

    @Test
    void aLadderWhoseMaxBackoffIsBelowItsInitialBackoffIsAConfigErrorNamingBothKeys() {
        assertThatThrownBy(() -> new RetryingSink.Ladder(3, Duration.ofMillis(500), Duration.ofMillis(100), Duration.ofSeconds(10)))
                .isInstanceOf(MallardException.class)
                .satisfies(e -> assertThat(((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_CONFIG_INVALID))
                .hasMessageContaining("max_backoff_ms").hasMessageContaining("initial_backoff_ms");
    }
}
