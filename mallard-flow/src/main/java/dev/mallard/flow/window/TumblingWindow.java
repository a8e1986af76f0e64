// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.window;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.engine.Engine;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlText;
import dev.mallard.flow.config.PipelineConfig.WindowConfig;
import dev.mallard.flow.handler.EventTimeReader;
import dev.mallard.flow.sink.ResultTable;
import dev.mallard.flow.sink.Sink;
import dev.mallard.flow.source.Message;
import dev.mallard.flow.source.Source.Partition;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.duckdb.DuckDBConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A tumbling window on event time over one table ({@code tables.sql[].window}): admits or refuses each record
 * before the handler runs, keeps the watermark, and closes buckets (publish, then delete) after the batch that
 * moved the watermark has committed.
 *
 * <p>Buckets are DuckDB's {@code time_bucket(INTERVAL '<size> seconds', event_time)}, whose origin is
 * 2000-01-03T00:00:00Z; a bucket is closed when its start + size <= W. Closing reads the committed rows on a
 * connection of its own ({@code closed}: every row of every bucket that closed), runs {@code emit_sql} over them,
 * writes and flushes the window's sink, and only then deletes those rows and records how far it closed, in one
 * transaction. A crash between the flush and that commit publishes the same whole buckets again on the next start.
 *
 * <p>The pipeline's thread owns it and calls it; it never calls the pipeline back. Each step answers with a
 * {@link WindowHandOver} value the pipeline acts on. Its durable state is kept by a {@link WindowStore}.
 */
public final class TumblingWindow implements AutoCloseable {
    public static final String WATERMARKS = "sqlflow_watermarks";
    public static final String WINDOWS = "sqlflow_windows";
    public static final String FEEDS = "sqlflow_window_feeds";
    /** The prefix of the Kafka commit metadata that carries how far a window closed. */
    public static final String METADATA_PREFIX = "mallard.window.closed_up_to_us=";
    /** time_bucket's origin for TIMESTAMPTZ and widths without months: Monday 2000-01-03T00:00:00Z. */
    static final long ORIGIN_MICROS = 946_857_600L * 1_000_000L;
    private static final Logger LOG = LoggerFactory.getLogger(TumblingWindow.class);
    private static final String EMITTED = "__mallard_window_emit";
    /** How often a partition whose source could not be asked is asked again. */
    private static final long PROBE_INTERVAL_NANOS = 1_000_000_000L;

    private final WindowConfig config;
    private final DuckDBConnection main;
    private final DuckDBConnection own;
    private final Sink sink;
    private final EventTimeReader times;
    private final WindowMetrics metrics;
    private final WindowStore store;
    private final Watermark watermark;
    private final long sizeMicros;
    private final long latenessMicros;
    // Closed buckets a late record joined (allowed_lateness_seconds > 0): republished whole at the next close.
    private final Set<Long> dirty = new TreeSet<>();
    // With allowed lateness, the first close republishes every retained closed bucket: a crash may have lost a
    // recompute that was due (the sink replaces by key, so repeating one is harmless).
    private boolean republishRetained;
    private long closedUpTo;
    // Per partition, the first offset that fed each retained bucket (bucket start -> offset): Kafka commits stop
    // before the lowest, so a worker that starts without the window's rows replays them. Kept in FEEDS too.
    private final Map<Partition, Map<Long, Long>> feeds = new HashMap<>();
    // Per partition, how far a previous owner had closed (from its commit metadata): its buckets are final.
    private final Map<Partition, Long> finalized = new HashMap<>();
    // Per partition read again after a hand-over: [the position it had been processed to, how far the window had
    // closed then]. Below that position, records of buckets closed by then are already in the table and published.
    private final Map<Partition, long[]> rebuilding = new HashMap<>();
    private long lastProbeNanos = Long.MIN_VALUE;
    // The silent partitions last handed out to be asked whether they are read to their end.
    private Set<Partition> asking = Set.of();

