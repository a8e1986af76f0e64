package dev.mallard.flow.window;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.engine.Engine;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.flow.config.PipelineConfig.WindowConfig;
import dev.mallard.flow.handler.EventTimeReader;
import dev.mallard.flow.sink.ResultTable;
import dev.mallard.flow.sink.Sink;
import dev.mallard.flow.source.Message;
import dev.mallard.flow.source.Source;
import dev.mallard.flow.source.Source.Partition;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.function.Function;
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
 * <p>The pipeline's thread owns it. {@code sqlflow_watermarks} and {@code sqlflow_windows} hold its state; they
 * have no index, so DuckDB reclaims their updated rows.
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
    // Silent partitions the source confirmed are read to their end since they last delivered: only those count as idle.
    private long lastProbeNanos = Long.MIN_VALUE;

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
        checkTable();
        long[] restored = restore();
        this.closedUpTo = restored[1];
        this.watermark = new Watermark(config.sizeSeconds(), config.graceSeconds(), config.idleCloseSeconds(), restored[0]);
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
     * @return the admitted messages, stamped with their event time
     */
    public List<Message> admit(List<Message> batch, long nowNanos, long wallMicros) {
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
        return admitted;
    }

    /**
     * Places the written records in the watermark and records it, in the caller's transaction when there is one,
     * so that W commits with the rows it describes.
     *
     * @return true when W moved or a closed bucket took a late record, so that {@link #closeBuckets()} should run
     *     once the transaction committed
     */
    public boolean placed(List<Message> written, long nowNanos) {
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
                    recordFeed(partition, bucket, message.offset());
                }
            }
        }
        return advance(nowNanos, main) || !dirty.isEmpty();
    }

    /**
     * The positions to commit to Kafka for a batch: per partition, the next offset to read, or the first offset still
     * feeding a retained bucket when that is lower, so that a worker starting without the window's rows replays and
     * rebuilds every retained bucket whole.
     */
    public Map<Partition, Long> commitPositions(Map<Partition, Long> next) {
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
    public String commitMetadata() {
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
     * still holds, each read again from the first offset that fed an open bucket. The delete, the forgotten feeds
     * and (through {@code recordPositions}, with a state path) those positions commit in one transaction, so a
     * crash in between leaves either the old rows or the rewound positions. Closed buckets stay as they are:
     * replayed records of them are dropped (counted as {@code finalized}).
     *
     * @param processed per partition still held, the next offset its records were processed to (by this run, or by
     *     the run whose state this is); a held partition missing here has fed no open bucket
     * @param recordPositions records the rewound positions in the pipeline's state, in the transaction
     * @return per partition to read again, the position to read it from
     */
    public Map<Partition, Long> handOver(Set<Partition> movedAway, Map<Partition, Long> processed, long nowNanos,
            Consumer<Map<Partition, Long>> recordPositions) {
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
        String table = identifier(config.table());
        try (Statement statement = main.createStatement()) {
            statement.execute("BEGIN TRANSACTION");
            try {
                statement.execute("DELETE FROM " + table + " WHERE " + identifier(config.timeColumn()) + " > " + timestamp(openFrom));
                try (PreparedStatement open = main.prepareStatement("DELETE FROM " + FEEDS + " WHERE \"window\" = ? AND bucket_us > ?")) {
                    open.setString(1, config.table());
                    open.setLong(2, openFrom);
                    open.execute();
                }
                try (PreparedStatement gone = main.prepareStatement("DELETE FROM " + FEEDS + " WHERE \"window\" = ? AND topic = ? AND \"partition\" = ?")) {
                    for (Partition partition : movedAway) {
                        gone.setString(1, config.table());
                        gone.setString(2, partition.topic());
                        gone.setInt(3, partition.partition());
                        gone.execute();
                    }
                }
                recordPositions.accept(again);
                statement.execute("COMMIT");
            } catch (SQLException | RuntimeException e) {
                statement.execute("ROLLBACK");
                throw e;
            }
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot hand the window's open buckets over after a rebalance: "
                    + firstLine(e), e);
        }
        movedAway.forEach(feeds::remove);
        feeds.values().forEach(fed -> fed.keySet().removeIf(bucket -> bucket > openFrom));
        again.forEach((partition, offset) -> {
            rebuilding.put(partition, new long[] {processed.get(partition), closedUpTo});
            watermark.rebuilding(partition, nowNanos);
        });
        LOG.info("window rebuilds its open buckets after partitions moved to another member window={} moved={} read_again_from={}",
                config.table(), movedAway, again);
        return again;
    }

    private void recordFeed(Partition partition, long bucket, long offset) {
        try (PreparedStatement insert = main.prepareStatement("INSERT INTO " + FEEDS + " VALUES (?, ?, ?, ?, ?)")) {
            insert.setString(1, config.table());
            insert.setString(2, partition.topic());
            insert.setInt(3, partition.partition());
            insert.setLong(4, bucket);
            insert.setLong(5, offset);
            insert.execute();
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot record the window's offsets in " + FEEDS + ": " + firstLine(e), e);
        }
    }

    /** {@link #tick(Optional, long, Function)} with a source that cannot tell: silence alone makes a partition idle. */
    public boolean tick(Optional<Set<Partition>> assignment, long nowNanos) {
        return tick(assignment, nowNanos, Source.ALWAYS_READ_TO_END);
    }

    /**
     * Between batches: follows the source's assignment and lets idle partitions go. A partition silent for
     * idle_close_seconds is idle only once the source confirms it is read to its end ({@code readToEnd}, see
     * {@link Source#readToEnd}): one with records still to read restarts its idle clock, and one whose source could
     * not be asked (its session failed: the broker is unreachable, say) holds the minimum and is never idle until it
     * delivers or the source answers again. When W moves, it is recorded and the closed buckets are published.
     *
     * @return true when buckets closed
     */
    public boolean tick(Optional<Set<Partition>> assignment, long nowNanos, Function<Set<Partition>, Map<Partition, Boolean>> readToEnd) {
        assignment.ifPresent(held -> watermark.assignment(held, nowNanos));
        Set<Partition> silent = watermark.silent(nowNanos);
        silent.removeIf(watermark::isReadToEnd);
        boolean onlyFailed = silent.stream().allMatch(watermark::isFailed);
        if (!silent.isEmpty() && (!onlyFailed || nowNanos - lastProbeNanos >= PROBE_INTERVAL_NANOS)) {
            lastProbeNanos = nowNanos;
            Map<Partition, Boolean> answers = readToEnd.apply(silent);
            for (Partition partition : silent) {
                Boolean atEnd = answers.get(partition);
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
        }
        if (advance(nowNanos, main)) {
            closeBuckets();
            return true;
        }
        return false;
    }

    /**
     * Closes every bucket placed so far, as if every partition had gone idle, and publishes them. For
     * {@code dev invoke}: one batch, then everything the window would publish.
     */
    public void closeEverything() {
        if (watermark.closeEverything()) {
            record(main, WATERMARKS, "watermark_us", watermark.value());
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
        record(connection, WATERMARKS, "watermark_us", watermark.value());
        metrics.watermark(watermark.value());
        return true;
    }

    /**
     * Publishes every bucket the watermark closed and not yet published, and every closed bucket a late record
     * joined (whole), then deletes the rows past the allowed lateness and records how far it closed, in one
     * transaction. Runs after the commit that moved W, once at start and once in the drain.
     */
    public void closeBuckets() {
        long w = watermark.value();
        if (w == Watermark.NONE || (w <= closedUpTo && dirty.isEmpty() && !republishRetained)) {
            return;
        }
        String table = identifier(config.table());
        String column = identifier(config.timeColumn());
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
                try (PreparedStatement feedsGone = own.prepareStatement("DELETE FROM " + FEEDS + " WHERE \"window\" = ? AND bucket_us <= ?")) {
                    feedsGone.setString(1, config.table());
                    feedsGone.setLong(2, w - sizeMicros - latenessMicros);
                    feedsGone.execute();
                }
                record(own, WINDOWS, "closed_up_to_us", w);
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
    }

    private static String timestamp(long micros) {
        return micros == Watermark.NONE ? "'-infinity'::TIMESTAMPTZ" : "make_timestamptz(" + micros + ")";
    }

    private void record(DuckDBConnection connection, String stateTable, String column, long value) {
        try (PreparedStatement update = connection.prepareStatement(
                "UPDATE " + stateTable + " SET " + column + " = ?, updated_at = now() WHERE \"window\" = ?")) {
            update.setLong(1, value);
            update.setString(2, config.table());
            if (update.executeUpdate() == 0) {
                try (PreparedStatement insert = connection.prepareStatement("INSERT INTO " + stateTable + " VALUES (?, ?, now())")) {
                    insert.setString(1, config.table());
                    insert.setLong(2, value);
                    insert.execute();
                }
            }
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot record the window's state in " + stateTable + ": " + firstLine(e), e);
        }
    }

    /** [watermark, closed up to] from the state tables, created when missing. */
    private long[] restore() {
        long[] state = {Watermark.NONE, Watermark.NONE};
        try (Statement statement = main.createStatement()) {
            statement.execute("CREATE TABLE IF NOT EXISTS " + WATERMARKS + " (\"window\" VARCHAR NOT NULL, watermark_us BIGINT NOT NULL, updated_at TIMESTAMPTZ NOT NULL)");
            statement.execute("CREATE TABLE IF NOT EXISTS " + WINDOWS + " (\"window\" VARCHAR NOT NULL, closed_up_to_us BIGINT NOT NULL, updated_at TIMESTAMPTZ NOT NULL)");
            statement.execute("CREATE TABLE IF NOT EXISTS " + FEEDS + " (\"window\" VARCHAR NOT NULL, topic VARCHAR NOT NULL, "
                    + "\"partition\" INTEGER NOT NULL, bucket_us BIGINT NOT NULL, first_offset BIGINT NOT NULL)");
            try (PreparedStatement read = main.prepareStatement("SELECT topic, \"partition\", bucket_us, min(first_offset) FROM " + FEEDS
                    + " WHERE \"window\" = ? GROUP BY ALL")) {
                read.setString(1, config.table());
                try (ResultSet rows = read.executeQuery()) {
                    while (rows.next()) {
                        feeds.computeIfAbsent(new Partition(rows.getString(1), rows.getInt(2)), p -> new HashMap<>())
                                .put(rows.getLong(3), rows.getLong(4));
                    }
                }
            }
            String[] tables = {WATERMARKS, WINDOWS};
            String[] columns = {"watermark_us", "closed_up_to_us"};
            for (int i = 0; i < 2; i++) {
                try (PreparedStatement read = main.prepareStatement("SELECT max(" + columns[i] + ") FROM " + tables[i] + " WHERE \"window\" = ?")) {
                    read.setString(1, config.table());
                    try (ResultSet rows = read.executeQuery()) {
                        if (rows.next() && rows.getObject(1) != null) {
                            state[i] = rows.getLong(1);
                        }
                    }
                }
            }
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot read the window's state: " + firstLine(e), e);
        }
        return state;
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

    private static String identifier(String name) {
        return '"' + name.replace("\"", "\"\"") + '"';
    }

    private static String firstLine(SQLException e) {
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
