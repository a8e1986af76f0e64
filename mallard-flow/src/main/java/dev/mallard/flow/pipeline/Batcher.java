// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.pipeline;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.engine.Engine;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.flow.config.PipelineConfig.ErrorPolicy;
import dev.mallard.flow.handler.BadMessage;
import dev.mallard.flow.handler.BadMessagesException;
import dev.mallard.flow.handler.Handler;
import dev.mallard.flow.metrics.Phase;
import dev.mallard.flow.metrics.PipelineMetrics;
import dev.mallard.flow.sink.ResultTable;
import dev.mallard.flow.sink.Sink;
import dev.mallard.flow.source.Message;
import dev.mallard.flow.source.Source;
import dev.mallard.flow.source.Source.Partition;
import dev.mallard.flow.state.OffsetStore;
import dev.mallard.flow.state.PipelineIdentity;
import dev.mallard.flow.window.WindowHandOver;
import dev.mallard.flow.window.Windows;
import java.nio.charset.StandardCharsets;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One batch through the windows' admission, the handler, the sink and the state, applying the on_error policy, then
 * the source commit. With a state store the handler's writes, the windows' watermarks and the batch's offsets commit
 * in one DuckDB transaction after the sink flushed. It counts what it set aside; the pipeline keeps everything else.
 */
final class Batcher {
    private static final Logger LOG = LoggerFactory.getLogger(Batcher.class);

    /** What a batch reached: per partition the next offset, how many messages loaded, whether buckets are due to close. */
    record Processed(Map<Partition, Long> next, int loaded, boolean closeDue) {
        Processed {
            next = Map.copyOf(next);
        }
    }

    private final Engine engine;
    private final Optional<OffsetStore> offsets;
    private final Handler handler;
    private final Sink sink;
    private final Optional<Sink> dlq;
    private final PipelineMetrics metrics;
    private final Optional<StateStats> stats;
    private final Windows windows;
    private final ErrorPolicy policy;
    private final PipelineIdentity identity;
    private volatile long setAside;

    Batcher(Engine engine, Optional<OffsetStore> offsets, Handler handler, Sink sink, Optional<Sink> dlq, PipelineMetrics metrics,
            Optional<StateStats> stats, Windows windows, ErrorPolicy policy, PipelineIdentity identity) {
        this.engine = requireNonNull(engine, "engine is null");
        this.offsets = requireNonNull(offsets, "offsets is null");
        this.handler = requireNonNull(handler, "handler is null");
        this.sink = requireNonNull(sink, "sink is null");
        this.dlq = requireNonNull(dlq, "dlq is null");
        this.metrics = requireNonNull(metrics, "metrics is null");
        this.stats = requireNonNull(stats, "stats is null");
        this.windows = requireNonNull(windows, "windows is null");
        this.policy = requireNonNull(policy, "policy is null");
        this.identity = requireNonNull(identity, "identity is null");
    }

    /** Messages (handler.write) and batches (handler.invoke) set aside by the IGNORE or DLQ policy so far. */
    long setAside() {
        return setAside;
    }

