// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.window;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.mallard.core.engine.Engine;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.metrics.MetricsRegistry;
import dev.mallard.flow.config.PipelineConfig.SinkConfig;
import dev.mallard.flow.config.PipelineConfig.WindowConfig;
import dev.mallard.flow.handler.EventTimeReader;
import dev.mallard.flow.handler.RecordColumns.EventTime;
import dev.mallard.flow.handler.RecordColumns.EventTimeFormat;
import dev.mallard.flow.sink.ConsoleSink;
import dev.mallard.flow.source.Message;
import dev.mallard.flow.source.Source.Partition;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A deterministic simulator: a scripted monotonic clock, scripted partitions and records drive the real window
 * code (TumblingWindow over a real DuckDB, its watermark, its console sink) as the pipeline drives it, and each
 * scenario checks the exact rows published. Buckets are one minute, grace 10 s, idle close 30 s.
 */
class WindowSimulatorTest {
    private static final Instant T0 = Instant.parse("2015-12-12T19:00:00Z");
    private static final Partition P0 = new Partition("events", 0);
    private static final Partition P1 = new Partition("events", 1);

    @TempDir
    Path dir;

    private Engine engine;
    private TumblingWindow window;
    private ByteArrayOutputStream published;
    private MetricsRegistry registry;
    private long clockNanos = 1_000_000_000L;
    private final Set<Partition> assignment = new LinkedHashSet<>();
    private final Map<Partition, Long> offsets = new HashMap<>();
    // The scripted broker: partitions it cannot be asked about, partitions with records not read yet, and what was asked.
    private final Set<Partition> unreachable = new java.util.HashSet<>();
    private final Set<Partition> unread = new java.util.HashSet<>();
    private final List<Partition> asked = new ArrayList<>();

    private void start(Engine opened, Optional<Long> maxFutureSeconds) throws SQLException {
        start(opened, maxFutureSeconds, 0);
    }

    private void start(Engine opened, Optional<Long> maxFutureSeconds, long latenessSeconds) throws SQLException {
        engine = opened;
        try (Statement statement = engine.connection().createStatement()) {
            statement.execute("CREATE TABLE IF NOT EXISTS counts (bucket TIMESTAMPTZ, city VARCHAR, n BIGINT)");
        }
        WindowConfig config = new WindowConfig("counts", "tables.sql[0].window", "bucket", 60, 10, 30, latenessSeconds, maxFutureSeconds,
                "SELECT bucket, city, sum(n) AS n FROM closed GROUP BY ALL ORDER BY bucket, city",
                new SinkConfig("console", JsonNodeFactory.instance.objectNode(), JsonNodeFactory.instance.objectNode()));
        published = new ByteArrayOutputStream();
        registry = new MetricsRegistry();
        window = new TumblingWindow(config, engine, new EventTimeReader(new EventTime("ts", EventTimeFormat.RFC3339)),
                new ConsoleSink(published, engine.allocator()), new WindowMetrics(registry, "sim", "counts"));
        window.closeBuckets();
    }

    private void start() throws SQLException {
        start(Engine.inMemory(), Optional.empty());
    }

    @AfterEach
    void stop() {
        if (window != null) {
            window.close();
        }
        if (engine != null) {
            engine.close();
        }
        if (registry != null) {
            registry.close();
        }
    }

    private void assign(Partition... partitions) {
        assignment.clear();
        assignment.addAll(List.of(partitions));
        tick();
    }

    private void elapse(long seconds) {
        clockNanos += seconds * 1_000_000_000L;
        tick();
    }

    /** Between batches, as the pipeline does it: the window names its silent partitions, the broker answers. */
    private void tick() {
        Set<Partition> silent = window.silent(Optional.of(Set.copyOf(assignment)), clockNanos);
        if (window.idle(silent.isEmpty() ? Map.of() : askBroker(silent), clockNanos)) {
            window.closeBuckets();
        }
    }

