// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.window;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.mallard.core.engine.Engine;
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
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two windows of one pipeline over a real DuckDB, a minute and an hour, driven as the pipeline drives them: admit,
 * the handler's inserts (one per window table, each with its window's bucket expression), place, close.
 */
class WindowsTest {
    private static final Instant T0 = Instant.parse("2026-01-05T10:00:00Z");
    private static final Partition P0 = new Partition("events", 0);

    private Engine engine;
    private MetricsRegistry registry;
    private Windows windows;
    private final ByteArrayOutputStream minutePublished = new ByteArrayOutputStream();
    private final ByteArrayOutputStream hourPublished = new ByteArrayOutputStream();
    private long offset;
    private long clockNanos = 1_000_000_000L;
    private long wallSeconds = 100_000;

    @BeforeEach
    void start() throws Exception {
        engine = Engine.inMemory();
        registry = new MetricsRegistry();
        try (Statement statement = engine.connection().createStatement()) {
            statement.execute("CREATE TABLE per_minute (bucket TIMESTAMPTZ, n BIGINT)");
            statement.execute("CREATE TABLE per_hour (bucket TIMESTAMPTZ, n BIGINT)");
        }
        EventTimeReader times = new EventTimeReader(new EventTime("ts", EventTimeFormat.RFC3339));
        TumblingWindow minute = new TumblingWindow(window("per_minute", 60, 0, Optional.of(100L)), engine, times,
                new ConsoleSink(minutePublished, engine.allocator()), new WindowMetrics(registry, "p", "per_minute"));
        TumblingWindow hour = new TumblingWindow(window("per_hour", 3600, 60, Optional.empty()), engine, times,
                new ConsoleSink(hourPublished, engine.allocator()), new WindowMetrics(registry, "p", "per_hour"));
        windows = Windows.of(List.of(minute, hour));
        windows.follow(Optional.of(Set.of(P0)), clockNanos);
    }

    private static WindowConfig window(String table, long size, long grace, Optional<Long> maxFuture) {
        return new WindowConfig(table, "tables.sql[0].window", "bucket", size, grace, 30, 0, maxFuture,
                "SELECT strftime(bucket, '%H:%M') AS bucket, sum(n) AS n FROM closed GROUP BY ALL ORDER BY 1",
                new SinkConfig("console", JsonNodeFactory.instance.objectNode(), JsonNodeFactory.instance.objectNode()));
    }

    @AfterEach
    void stop() {
        windows.close();
        engine.close();
        registry.close();
    }

    /** One batch of records at these seconds after T0; returns what was written. */
    private List<Message> deliver(long... seconds) throws Exception {
        List<Message> batch = new ArrayList<>();
        for (long second : seconds) {
            String json = "{\"ts\":\"" + T0.plusSeconds(second) + "\"}";
            batch.add(new Message(P0.topic(), P0.partition(), offset++, null, json.getBytes(StandardCharsets.UTF_8)));
        }
        WindowHandOver.Admitted admitted = windows.admit(batch, clockNanos, ChronoUnit.MICROS.between(Instant.EPOCH, T0.plusSeconds(wallSeconds)));
        try (PreparedStatement minute = engine.connection().prepareStatement(
                        "INSERT INTO per_minute VALUES (time_bucket(INTERVAL '60 seconds', make_timestamptz(?)), 1)");
                PreparedStatement hour = engine.connection().prepareStatement(
                        "INSERT INTO per_hour VALUES (time_bucket(INTERVAL '3600 seconds', make_timestamptz(?)), 1)")) {
            for (Message message : admitted.messages()) {
                minute.setLong(1, message.eventTime());
                minute.execute();
                hour.setLong(1, message.eventTime());
                hour.execute();
            }
        }
        if (windows.placed(admitted.messages(), clockNanos)) {
            windows.closeBuckets();
        }
        return admitted.messages();
    }

    private long count(String table, String bucket) throws Exception {
        try (Statement statement = engine.connection().createStatement();
                ResultSet rows = statement.executeQuery("SELECT coalesce(sum(n), 0) FROM " + table + " WHERE bucket = TIMESTAMPTZ '" + bucket + "'")) {
            rows.next();
            return rows.getLong(1);
        }
    }

