// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.window;

import dev.mallard.core.engine.Engine;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.metrics.MetricsRegistry;
import dev.mallard.flow.config.PipelineConfig;
import dev.mallard.flow.config.PipelineConfig.WindowConfig;
import dev.mallard.flow.handler.EventTimeReader;
import dev.mallard.flow.handler.RecordColumns;
import dev.mallard.flow.sink.Sink;
import dev.mallard.flow.source.Message;
import dev.mallard.flow.source.Source.Partition;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The windows of one pipeline, as the pipeline calls them: each step goes to every window and their answers are
 * combined into one {@link WindowHandOver} value. With no window every step is a no-op that lets the batch through,
 * so the pipeline has one path. Several windows share the batch and the batch's transaction; each keeps its own
 * watermark, closes and state rows (keyed by its table), see docs/windows.md.
 */
public final class Windows implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Windows.class);

    private final List<TumblingWindow> windows;
    private final List<PolledWindow> polled;
    // The verdicts of the batch admitted last, until it is placed.
    private List<Judged> pending = List.of();

    private Windows(List<TumblingWindow> windows, List<PolledWindow> polled) {
        this.windows = List.copyOf(windows);
        this.polled = List.copyOf(polled);
    }

    /**
     * Opens a window for each table of the config that declares one, in the order of the tables.
     *
     * @param sinks each window's sink, by the sink's config (the window closes it)
     */
    public static Windows open(PipelineConfig config, Engine engine, Function<PipelineConfig.SinkConfig, Sink> sinks, MetricsRegistry registry) {
        List<TumblingWindow> opened = new ArrayList<>();
        List<PolledWindow> polled = new ArrayList<>();
        try {
            for (PipelineConfig.PolledWindowConfig window : config.polledWindows()) {
                polled.add(new PolledWindow(window, engine, sinks.apply(window.sink())));
            }
            for (WindowConfig window : config.windows()) {
                EventTimeReader times = EventTimeReader.of(RecordColumns.of(config.pipeline().source())).orElseThrow(() -> new MallardException(
                        ErrorCode.USER_CONFIG_INVALID, window.path() + ": a window needs event_time on the source"));
                opened.add(new TumblingWindow(window, engine, times, sinks.apply(window.sink()),
                        new WindowMetrics(registry, config.pipeline().name(), window.table())));
            }
        } catch (RuntimeException e) {
            new Windows(opened, polled).close();
            throw e;
        }
        return new Windows(opened, polled);
    }

    public static Windows of(List<TumblingWindow> windows) {
        return new Windows(windows, List.of());
    }

    public static Windows none() {
        return new Windows(List.of(), List.of());
    }

    /** True when some table is a window on event time (whose steps follow the source's positions). */
    public boolean onEventTime() {
        return !windows.isEmpty();
    }

    /** True when there is no window of either kind. */
    public boolean isEmpty() {
        return windows.isEmpty() && polled.isEmpty();
    }

    /** When the next SQLFlow-style window is due to poll (empty without one), so that gathering a batch stops there. */
    public java.util.OptionalLong nextPollNanos() {
        return polled.stream().mapToLong(PolledWindow::nextPollNanos).min();
    }

    /** Polls every SQLFlow-style window whose interval passed; true when any published rows. */
    public boolean pollDue(long nowNanos) {
        boolean published = false;
        for (PolledWindow window : polled) {
            published |= window.pollIfDue(nowNanos).published();
        }
        return published;
    }

    /** Polls every SQLFlow-style window now (at start and in the drain); true when any published rows. */
    public boolean pollAll(long nowNanos) {
        boolean published = false;
        for (PolledWindow window : polled) {
            published |= window.poll(nowNanos).published();
        }
        return published;
    }

    public List<TumblingWindow> windows() {
        return windows;
    }

    /**
     * What the windows let through of a batch. Each window judges every record (see {@link TumblingWindow#admit}); a
     * record goes to the handler when at least one window admits it. A record one window refuses and another admits
     * is written, and its share is deleted from the refusing window's table in {@link #placed}: every row of the
     * record's bucket there, which is exact when that bucket holds nothing else of that window (no earlier rows, no
     * record of this batch it admitted). When it would hold something else, the record is refused for every window
     * and logged, since taking only its share out of an aggregate is not possible; that happens only to a record
     * refused as ahead of the wall clock or as the replay of a published bucket while its bucket is open.
     */
    public WindowHandOver.Admitted admit(List<Message> batch, long nowNanos, long wallMicros) {
        pending = List.of();
        if (windows.isEmpty()) {
            return new WindowHandOver.Admitted(batch, WindowHandOver.Late.NONE);
        }
        if (windows.size() == 1) {
            WindowHandOver.Admitted admitted = windows.getFirst().admit(batch, nowNanos, wallMicros);
            pending = List.of(new Judged(windows.getFirst(), positions(admitted.messages()), Set.of()));
            return admitted;
        }
        List<Set<Position>> admittedBy = new ArrayList<>(windows.size());
        Map<Position, Message> stamped = new HashMap<>();
        WindowHandOver.Late late = WindowHandOver.Late.NONE;
        for (TumblingWindow window : windows) {
            WindowHandOver.Admitted admitted = window.admit(batch, nowNanos, wallMicros);
            late = late.plus(admitted.late());
            admittedBy.add(positions(admitted.messages()));
            admitted.messages().forEach(message -> stamped.putIfAbsent(Position.of(message), message));
        }
        Set<Position> written = new HashSet<>(stamped.keySet());
        List<Set<Long>> dropped = new ArrayList<>(windows.size());
        for (int i = 0; i < windows.size(); i++) {
            TumblingWindow window = windows.get(i);
            Set<Long> taken = new HashSet<>();
            for (Position position : admittedBy.get(i)) {
                Message message = stamped.get(position);
                if (message.hasEventTime()) {
                    taken.add(window.bucketStart(message.eventTime()));
                }
            }
            Set<Long> buckets = new HashSet<>();
            for (Message message : stamped.values()) {
                Position position = Position.of(message);
                if (admittedBy.get(i).contains(position) || !message.hasEventTime()) {
                    continue;
                }
                long bucket = window.bucketStart(message.eventTime());
                if (taken.contains(bucket) || window.holdsRows(bucket)) {
                    written.remove(position);
                    LOG.warn("record refused by every window: one refused it while its bucket holds rows of that window window={} position={}",
                            window.config().table(), message.position());
                } else {
                    buckets.add(bucket);
                }
            }
            dropped.add(buckets);
        }
        List<Judged> judged = new ArrayList<>(windows.size());
        for (int i = 0; i < windows.size(); i++) {
            Set<Position> admitted = new HashSet<>(admittedBy.get(i));
            admitted.retainAll(written);
            judged.add(new Judged(windows.get(i), admitted, dropped.get(i)));
        }
        pending = judged;
        List<Message> through = new ArrayList<>(written.size());
        for (Message message : batch) {
            Position position = Position.of(message);
            if (written.contains(position)) {
                through.add(stamped.get(position));
            }
        }
        return new WindowHandOver.Admitted(through, late);
    }

    /**
     * Places the written records in the windows that admitted them, after deleting what refused records left in the
     * other windows' tables, in the caller's transaction; due when any window has closes due.
     */
    public boolean placed(List<Message> written, long nowNanos) {
        boolean due = false;
        for (Judged judged : pending) {
            judged.window().dropRefused(judged.dropBuckets());
            List<Message> own = written.stream().filter(message -> judged.admitted().contains(Position.of(message))).toList();
            due |= judged.window().placed(own, nowNanos).closeDue();
        }
        pending = List.of();
        return due;
    }

    private static Set<Position> positions(List<Message> messages) {
        Set<Position> positions = new HashSet<>(messages.size() * 2);
        messages.forEach(message -> positions.add(Position.of(message)));
        return positions;
    }

    /** Where a message is, which identifies it within a batch. */
    private record Position(String topic, int partition, long offset) {
        static Position of(Message message) {
            return new Position(message.topic(), message.partition(), message.offset());
        }
    }

    /** One window's verdict on the batch being processed: what it admitted, and the buckets to take refused records out of. */
    private record Judged(TumblingWindow window, Set<Position> admitted, Set<Long> dropBuckets) {}

    /**
     * The source commit for a batch that reached {@code next}: per partition the lowest position any window still
     * needs, and as metadata the lowest closed-up-to of the windows (a later owner treats buckets up to there as
     * published in every window; a window that closed further publishes its later buckets again rather than lose them).
     */
    public WindowHandOver.Commit commit(Map<Partition, Long> next) {
        if (windows.isEmpty()) {
            return new WindowHandOver.Commit(next, "");
        }
        Map<Partition, Long> positions = new HashMap<>(next);
        String metadata = null;
        long lowest = Long.MAX_VALUE;
        for (TumblingWindow window : windows) {
            WindowHandOver.Commit commit = window.commit(next);
            commit.positions().forEach((partition, position) -> positions.merge(partition, position, Math::min));
            if (window.closedUpTo() < lowest) {
                lowest = window.closedUpTo();
                metadata = commit.metadata();
            }
        }
        return new WindowHandOver.Commit(positions, metadata);
    }

    /** See {@link TumblingWindow#previousOwners}. */
    public void previousOwners(Map<Partition, String> metadata) {
        windows.forEach(window -> window.previousOwners(metadata));
    }

    /** See {@link TumblingWindow#follow}. */
    public void follow(Optional<Set<Partition>> assignment, long nowNanos) {
        windows.forEach(window -> window.follow(assignment, nowNanos));
    }

    /** The silent partitions any window wants the source asked about; see {@link TumblingWindow#silent}. */
    public Set<Partition> silent(Optional<Set<Partition>> assignment, long nowNanos) {
        Set<Partition> silent = new HashSet<>();
        windows.forEach(window -> silent.addAll(window.silent(assignment, nowNanos)));
        return silent;
    }

    /** The source's answers to every window; true when any watermark moved. */
    public boolean idle(Map<Partition, Boolean> readToEnd, long nowNanos) {
        boolean moved = false;
        for (TumblingWindow window : windows) {
            moved |= window.idle(readToEnd, nowNanos);
        }
        return moved;
    }

    /** Every window's hand-over in the caller's transaction; per partition the lowest position any window reads again from. */
    public WindowHandOver.Rewind handOver(Set<Partition> movedAway, Map<Partition, Long> processed, long nowNanos) {
        Map<Partition, Long> again = new HashMap<>();
        for (TumblingWindow window : windows) {
            window.handOver(movedAway, processed, nowNanos).positions().forEach((partition, position) -> again.merge(partition, position, Math::min));
        }
        return new WindowHandOver.Rewind(again);
    }

    /** Closes what is due in every window, in order; see {@link TumblingWindow#closeBuckets}. */
    public List<WindowHandOver.Closed> closeBuckets() {
        List<WindowHandOver.Closed> closed = new ArrayList<>(windows.size());
        windows.forEach(window -> closed.add(window.closeBuckets()));
        return closed;
    }

    /** See {@link TumblingWindow#closeEverything}. */
    public void closeEverything() {
        windows.forEach(TumblingWindow::closeEverything);
    }

    /** Closes every window (its sink and connection), the last opened first. */
    @Override
    public void close() {
        RuntimeException failure = null;
        List<AutoCloseable> all = new ArrayList<>(polled);
        all.addAll(windows);
        for (AutoCloseable window : all.reversed()) {
            try {
                window.close();
            } catch (Exception e) {
                RuntimeException unchecked = e instanceof RuntimeException runtime ? runtime : new IllegalStateException(e);
                if (failure == null) {
                    failure = unchecked;
                } else {
                    failure.addSuppressed(unchecked);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}