    /** The scripted broker's answer to "is this partition read to its end": by default yes, for every partition. */
    private Map<Partition, Boolean> askBroker(Set<Partition> partitions) {
        asked.addAll(partitions);
        Map<Partition, Boolean> answer = new java.util.HashMap<>();
        for (Partition partition : partitions) {
            if (!unreachable.contains(partition)) {
                answer.put(partition, !unread.contains(partition));
            }
        }
        return answer;
    }

    /** One batch from one partition: admit, write (the handler's count by bucket and city), place, commit, close. */
    private void deliver(Partition partition, String... records) throws SQLException {
        if (deliverWithoutClosing(partition, records)) {
            window.closeBuckets();
        }
    }

    /** {@link #deliver} up to the commit, as if the process stopped there: returns whether a close was due. */
    private boolean deliverWithoutClosing(Partition partition, String... records) throws SQLException {
        List<Message> batch = new ArrayList<>();
        for (String record : records) {
            String[] parts = record.split(" ");
            String json = "{\"ts\":\"" + T0.plusSeconds(Long.parseLong(parts[0])) + "\",\"city\":\"" + parts[1] + "\"}";
            long offset = offsets.merge(partition, 1L, Long::sum) - 1;
            batch.add(new Message(partition.topic(), partition.partition(), offset, null, json.getBytes(StandardCharsets.UTF_8)));
        }
        window.follow(Optional.of(Set.copyOf(assignment)), clockNanos);
        List<Message> admitted = window.admit(batch, clockNanos, wallMicros(T0.plusSeconds(3600))).messages();
        try (PreparedStatement insert = engine.connection().prepareStatement(
                "INSERT INTO counts VALUES (time_bucket(INTERVAL '60 seconds', make_timestamptz(?)), ?, 1)")) {
            for (Message message : admitted) {
                insert.setLong(1, message.eventTime());
                insert.setString(2, new String(message.value(), StandardCharsets.UTF_8).replaceAll(".*\"city\":\"([^\"]+)\".*", "$1"));
                insert.execute();
            }
        }
        return window.placed(admitted, clockNanos).closeDue();
    }

    private static long wallMicros(Instant instant) {
        return ChronoUnit.MICROS.between(Instant.EPOCH, instant);
    }

    private List<String> published() {
        List<String> lines = published.toString(StandardCharsets.UTF_8).lines().toList();
        published.reset();
        return lines;
    }

    private String watermark() {
        long w = window.watermark();
        return w == Watermark.NONE ? "none" : Instant.EPOCH.plus(w, ChronoUnit.MICROS).toString();
    }

    private double series(String name) {
        return registry.meters().find(name).tags("window", "counts").counters().stream().mapToDouble(c -> c.count()).sum();
    }

    private double late(String outcome) {
        return registry.meters().find("window_late_rows").tags("window", "counts", "outcome", outcome).counter().count();
    }

    private static String row(int minute, String city, int n) {
        return "{\"bucket\":\"" + T0.plusSeconds(60L * minute) + "\",\"city\":\"" + city + "\",\"n\":" + n + "}";
    }

    @Test
    void aSlowProcessNeverTurnsAPartitionWithUnreadRecordsIdleSoItsOnTimeRecordsAreNotRefused() throws Exception {
        start();
        assign(P0, P1);
        deliver(P0, "10 a");
        deliver(P1, "5 b");
        // The process is slow (a loaded machine): 40 s pass inside one batch, with no tick between, while P1's next
        // record waits in the broker, unread. By P1's own event time it is on time.
        unread.add(P1);
        clockNanos += 40_000_000_000L;
        deliver(P0, "130 a");
        assertThat(published()).as("P1 holds W: it is silent only because this process did not read it").isEmpty();
        deliver(P1, "20 b");
        assertThat(late("refused")).isZero();
        unread.remove(P1);
        elapse(31);
        assertThat(published()).containsExactly(row(0, "a", 1), row(0, "b", 2), row(2, "a", 1));
    }

    private double closeLag() {
        return registry.meters().find("window_close_lag_seconds").tags("window", "counts").gauge().value();
    }