    /**
     * Checks the window's table and state, and restores its watermark.
     *
     * @param times the reader of the source's configured event_time (a window needs one)
     * @param sink the window's own sink, already wrapped in its retry ladder; the window closes it
     */
    public TumblingWindow(WindowConfig config, Engine engine, EventTimeReader times, Sink sink, WindowMetrics metrics) {
        this.config = requireNonNull(config, "config is null");
        this.main = engine.connection();
        this.times = requireNonNull(times, "times is null");
        this.sink = requireNonNull(sink, "sink is null");
        this.metrics = requireNonNull(metrics, "metrics is null");
        this.sizeMicros = config.sizeSeconds() * 1_000_000L;
        this.latenessMicros = config.allowedLatenessSeconds() * 1_000_000L;
        this.republishRetained = latenessMicros > 0;
        this.store = new WindowStore(config.table());
        checkTable();
        WindowStore.Restored restored = store.restore(main);
        restored.feeds().forEach((partition, fed) -> feeds.put(partition, new HashMap<>(fed)));
        this.closedUpTo = restored.closedUpTo();
        this.watermark = new Watermark(config.sizeSeconds(), config.graceSeconds(), config.idleCloseSeconds(), restored.watermark());
        this.own = engine.newSession();
        checkEmitSql();
        metrics.watermark(watermark.value());
        metrics.closedAt(closedUpTo);
    }

    public WindowConfig config() {
        return config;
    }

    public long watermark() {
        return watermark.value();
    }

    /** How far this window has closed and committed ({@link Watermark#NONE} before its first close). */
    public long closedUpTo() {
        return closedUpTo;
    }