    Processed process(List<Message> batch, Source source) {
        Map<Partition, Long> next = nextOffsets(batch);
        boolean transactional = offsets.isPresent();
        // Loading runs outside the state transaction: a message that does not fit aborts the statement, and
        // finding it needs a working connection. What it writes (the batch table) is rewritten every batch.
        // A window refuses late records on arrival: they are never written.
        List<Message> admitted = windows.admit(batch, System.nanoTime(), ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now())).messages();
        List<Message> loadable = timed(Phase.HANDLER_WRITE, () -> write(admitted));
        boolean closing;
        try {
            if (transactional) {
                execute("BEGIN TRANSACTION");
            }
            if (!loadable.isEmpty()) {
                metrics.handlerRowsRead(loadable.size());
                ResultTable result = timed(Phase.HANDLER_INVOKE, () -> invoke(loadable));
                if (result != null && !result.isEmpty()) {
                    timed(Phase.SINK_WRITE, () -> {
                        sink.positions(identity, next);
                        sink.write(result);
                        return null;
                    });
                    metrics.sinkWritten(result.rows(), 0);
                    long flushing = System.nanoTime();
                    timed(Phase.SINK_FLUSH, () -> {
                        sink.flush();
                        return null;
                    });
                    metrics.sinkWritten(0, result.rows());
                    metrics.sinkFlushed(result.rows(), System.nanoTime() - flushing);
                }
            }
            // The watermarks commit with the rows they describe.
            closing = windows.placed(loadable, System.nanoTime());
            if (transactional) {
                long committing = System.nanoTime();
                timed(Phase.STATE_COMMIT, () -> {
                    offsets.get().record(next);
                    execute("COMMIT");
                    return null;
                });
                metrics.stateCommitted(System.nanoTime() - committing);
                stats.ifPresent(s -> s.observe(metrics));
            }
        } catch (RuntimeException e) {
            if (transactional) {
                rollback();
            }
            throw e;
        }
        source.processed(next);
        timed(Phase.SOURCE_COMMIT, () -> {
            if (!windows.onEventTime()) {
                source.commit(next);
            } else {
                // Kafka keeps what still feeds a retained bucket, and how far the windows closed.
                WindowHandOver.Commit commit = windows.commit(next);
                source.commit(commit.positions(), commit.metadata());
            }
            return null;
        });
        return new Processed(next, loadable.size(), closing);
    }

    /**
     * A rebalance moved partitions away: the windows rebuild their open buckets from the partitions held, and the
     * positions those are read again from are recorded in the state in the same transaction as the windows' deletes.
     */
    WindowHandOver.Rewind handOver(Set<Partition> movedAway, Map<Partition, Long> held) {
        execute("BEGIN TRANSACTION");
        try {
            WindowHandOver.Rewind rewind = windows.handOver(movedAway, held, System.nanoTime());
            offsets.ifPresent(store -> store.record(rewind.positions()));
            execute("COMMIT");
            return rewind;
        } catch (RuntimeException e) {
            rollback();
            throw e;
        }
    }

    /** Runs a phase, timing it and counting its failure under the phase's name. */
    private <T> T timed(Phase phase, Supplier<T> work) {
        long started = System.nanoTime();
        try {
            return work.get();
        } catch (MallardException e) {
            metrics.error(e.errorCode(), phase);
            throw e;
        } finally {
            metrics.phase(phase, System.nanoTime() - started);
        }
    }

    /** handler.write; bad messages go by the policy and the rest are loaded. */
    private List<Message> write(List<Message> batch) {
        List<Message> remaining = batch;
        while (true) {
            if (remaining.stream().allMatch(Message::isBlank)) {
                return List.of();
            }
            try {
                handler.write(remaining);
                return remaining;
            } catch (BadMessagesException e) {
                if (policy == ErrorPolicy.RAISE) {
                    throw e;
                }
                setAside += e.badMessages().size();
                for (int i = 0; i < e.badMessages().size(); i++) {
                    metrics.error(e.errorCode(), Phase.HANDLER_WRITE);
                }
                List<Map.Entry<Message, String>> failed = new ArrayList<>();
                Set<Integer> bad = new HashSet<>();
                for (BadMessage message : e.badMessages()) {
                    bad.add(message.index());
                    failed.add(Map.entry(message.message(), message.describe()));
                    LOG.warn("message set aside policy={} phase=handler.write position={} error={}", policy, message.where(), message.error());
                }
                deadLetters(failed, "handler.write");
                List<Message> rest = new ArrayList<>(remaining.size());
                for (int i = 0; i < remaining.size(); i++) {
                    if (!bad.contains(i)) {
                        rest.add(remaining.get(i));
                    }
                }
                remaining = rest;
            }
        }
    }

    /** handler.invoke; a failed batch goes by the policy (IGNORE skips it, DLQ sends its messages). */
    private ResultTable invoke(List<Message> batch) {
        try {
            return handler.invoke();
        } catch (MallardException e) {
            if (policy == ErrorPolicy.RAISE || e.errorCode() != ErrorCode.USER_HANDLER_SQL_FAILED) {
                throw e;
            }
            setAside += 1;
            metrics.error(e.errorCode(), Phase.HANDLER_INVOKE);
            if (offsets.isPresent()) {
                // The failed statement aborted the transaction; the batch's offsets still commit in a new one.
                rollback();
                execute("BEGIN TRANSACTION");
            }
            LOG.warn("batch set aside policy={} phase=handler.invoke messages={} error={}", policy, batch.size(), e.getMessage());
            List<Map.Entry<Message, String>> failed = new ArrayList<>();
            for (Message message : batch) {
                failed.add(Map.entry(message, e.getMessage()));
            }
            deadLetters(failed, "handler.invoke");
            return null;
        }
    }

    /** DLQ rows: error, message, phase, timestamp (UTC ISO-8601); nothing under IGNORE. */
    private void deadLetters(List<Map.Entry<Message, String>> failed, String phase) {
        if (policy != ErrorPolicy.DLQ || failed.isEmpty()) {
            return;
        }
        try (Statement statement = engine.connection().createStatement()) {
            statement.execute("CREATE OR REPLACE TEMP TABLE mallard_dlq (error VARCHAR, message VARCHAR, phase VARCHAR, timestamp VARCHAR)");
            try (PreparedStatement insert = engine.connection().prepareStatement("INSERT INTO mallard_dlq VALUES (?, ?, ?, ?)")) {
                String now = Instant.now().toString();
                for (Map.Entry<Message, String> entry : failed) {
                    insert.setString(1, entry.getValue());
                    insert.setString(2, new String(entry.getKey().value(), StandardCharsets.UTF_8));
                    insert.setString(3, phase);
                    insert.setString(4, now);
                    // Not executeBatch: it opens a transaction of its own, and this may run inside the batch's.
                    insert.execute();
                }
            }
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot stage dead letters: " + e.getMessage(), e);
        }
        Sink letters = dlq.orElseThrow(() -> new IllegalStateException("policy DLQ without a dlq sink"));
        letters.write(new ResultTable(engine.connection(), "mallard_dlq", failed.size()));
        letters.flush();
    }

    private void execute(String sql) {
        try (Statement statement = engine.connection().createStatement()) {
            statement.execute(sql);
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "state " + sql + " failed: " + e.getMessage(), e);
        }
    }

    private void rollback() {
        try (Statement statement = engine.connection().createStatement()) {
            statement.execute("ROLLBACK");
        } catch (SQLException e) {
            LOG.warn("rollback failed error={}", e.toString());
        }
    }

    static Map<Partition, Long> nextOffsets(List<Message> batch) {
        Map<Partition, Long> next = new HashMap<>();
        for (Message message : batch) {
            if (message.partition() >= 0) {
                next.merge(new Partition(message.topic(), message.partition()), message.offset() + 1, Math::max);
            }
        }
        return next;
    }
}