    @Test
    void theCloseLagIsHowFarClosesTrailTheWatermarkInEventTimeNotTheWallClock() throws Exception {
        // 2015 data read in a later year: the closes keep up, so nothing lags, however old the events are.
        start();
        assign(P0);
        assertThat(closeLag()).isZero();
        deliver(P0, "10 a", "20 a");
        deliver(P0, "130 a");
        assertThat(published()).containsExactly(row(0, "a", 2));
        assertThat(closeLag()).isZero();
        // W moves past bucket 1 while its close has not run yet: the close is 60 s of event time behind.
        assertThat(deliverWithoutClosing(P0, "190 a")).isTrue();
        assertThat(closeLag()).isEqualTo(60.0);
        window.closeBuckets();
        assertThat(closeLag()).isZero();
    }

    @Test
    void outOfOrderRowsInsideTheGraceAreNotLate() throws Exception {
        start();
        assign(P0);
        deliver(P0, "65 a");          // W = 55 s: nothing closed
        deliver(P0, "55 a", "58 b");  // before the newest, but their bucket (0-60 s) is still open
        assertThat(published()).isEmpty();
        deliver(P0, "75 a");          // W = 65 s: bucket 0 closes with both late-arriving rows in it
        assertThat(published()).containsExactly(row(0, "a", 1), row(0, "b", 1));
        assertThat(series("window_late_rows")).isZero();
    }

    @Test
    void aFastPartitionHoldsForTheSlowOne() throws Exception {
        start();
        assign(P0, P1);
        deliver(P0, "5 a", "300 a");  // P0 is far ahead, P1 has delivered nothing: W does not move
        assertThat(watermark()).isEqualTo("none");
        deliver(P1, "20 b");          // W = min(290, 10) = 10 s: still nothing closes
        assertThat(published()).isEmpty();
        deliver(P1, "125 b");         // W = min(290, 115): bucket 0 closes, bucket 1 (60-120 s) not yet
        assertThat(published()).containsExactly(row(0, "a", 1), row(0, "b", 1));
        assertThat(watermark()).isEqualTo("2015-12-12T19:01:55Z");
    }

    @Test
    void aSilentPartitionStopsHoldingAfterIdleClose() throws Exception {
        start();
        assign(P0, P1);
        deliver(P1, "10 b");
        deliver(P0, "10 a", "200 a");
        assertThat(published()).isEmpty();
        elapse(29);
        assertThat(published()).as("before idle_close").isEmpty();
        deliver(P0, "201 a");         // P0 stays active; P1 has been silent
        elapse(2);                    // P1 silent for 31 s: W = 191 s from P0 alone
        assertThat(published()).containsExactly(row(0, "a", 1), row(0, "b", 1));
        assertThat(watermark()).isEqualTo("2015-12-12T19:03:11Z");
    }

    @Test
    void whenEveryPartitionIsIdleEverythingCloses() throws Exception {
        start();
        assign(P0, P1);
        deliver(P0, "10 a");
        deliver(P1, "70 b", "130 b");
        elapse(31);
        assertThat(published()).containsExactly(row(0, "a", 1), row(1, "b", 1), row(2, "b", 1));
        assertThat(watermark()).as("newest + one bucket").isEqualTo("2015-12-12T19:03:10Z");
        elapse(60);
        assertThat(published()).as("idle ticks publish nothing more").isEmpty();
    }

    @Test
    void aPartitionThatNeverDeliveredHoldsUntilItIsIdle() throws Exception {
        start();
        assign(P0, P1);
        deliver(P0, "10 a", "200 a");
        elapse(10);
        deliver(P0, "210 a");
        assertThat(watermark()).isEqualTo("none");
        assertThat(published()).isEmpty();
        elapse(25);                   // P1 assigned 35 s ago and silent since: it leaves the minimum
        assertThat(published()).containsExactly(row(0, "a", 1));
    }