    /** True when this window's table holds rows of the bucket starting there (rows of placed records, not yet deleted). */
    boolean holdsRows(long bucket) {
        for (Map<Long, Long> fed : feeds.values()) {
            if (fed.containsKey(bucket)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Deletes, in the caller's transaction, what the handler wrote into this window's table for records this window
     * refused and a sibling window admitted: every row of each such record's bucket. {@link Windows} calls it only
     * for buckets that held no row of this window before the batch and took no record this window admitted, so the
     * rows deleted are exactly the refused records' share.
     */
    void dropRefused(Set<Long> buckets) {
        if (buckets.isEmpty()) {
            return;
        }
        StringBuilder which = new StringBuilder();
        for (long bucket : buckets) {
            which.append(which.isEmpty() ? "" : ", ").append(timestamp(bucket));
        }
        try (Statement statement = main.createStatement()) {
            statement.execute("DELETE FROM " + SqlText.identifier(config.table()) + " WHERE " + SqlText.identifier(config.timeColumn()) + " IN (" + which + ")");
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.USER_HANDLER_SQL_FAILED, config.path() + ": cannot take the records this window refused out of "
                    + config.table() + ": " + firstLine(e), e);
        }
    }

    /** The start of the bucket holding this event time, as time_bucket computes it. */
    long bucketStart(long eventMicros) {
        return ORIGIN_MICROS + Math.floorDiv(eventMicros - ORIGIN_MICROS, sizeMicros) * sizeMicros;
    }

    /**
     * Decides each record on arrival, before anything is written: reads its event time, and refuses it when its
     * bucket already closed (late) past the allowed lateness, or when it lies further ahead of the wall clock than
     * max_future_seconds. A late record within the allowed lateness is admitted and its bucket marked for a whole
     * republish. A record whose time cannot be read stays in, unstamped: the loader reports it as a bad message.
     *
     * @return the admitted messages, stamped with their event time, and the refused ones counted
     */
    public WindowHandOver.Admitted admit(List<Message> batch, long nowNanos, long wallMicros) {
        List<Message> admitted = new ArrayList<>(batch.size());
        long late = 0;
        long future = 0;
        long recomputed = 0;
        long replayed = 0;
        long w = watermark.value();
        long futureLimit = config.maxFutureSeconds().map(s -> wallMicros + s * 1_000_000L).orElse(Long.MAX_VALUE);
        for (Message message : batch) {
            if (message.isBlank()) {
                admitted.add(message);
                continue;
            }
            long time;
            try {
                time = message.hasEventTime() ? message.eventTime() : times.read(message.value());
            } catch (IllegalArgumentException e) {
                admitted.add(message);
                continue;
            }
            Partition partition = new Partition(message.topic(), message.partition());
            watermark.arrived(partition, nowNanos);
            long bucket = bucketStart(time);
            Long finalizedUpTo = finalized.get(partition);
            long[] rebuilt = rebuilding.get(partition);
            if (rebuilt != null && message.offset() >= rebuilt[0]) {
                rebuilding.remove(partition);
                rebuilt = null;
            }
            if (finalizedUpTo != null && bucket + sizeMicros <= finalizedUpTo
                    || rebuilt != null && rebuilt[1] != Watermark.NONE && bucket + sizeMicros <= rebuilt[1]) {
                // A replay after a takeover or a lost state: the previous owner already published this bucket.
                replayed++;
            } else if (time > futureLimit) {
                future++;
                LOG.debug("record refused: its event time is ahead of the wall clock window={} position={}", config.table(), message.position());
            } else if (w != Watermark.NONE && bucket + sizeMicros <= w) {
                if (bucket + sizeMicros + latenessMicros > w) {
                    recomputed++;
                    dirty.add(bucket);
                    admitted.add(message.withEventTime(time));
                } else {
                    late++;
                    LOG.debug("late record refused window={} position={}", config.table(), message.position());
                }
            } else {
                admitted.add(message.withEventTime(time));
            }
        }
        metrics.late(late, future, recomputed);
        metrics.finalized(replayed);
        return new WindowHandOver.Admitted(admitted, new WindowHandOver.Late(late, future, recomputed, replayed));
    }

    /**
     * Places the written records in the watermark and records it, in the caller's transaction when there is one,
     * so that W commits with the rows it describes.
     *
     * @return W, and whether W moved or a closed bucket took a late record, so that {@link #closeBuckets()} is due
     *     once the transaction committed
     */
    public WindowHandOver.Placed placed(List<Message> written, long nowNanos) {
        for (Message message : written) {
            if (message.hasEventTime()) {
                Partition partition = new Partition(message.topic(), message.partition());
                long bucket = bucketStart(message.eventTime());
                watermark.placed(partition, message.eventTime(), nowNanos);
                metrics.newestBucket(bucket);
                Map<Long, Long> fed = feeds.computeIfAbsent(partition, p -> new HashMap<>());
                if (!fed.containsKey(bucket)) {
                    // Offsets only grow within a partition: the first record of a bucket has its lowest offset.
                    fed.put(bucket, message.offset());
                    store.recordFeed(main, partition, bucket, message.offset());
                }
            }
        }
        boolean due = advance(nowNanos, main) || !dirty.isEmpty();
        return new WindowHandOver.Placed(watermark.value(), due);
    }

    /**
     * The positions to commit to Kafka for a batch: per partition, the next offset to read, or the first offset still
     * feeding a retained bucket when that is lower, so that a worker starting without the window's rows replays and
     * rebuilds every retained bucket whole.
     */
    public WindowHandOver.Commit commit(Map<Partition, Long> next) {
        return new WindowHandOver.Commit(commitPositions(next), commitMetadata());
    }

    Map<Partition, Long> commitPositions(Map<Partition, Long> next) {
        Map<Partition, Long> positions = new HashMap<>(next);
        positions.replaceAll((partition, offset) -> {
            Map<Long, Long> fed = feeds.get(partition);
            if (fed == null || fed.isEmpty()) {
                return offset;
            }
            return Math.min(offset, java.util.Collections.min(fed.values()));
        });
        return positions;
    }

    /** The metadata a Kafka commit carries: how far this window closed, which a later owner of the partition honours. */
    String commitMetadata() {
        return METADATA_PREFIX + closedUpTo;
    }

    /**
     * The commit metadata found on partitions as they were assigned: buckets the previous owner closed up to there
     * are final, and replayed records for them are dropped.
     */
    public void previousOwners(Map<Partition, String> metadata) {
        metadata.forEach((partition, text) -> {
            if (text != null && text.startsWith(METADATA_PREFIX)) {
                try {
                    long upTo = Long.parseLong(text.substring(METADATA_PREFIX.length()));
                    if (upTo != Watermark.NONE) {
                        finalized.merge(partition, upTo, Math::max);
                    }
                } catch (NumberFormatException e) {
                    LOG.warn("ignoring commit metadata that is not a window's partition={} metadata={}", partition, text);
                }
            }
        });
    }

    /**
     * A rebalance gave these partitions to another group member, which rebuilds their share of the open buckets from
     * the positions this window committed for them. The window's rows aggregate every partition, so this member
     * cannot take their share out: it deletes the rows of every open bucket and rebuilds them from the partitions it
     * still holds, each read again from the first offset that fed an open bucket. The delete and the forgotten feeds
     * run in the caller's transaction, which records the returned positions in the pipeline's state too, so a crash
     * in between leaves either the old rows or the rewound positions. Closed buckets stay as they are: replayed
     * records of them are dropped (counted as {@code finalized}).
     *
     * @param processed per partition still held, the next offset its records were processed to (by this run, or by
     *     the run whose state this is); a held partition missing here has fed no open bucket
     * @return per partition to read again, the position to read it from
     */
    public WindowHandOver.Rewind handOver(Set<Partition> movedAway, Map<Partition, Long> processed, long nowNanos) {
        long openFrom = closedUpTo == Watermark.NONE ? Watermark.NONE : closedUpTo - sizeMicros;
        Map<Partition, Long> again = new HashMap<>();
        feeds.forEach((partition, fed) -> {
            if (!movedAway.contains(partition) && processed.containsKey(partition)) {
                fed.forEach((bucket, offset) -> {
                    if (bucket > openFrom) {
                        again.merge(partition, offset, Math::min);
                    }
                });
            }
        });
        try (Statement statement = main.createStatement()) {
            statement.execute("DELETE FROM " + SqlText.identifier(config.table()) + " WHERE " + SqlText.identifier(config.timeColumn()) + " > " + timestamp(openFrom));
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot hand the window's open buckets over after a rebalance: "
                    + firstLine(e), e);
        }
        store.forgetFeedsAfter(main, openFrom);
        store.forgetPartitions(main, movedAway);
        movedAway.forEach(feeds::remove);
        feeds.values().forEach(fed -> fed.keySet().removeIf(bucket -> bucket > openFrom));
        again.forEach((partition, offset) -> {
            rebuilding.put(partition, new long[] {processed.get(partition), closedUpTo});
            watermark.rebuilding(partition, nowNanos);
        });
        LOG.info("window rebuilds its open buckets after partitions moved to another member window={} moved={} read_again_from={}",
                config.table(), movedAway, again);
        return new WindowHandOver.Rewind(again);
    }

    /**
     * Between batches, first step: follows the source's assignment and names the silent partitions to ask whether
     * they are read to their end (see {@link dev.mallard.flow.source.Source#readToEnd}). A partition silent for
     * idle_close_seconds is idle only once the source confirms that; when the only silent partitions are ones whose
     * source could not be asked, they are asked again at most every second. Pass the answers to {@link #idle}.
     */
    public Set<Partition> silent(Optional<Set<Partition>> assignment, long nowNanos) {
        assignment.ifPresent(held -> watermark.assignment(held, nowNanos));
        Set<Partition> silent = watermark.silent(nowNanos);
        silent.removeIf(watermark::isReadToEnd);
        boolean onlyFailed = silent.stream().allMatch(watermark::isFailed);
        if (silent.isEmpty() || onlyFailed && nowNanos - lastProbeNanos < PROBE_INTERVAL_NANOS) {
            asking = Set.of();
        } else {
            lastProbeNanos = nowNanos;
            asking = Set.copyOf(silent);
        }
        return asking;
    }

    /**
     * Between batches, second step: the source's answers for the partitions {@link #silent} named. One read to its
     * end is idle; one with records still to read restarts its idle clock; one missing from the answers (its session
     * failed: the broker is unreachable, say) holds the minimum until it delivers or the source answers again. When
     * W moves it is recorded.
     *
     * @return true when W moved, so that {@link #closeBuckets()} is due
     */
    public boolean idle(Map<Partition, Boolean> readToEnd, long nowNanos) {
        for (Partition partition : asking) {
            Boolean atEnd = readToEnd.get(partition);
            if (atEnd == null) {
                if (!watermark.isFailed(partition)) {
                    LOG.warn("window holds for a partition its source cannot be asked about window={} partition={}", config.table(), partition);
                }
                watermark.failed(partition, nowNanos);
            } else if (atEnd) {
                watermark.recovered(partition);
                watermark.readToEnd(partition);
            } else {
                watermark.arrived(partition, nowNanos);
            }
        }
        asking = Set.of();
        return advance(nowNanos, main);
    }

    /**
     * Closes every bucket placed so far, as if every partition had gone idle, and publishes them. For
     * {@code dev invoke}: one batch, then everything the window would publish.
     */
    public void closeEverything() {
        if (watermark.closeEverything()) {
            store.recordWatermark(main, watermark.value());
            metrics.watermark(watermark.value());
            closeBuckets();
        }
    }

    /** Follows the source's assignment without moving W (before a batch is admitted). */
    public void follow(Optional<Set<Partition>> assignment, long nowNanos) {
        assignment.ifPresent(held -> watermark.assignment(held, nowNanos));
    }

    private boolean advance(long nowNanos, DuckDBConnection connection) {
        if (!watermark.advance(nowNanos)) {
            return false;
        }
        store.recordWatermark(connection, watermark.value());
        metrics.watermark(watermark.value());
        return true;
    }

    /**
     * Publishes every bucket the watermark closed and not yet published, and every closed bucket a late record
     * joined (whole), then deletes the rows past the allowed lateness and records how far it closed, in one
     * transaction. Runs after the commit that moved W, once at start and once in the drain.
     *
     * @return what closed ({@link WindowHandOver.Closed#NOTHING} when nothing was due)
     */
    public WindowHandOver.Closed closeBuckets() {
        long w = watermark.value();
        if (w == Watermark.NONE || (w <= closedUpTo && dirty.isEmpty() && !republishRetained)) {
            return WindowHandOver.Closed.NOTHING;
        }
        String table = SqlText.identifier(config.table());
        String column = SqlText.identifier(config.timeColumn());
        StringBuilder which = new StringBuilder("(").append(column).append(" <= ").append(timestamp(w - sizeMicros));
        if (closedUpTo != Watermark.NONE && !republishRetained) {
            which.append(" AND ").append(column).append(" > ").append(timestamp(closedUpTo - sizeMicros));
        }
        which.append(')');
        for (long bucket : dirty) {
            which.append(" OR ").append(column).append(" = ").append(timestamp(bucket));
        }
        long rows;
        long buckets;
        long recomputed;
        try (Statement statement = own.createStatement()) {
            statement.execute("CREATE OR REPLACE TEMP TABLE closed AS SELECT * FROM " + table + " WHERE " + which);
            try (ResultSet counts = statement.executeQuery("SELECT count(*), count(DISTINCT " + column + "), count(DISTINCT "
                    + column + ") FILTER (WHERE " + column + " <= " + timestamp(closedUpTo == Watermark.NONE ? Watermark.NONE : closedUpTo - sizeMicros)
                    + ") FROM closed")) {
                counts.next();
                rows = counts.getLong(1);
                buckets = counts.getLong(2);
                recomputed = counts.getLong(3);
            }
            if (rows > 0) {
                statement.execute("CREATE OR REPLACE TEMP TABLE " + EMITTED + " AS " + config.emitSql());
                long emitted;
                try (ResultSet count = statement.executeQuery("SELECT count(*) FROM " + EMITTED)) {
                    count.next();
                    emitted = count.getLong(1);
                }
                if (emitted > 0) {
                    sink.write(new ResultTable(own, EMITTED, emitted));
                }
                sink.flush();
            }
            statement.execute("BEGIN TRANSACTION");
            try {
                statement.execute("DELETE FROM " + table + " WHERE " + column + " <= " + timestamp(w - sizeMicros - latenessMicros));
                store.forgetFeedsUpTo(own, w - sizeMicros - latenessMicros);
                store.recordClosedUpTo(own, w);
                statement.execute("COMMIT");
            } catch (SQLException | RuntimeException e) {
                statement.execute("ROLLBACK");
                throw e;
            }
            statement.execute("DROP TABLE IF EXISTS closed");
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.USER_HANDLER_SQL_FAILED, config.path() + ": closing buckets failed: "
                    + firstLine(e) + "; the buckets stay in " + config.table() + " and are published on the next start", e);
        }
        closedUpTo = w;
        long retainedFrom = w - sizeMicros - latenessMicros;
        feeds.values().forEach(fed -> fed.keySet().removeIf(bucket -> bucket <= retainedFrom));
        dirty.clear();
        republishRetained = false;
        metrics.closed(buckets - recomputed, recomputed, w);
        if (rows > 0) {
            LOG.info("window closed buckets window={} watermark={} buckets={} republished={} rows={}", config.table(),
                    java.time.Instant.EPOCH.plusNanos(w * 1000), buckets - recomputed, recomputed, rows);
        }
        return new WindowHandOver.Closed(buckets - recomputed, recomputed, rows, w);
    }

    private static String timestamp(long micros) {
        return micros == Watermark.NONE ? "'-infinity'::TIMESTAMPTZ" : "make_timestamptz(" + micros + ")";
    }

    private void checkTable() {
        WindowChecks.table(main, config.table(), config.timeColumn(), config.sizeSeconds()).ifPresent(problem -> {
            throw invalid(problem);
        });
    }

    private void checkEmitSql() {
        WindowChecks.emitSql(own, config.table(), config.emitSql()).ifPresent(problem -> {
            throw invalid(problem);
        });
    }

    private MallardException invalid(String message) {
        return new MallardException(ErrorCode.USER_CONFIG_INVALID, config.path() + ": " + message);
    }

    static String firstLine(SQLException e) {
        String message = e.getMessage() == null ? e.toString() : e.getMessage();
        int newline = message.indexOf('\n');
        return (newline < 0 ? message : message.substring(0, newline)).strip();
    }

    /** Closes the window's sink and its connection (not the pipeline's). */
    @Override
    public void close() {
        try {
            sink.close();
        } finally {
            try {
                own.close();
            } catch (SQLException e) {
                LOG.warn("cannot close the window's connection window={} error={}", config.table(), e.toString());
            }
        }
    }
}