    private static List<String> lines(ByteArrayOutputStream published) {
        return published.toString(StandardCharsets.UTF_8).lines().toList();
    }

    @Test
    void noWindowsLetEveryRecordThroughAndCommitTheBatchsOwnPositions() {
        try (Windows none = Windows.none()) {
            List<Message> batch = List.of(new Message("t", 0, 4, null, "{}".getBytes(StandardCharsets.UTF_8)));
            assertThat(none.admit(batch, 0, 0).messages()).isEqualTo(batch);
            assertThat(none.placed(batch, 0)).isFalse();
            assertThat(none.commit(Map.of(new Partition("t", 0), 5L)).positions()).isEqualTo(Map.of(new Partition("t", 0), 5L));
        }
    }

    @Test
    void eachWindowClosesItsOwnBucketsOnItsOwnWatermark() throws Exception {
        deliver(0, 10, 70);
        assertThat(lines(minutePublished)).containsExactly("{\"bucket\":\"10:00\",\"n\":2}");
        assertThat(lines(hourPublished)).isEmpty();
        assertThat(count("per_hour", "2026-01-05T10:00:00Z")).isEqualTo(3);
    }

    @Test
    void aRecordLateForTheMinuteWindowIsTakenOutOfItsTableAndStillCountsInTheHour() throws Exception {
        deliver(0, 130);
        assertThat(lines(minutePublished)).containsExactly("{\"bucket\":\"10:00\",\"n\":1}");
        List<Message> written = deliver(30);
        assertThat(written).hasSize(1);
        assertThat(count("per_minute", "2026-01-05T10:00:00Z")).isZero();
        assertThat(count("per_hour", "2026-01-05T10:00:00Z")).isEqualTo(3);
        assertThat(registry.scrape().lines().filter(line -> line.startsWith("window_late_rows_total{")
                && line.contains("\"refused\"") && line.contains("\"per_minute\"")).toList()).singleElement().asString().endsWith(" 1.0");
        deliver(3700);
        assertThat(lines(hourPublished)).containsExactly("{\"bucket\":\"10:00\",\"n\":3}");
        assertThat(lines(minutePublished)).containsExactly("{\"bucket\":\"10:00\",\"n\":1}", "{\"bucket\":\"10:02\",\"n\":1}");
    }

    @Test
    void aRecordEveryWindowRefusesIsNotWritten() throws Exception {
        deliver(0, 3700);
        assertThat(deliver(30)).isEmpty();
        assertThat(count("per_hour", "2026-01-05T10:00:00Z")).isZero();
    }

    @Test
    void aRecordRefusedByOneWindowWhileItsBucketHoldsThatWindowsRowsIsRefusedByEvery() throws Exception {
        // The wall clock is at T0 + 100 s and the minute window refuses records past T0 + 200 s: 190 is in, 230 is
        // ahead, and both fall in the minute bucket at 180.
        wallSeconds = 100;
        List<Message> written = deliver(190, 230);
        assertThat(written).hasSize(1);
        assertThat(count("per_minute", "2026-01-05T10:03:00Z")).isEqualTo(1);
        assertThat(count("per_hour", "2026-01-05T10:00:00Z")).isEqualTo(1);
    }

    @Test
    void theCommitHoldsBackToTheLowestFeedOfAnyWindowAndCarriesTheLowestClose() throws Exception {
        deliver(0, 130);
        WindowHandOver.Commit commit = windows.commit(Map.of(P0, offset));
        // The minute bucket at 10:00 closed and its feed went; the open hour bucket is fed from offset 0. The minute
        // window closed up to 10:02:10, the hour window (60 s of grace) up to 10:01:10.
        assertThat(commit.positions()).isEqualTo(Map.of(P0, 0L));
        assertThat(commit.metadata()).isEqualTo(TumblingWindow.METADATA_PREFIX + ChronoUnit.MICROS.between(Instant.EPOCH, T0.plusSeconds(70)));
    }
}