    @Test
    void aLateRecordIsRefusedCountedAndNeverWritten() throws Exception {
        start();
        assign(P0);
        deliver(P0, "10 a", "130 a"); // W = 120 s: buckets 0 and 1 close
        assertThat(published()).containsExactly(row(0, "a", 1));
        deliver(P0, "30 late", "119 late", "121 ok");
        assertThat(series("window_late_rows")).isEqualTo(2);
        elapse(31);
        assertThat(published()).containsExactly(row(2, "a", 1), row(2, "ok", 1));
        try (Statement statement = engine.connection().createStatement();
                var rows = statement.executeQuery("SELECT count(*) FROM counts WHERE city = 'late'")) {
            rows.next();
            assertThat(rows.getLong(1)).isZero();
        }
    }

    @Test
    void aRevokedPartitionLeavesTheMinimum() throws Exception {
        start();
        assign(P0, P1);
        deliver(P1, "5 b");
        deliver(P0, "5 a", "200 a");
        assertThat(published()).isEmpty();
        assign(P0);                   // P1 now belongs to another member
        assertThat(published()).containsExactly(row(0, "a", 1), row(0, "b", 1));
    }

    @Test
    void aRecordStampedFarInTheFutureIsRefusedInsteadOfMovingTheWatermark() throws Exception {
        start(Engine.inMemory(), Optional.of(600L));
        assign(P0);
        deliver(P0, "10 a", "7200 wrong", "30 a");  // the wall clock is T0 + 1 h; 2 h is beyond 10 min ahead
        assertThat(series("window_late_rows")).isEqualTo(1);
        assertThat(watermark()).isEqualTo("2015-12-12T19:00:20Z");
        assertThat(published()).isEmpty();
    }

    @Test
    void theWatermarkNeverMovesBackwards() throws Exception {
        start();
        assign(P0, P1);
        deliver(P0, "300 a");
        deliver(P1, "300 b");
        assertThat(watermark()).isEqualTo("2015-12-12T19:04:50Z");
        assign(P0, P1, new Partition("events", 2)); // a new partition holds W, it cannot pull it back
        assertThat(watermark()).isEqualTo("2015-12-12T19:04:50Z");
        deliver(new Partition("events", 2), "10 c"); // a record behind W is late, not a reason to go back
        assertThat(watermark()).isEqualTo("2015-12-12T19:04:50Z");
        assertThat(series("window_late_rows")).isEqualTo(1);
    }

    @Test
    void aRestartWithTheStateFileResumesWithoutRepublishing() throws Exception {
        Path state = dir.resolve("state.db");
        start(Engine.onFile(state), Optional.empty());
        assign(P0);
        deliver(P0, "10 a", "70 a", "130 a"); // W = 120 s: buckets 0 and 1 published
        assertThat(published()).containsExactly(row(0, "a", 1), row(1, "a", 1));
        stop();
        window = null;
        start(Engine.onFile(state), Optional.empty());
        assertThat(published()).as("the start pass finds nothing left to publish").isEmpty();
        assertThat(watermark()).isEqualTo("2015-12-12T19:02:00Z");
        assign(P0);
        deliver(P0, "100 late", "190 a");
        assertThat(series("window_late_rows")).isEqualTo(1);
        assertThat(published()).containsExactly(row(2, "a", 1));
    }

    @Test
    void aCrashAfterTheWatermarkCommittedPublishesTheClosedBucketsOnTheNextStart() throws Exception {
        Path state = dir.resolve("state.db");
        start(Engine.onFile(state), Optional.empty());
        assign(P0);
        deliver(P0, "10 a", "20 b");
        // The next batch's commit moves W, then the process dies before the pass.
        try (PreparedStatement insert = engine.connection().prepareStatement(
                "INSERT INTO counts VALUES (time_bucket(INTERVAL '60 seconds', make_timestamptz(?)), 'a', 1)")) {
            List<Message> admitted = window.admit(List.of(new Message("events", 0, 2, null,
                    ("{\"ts\":\"" + T0.plusSeconds(130) + "\",\"city\":\"a\"}").getBytes(StandardCharsets.UTF_8))), clockNanos,
                    wallMicros(T0)).messages();
            insert.setLong(1, admitted.getFirst().eventTime());
            insert.execute();
            assertThat(window.placed(admitted, clockNanos).closeDue()).isTrue();
        }
        stop();
        window = null;
        start(Engine.onFile(state), Optional.empty());
        assertThat(published()).containsExactly(row(0, "a", 1), row(0, "b", 1));
    }

