// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.core.engine.Engine;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.metrics.MetricsRegistry;
import dev.mallard.flow.config.PipelineConfig;
import dev.mallard.flow.config.PipelineConfigReader;
import dev.mallard.flow.handler.Handler;
import dev.mallard.flow.handler.Handlers;
import dev.mallard.flow.handler.RecordColumns;
import dev.mallard.flow.metrics.PipelineMetrics;
import dev.mallard.flow.sink.Sink;
import dev.mallard.flow.sink.Sinks;
import dev.mallard.flow.source.Message;
import dev.mallard.flow.source.Source;
import dev.mallard.flow.source.Source.Partition;
import dev.mallard.flow.state.OffsetStore;
import dev.mallard.flow.state.PipelineIdentity;
import dev.mallard.flow.window.Windows;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** One batch through a real DuckDB state file, a real handler and a sqlcommand sink that writes in the batch's transaction. */
class BatcherTest {
    private static final Partition P0 = new Partition("events", 0);

    @TempDir
    Path dir;

    /** The positions the batcher handed the source, in order. */
    private static final class CommittedPositions implements Source {
        final List<Map<Partition, Long>> commits = new ArrayList<>();

        @Override
        public List<Message> poll(Duration timeout, int max) {
            return List.of();
        }

        @Override
        public void commit(Map<Partition, Long> nextOffsets) {
            commits.add(nextOffsets);
        }

        @Override
        public void close() {}
    }

    private PipelineConfig config(String policy, String sinkSql) {
        return new PipelineConfigReader(ConfigEnvironment.from(Map.of())).read("p.yml", """
                commands:
                  - name: delivered
                    sql: CREATE TABLE IF NOT EXISTS delivered (city VARCHAR)
                pipeline:
                  batch_size: 10
                  state: {path: %s}
                  on_error: {policy: %s}
                  source:
                    type: kafka
                    kafka: {brokers: [b:9092], group_id: g, auto_offset_reset: earliest, topics: [events]}
                  handler:
                    type: handlers.InferredMemBatch
                    sql: SELECT city FROM batch
                  sink:
                    type: sqlcommand
                    sqlcommand:
                      sql: %s
                """.formatted(dir.resolve("state.db"), policy, sinkSql)).orThrow();
    }

    private static List<Message> batch(String... values) {
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < values.length; i++) {
            batch.add(new Message(P0.topic(), P0.partition(), 40 + i, null, values[i].getBytes(StandardCharsets.UTF_8)));
        }
        return batch;
    }

    private record Run(Batcher.Processed processed, long setAside, long delivered, Optional<Long> stored, List<Map<Partition, Long>> commits) {}

    private Run run(PipelineConfig config, List<Message> batch) throws Exception {
        Path state = dir.resolve("state.db");
        CommittedPositions source = new CommittedPositions();
        try (Engine engine = Engine.onFile(state); MetricsRegistry registry = new MetricsRegistry()) {
            PipelineSetup.run(config, engine.connection());
            OffsetStore offsets = new OffsetStore(engine.connection(), PipelineIdentity.of(config), state);
            try (Handler handler = Handlers.create(config.pipeline().handler(), RecordColumns.of(config.pipeline().source()), engine.connection(),
                            ConfigEnvironment.from(Map.of()), true);
                    Sink sink = Sinks.create(config.pipeline().sink(), new ByteArrayOutputStream(), engine.allocator(), ConfigEnvironment.from(Map.of()))) {
                Batcher batcher = new Batcher(engine, Optional.of(offsets), handler, sink, Optional.empty(),
                        PipelineMetrics.of(registry, config.pipeline()), Optional.empty(), Windows.none(), config.pipeline().onError().policy(),
                        PipelineIdentity.of(config));
                Batcher.Processed processed = null;
                RuntimeException failure = null;
                try {
                    processed = batcher.process(batch, source);
                } catch (RuntimeException e) {
                    failure = e;
                }
                long delivered;
                try (Statement statement = engine.connection().createStatement(); ResultSet rows = statement.executeQuery("SELECT count(*) FROM delivered")) {
                    rows.next();
                    delivered = rows.getLong(1);
                }
                Run run = new Run(processed, batcher.setAside(), delivered,
                        new OffsetStore(engine.connection(), PipelineIdentity.of(config), state).next(P0), source.commits);
                if (failure != null) {
                    throw new FailedRun(run, failure);
                }
                return run;
            }
        }
    }

    private static final class FailedRun extends RuntimeException {
        final Run run;

        FailedRun(Run run, RuntimeException cause) {
            super(cause);
            this.run = run;
        }
    }

    @Test
    void aBatchsSinkWritesAndItsOffsetsCommitTogetherAndThenTheSourceIsCommitted() throws Exception {
        Run run = run(config("RAISE", "INSERT INTO delivered SELECT city FROM sqlflow_sink_batch"),
                batch("{\"city\":\"a\"}", "{\"city\":\"b\"}"));
        assertThat(run.delivered()).isEqualTo(2);
        assertThat(run.stored()).contains(42L);
        assertThat(run.processed().next()).isEqualTo(Map.of(P0, 42L));
        assertThat(run.processed().loaded()).isEqualTo(2);
        assertThat(run.processed().closeDue()).isFalse();
        assertThat(run.commits()).containsExactly(Map.of(P0, 42L));
    }

    @Test
    void aSinkThatFailsRollsBackWhatTheBatchWroteAndItsOffsetsAndCommitsNothingToTheSource() {
        PipelineConfig config = config("RAISE", "INSERT INTO delivered SELECT city FROM sqlflow_sink_batch; SELECT error('sink down')");
        assertThatThrownBy(() -> run(config, batch("{\"city\":\"a\"}"))).isInstanceOfSatisfying(FailedRun.class, failed -> {
            assertThat(failed.getCause()).isInstanceOf(MallardException.class).hasMessageContaining("sink down");
            assertThat(failed.run.delivered()).isZero();
            assertThat(failed.run.stored()).isEmpty();
            assertThat(failed.run.commits()).isEmpty();
        });
    }

    @Test
    void underIgnoreAMessageThatIsNotJsonIsSetAsideCountedAndTheRestDelivered() throws Exception {
        Run run = run(config("IGNORE", "INSERT INTO delivered SELECT city FROM sqlflow_sink_batch"),
                batch("{\"city\":\"a\"}", "not json", "{\"city\":\"c\"}"));
        assertThat(run.setAside()).isEqualTo(1);
        assertThat(run.delivered()).isEqualTo(2);
        assertThat(run.processed().loaded()).isEqualTo(2);
        assertThat(run.stored()).contains(43L);
    }
}