    @Test
    void tenThousandBucketsKeepTheTableAndMemoryFlat() throws Exception {
        start();
        assign(P0);
        long[] rowsAt = new long[2];
        long[] memoryAt = new long[2];
        int buckets = 10_000;
        for (int batch = 0; batch < buckets / 10; batch++) {
            String[] records = new String[10];
            for (int i = 0; i < 10; i++) {
                records[i] = (60L * (batch * 10 + i) + 30) + " c" + (i % 3);
            }
            deliver(P0, records);
            if (batch == 99 || batch == buckets / 10 - 1) {
                int at = batch == 99 ? 0 : 1;
                try (Statement statement = engine.connection().createStatement();
                        var rows = statement.executeQuery("SELECT (SELECT count(*) FROM counts), "
                                + "(SELECT sum(memory_usage_bytes) FROM duckdb_memory())")) {
                    rows.next();
                    rowsAt[at] = rows.getLong(1);
                    memoryAt[at] = rows.getLong(2);
                }
            }
        }
        assertThat(published()).hasSize(buckets - 1);
        // Only the open bucket's rows are left, after 1,000 buckets as after 10,000.
        assertThat(rowsAt).containsExactly(1, 1);
        assertThat(memoryAt[1]).as("DuckDB memory after 10,000 buckets vs after 1,000").isLessThanOrEqualTo(memoryAt[0] * 2 + (4 << 20));
    }

    @Test
    void aLateRecordWithinTheAllowedLatenessRepublishesItsBucketWholeUntilTheLatenessRunsOut() throws Exception {
        start(Engine.inMemory(), Optional.empty(), 120);
        assign(P0);
        deliver(P0, "10 a", "20 b", "130 a");   // W = 120 s: bucket 0 closes
        assertThat(published()).containsExactly(row(0, "a", 1), row(0, "b", 1));
        deliver(P0, "30 a");                   // late, but 60 + 120 > 120: written, and bucket 0 goes out again whole
        assertThat(published()).containsExactly(row(0, "a", 2), row(0, "b", 1));
        assertThat(late("recomputed")).isEqualTo(1);
        assertThat(series("window_recomputes")).isEqualTo(1);
        deliver(P0, "250 a");                  // W = 240 s: bucket 2 closes; bucket 0's lateness (to 180 s) ran out
        assertThat(published()).containsExactly(row(2, "a", 1));
        deliver(P0, "40 a");                   // now refused
        assertThat(late("refused")).isEqualTo(1);
        assertThat(published()).isEmpty();
        try (Statement statement = engine.connection().createStatement();
                var rows = statement.executeQuery("SELECT count(*) FROM counts WHERE bucket < TIMESTAMPTZ '2015-12-12 19:01:00+00'")) {
            rows.next();
            assertThat(rows.getLong(1)).as("bucket 0's rows are deleted once its lateness ran out").isZero();
        }
    }

    @Test
    void aSilentPartitionWhoseBrokerCannotBeAskedHoldsUntilItAnswers() throws Exception {
        start();
        assign(P0, P1);
        deliver(P1, "10 b");
        deliver(P0, "10 a", "200 a");
        unreachable.add(P1);
        elapse(31);
        assertThat(published()).as("P1 is silent, but nobody can say it has nothing more: it holds").isEmpty();
        elapse(3600);
        assertThat(published()).as("an hour later it still holds").isEmpty();
        unreachable.clear();
        elapse(1);
        assertThat(published()).as("the broker answers: both read to their end, everything closes")
                .containsExactly(row(0, "a", 1), row(0, "b", 1), row(3, "a", 1));
    }

    @Test
    void aSilentPartitionWithRecordsNotYetReadIsNotIdle() throws Exception {
        start();
        assign(P0, P1);
        deliver(P1, "10 b");
        deliver(P0, "10 a", "200 a");
        unread.add(P1);
        elapse(31);
        assertThat(published()).as("P1 has records waiting: its idle clock restarts").isEmpty();
        unread.clear();
        elapse(29);
        assertThat(published()).as("within idle_close of the restart").isEmpty();
        elapse(2);
        assertThat(published()).containsExactly(row(0, "a", 1), row(0, "b", 1), row(3, "a", 1));
        asked.clear();
        elapse(60);
        assertThat(asked).as("partitions confirmed read to their end are not asked again while silent").isEmpty();
    }

    @Test
    void theDrainsFinalPassPublishesWhatTheLastBatchClosed() throws Exception {
        start();
        assign(P0);
        deliver(P0, "10 a", "20 a");
        assertThat(deliverWithoutClosing(P0, "130 a")).as("the last batch moved W past bucket 0").isTrue();
        assertThat(published()).as("a stop request arrived before its close").isEmpty();
        window.closeBuckets();
        assertThat(published()).as("the drain's pass").containsExactly(row(0, "a", 2));
    }

    @Test
    void aFailedSessionHoldsTheMinimumAndIsNeverIdle() {
        Watermark w = new Watermark(60, 0, 30, Watermark.NONE);
        long now = 0;
        w.assignment(Set.of(P0, P1), now);
        w.placed(P0, 500_000_000L, now);
        w.placed(P1, 100_000_000L, now);
        w.failed(P1, now);
        assertThat(w.advance(now + 3_600_000_000_000L)).as("an hour later, P1 still holds").isFalse();
        assertThat(w.value()).isEqualTo(Watermark.NONE);
        w.placed(P1, 200_000_000L, now + 3_600_000_000_000L);
        assertThat(w.advance(now + 3_600_000_000_000L)).isTrue();
        assertThat(w.value()).isEqualTo(200_000_000L);
    }

    @Test
    void anEmitSqlThatDoesNotReadClosedIsRefusedAtStart() throws Exception {
        engine = Engine.inMemory();
        try (Statement statement = engine.connection().createStatement()) {
            statement.execute("CREATE TABLE counts (bucket TIMESTAMPTZ, city VARCHAR, n BIGINT)");
        }
        WindowConfig config = new WindowConfig("counts", "tables.sql[0].window", "bucket", 60, 0, 30, 0, Optional.empty(),
                "SELECT * FROM counts", new SinkConfig("console", JsonNodeFactory.instance.objectNode(), JsonNodeFactory.instance.objectNode()));
        assertThatThrownBy(() -> new TumblingWindow(config, engine, new EventTimeReader(new EventTime("ts", EventTimeFormat.RFC3339)),
                new ConsoleSink(new ByteArrayOutputStream(), engine.allocator()), new WindowMetrics(new MetricsRegistry(), "p", "counts")))
                .isInstanceOf(MallardException.class).hasMessageContaining("emit_sql does not read `closed`");
    }

    @Test
    void aWindowTableWithAPrimaryKeyOrAWrongTimeColumnIsRefusedAtStart() throws Exception {
        engine = Engine.inMemory();
        try (Statement statement = engine.connection().createStatement()) {
            statement.execute("CREATE TABLE keyed (bucket TIMESTAMPTZ, city VARCHAR, PRIMARY KEY (bucket, city))");
            statement.execute("CREATE TABLE naive (bucket TIMESTAMP, city VARCHAR)");
        }
        for (String[] table : new String[][] {{"keyed", "PRIMARY KEY"}, {"naive", "must be TIMESTAMPTZ"}}) {
            WindowConfig config = new WindowConfig(table[0], "tables.sql[0].window", "bucket", 60, 0, 30, 0, Optional.empty(),
                    WindowConfig.DEFAULT_EMIT_SQL, new SinkConfig("console", JsonNodeFactory.instance.objectNode(), JsonNodeFactory.instance.objectNode()));
            assertThatThrownBy(() -> new TumblingWindow(config, engine, new EventTimeReader(new EventTime("ts", EventTimeFormat.RFC3339)),
                    new ConsoleSink(new ByteArrayOutputStream(), engine.allocator()), new WindowMetrics(new MetricsRegistry(), "p", table[0])))
                    .isInstanceOf(MallardException.class).hasMessageContaining(table[1]);
        }
    }
}
