// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.window;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.core.engine.Engine;
import dev.mallard.flow.source.Source.Partition;
import java.nio.file.Path;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WindowStoreTest {
    private static final Partition P0 = new Partition("events", 0);
    private static final Partition P1 = new Partition("events", 1);

    @TempDir
    Path dir;

    @Test
    void aNewDatabaseRestoresNoWatermarkNothingClosedAndNoFeeds() {
        try (Engine engine = Engine.inMemory()) {
            WindowStore.Restored restored = new WindowStore("counts").restore(engine.connection());
            assertThat(restored.watermark()).isEqualTo(Watermark.NONE);
            assertThat(restored.closedUpTo()).isEqualTo(Watermark.NONE);
            assertThat(restored.feeds()).isEmpty();
        }
    }

    @Test
    void whatOneRunRecordsTheNextRestoresFromTheFile() {
        Path file = dir.resolve("state.db");
        try (Engine engine = Engine.onFile(file)) {
            WindowStore store = new WindowStore("counts");
            store.restore(engine.connection());
            store.recordWatermark(engine.connection(), 100);
            store.recordWatermark(engine.connection(), 250);
            store.recordClosedUpTo(engine.connection(), 200);
            store.recordFeed(engine.connection(), P0, 60, 7);
            store.recordFeed(engine.connection(), P1, 120, 3);
        }
        try (Engine engine = Engine.onFile(file)) {
            WindowStore.Restored restored = new WindowStore("counts").restore(engine.connection());
            assertThat(restored.watermark()).isEqualTo(250);
            assertThat(restored.closedUpTo()).isEqualTo(200);
            assertThat(restored.feeds()).isEqualTo(Map.of(P0, Map.of(60L, 7L), P1, Map.of(120L, 3L)));
        }
    }

    @Test
    void twoWindowsShareTheTablesAndNeverSeeEachOthersState() {
        try (Engine engine = Engine.inMemory()) {
            WindowStore minutes = new WindowStore("per_minute");
            WindowStore hours = new WindowStore("per_hour");
            minutes.restore(engine.connection());
            hours.restore(engine.connection());
            minutes.recordWatermark(engine.connection(), 60);
            minutes.recordFeed(engine.connection(), P0, 0, 1);
            hours.recordWatermark(engine.connection(), 3600);
            hours.recordClosedUpTo(engine.connection(), 3600);
            minutes.forgetPartitions(engine.connection(), List.of(P1));
            hours.forgetPartitions(engine.connection(), List.of(P0));

            WindowStore.Restored minute = minutes.restore(engine.connection());
            WindowStore.Restored hour = hours.restore(engine.connection());
            assertThat(minute.watermark()).isEqualTo(60);
            assertThat(minute.closedUpTo()).isEqualTo(Watermark.NONE);
            assertThat(minute.feeds()).isEqualTo(Map.of(P0, Map.of(0L, 1L)));
            assertThat(hour.watermark()).isEqualTo(3600);
            assertThat(hour.closedUpTo()).isEqualTo(3600);
            assertThat(hour.feeds()).isEmpty();
        }
    }

    @Test
    void feedsAreForgottenByBucketOnEitherSideAndByPartition() {
        try (Engine engine = Engine.inMemory()) {
            WindowStore store = new WindowStore("counts");
            store.restore(engine.connection());
            for (long bucket : new long[] {0, 60, 120, 180}) {
                store.recordFeed(engine.connection(), P0, bucket, bucket / 60);
                store.recordFeed(engine.connection(), P1, bucket, 10 + bucket / 60);
            }
            store.forgetFeedsUpTo(engine.connection(), 60);
            store.forgetFeedsAfter(engine.connection(), 120);
            store.forgetPartitions(engine.connection(), List.of(P1));
            assertThat(store.restore(engine.connection()).feeds()).isEqualTo(Map.of(P0, Map.of(120L, 2L)));
        }
    }

    @Test
    void aWriteInARolledBackTransactionLeavesNoTrace() throws Exception {
        try (Engine engine = Engine.inMemory()) {
            WindowStore store = new WindowStore("counts");
            store.restore(engine.connection());
            store.recordWatermark(engine.connection(), 60);
            try (Statement statement = engine.connection().createStatement()) {
                statement.execute("BEGIN TRANSACTION");
                store.recordWatermark(engine.connection(), 120);
                store.recordFeed(engine.connection(), P0, 60, 5);
                statement.execute("ROLLBACK");
            }
            WindowStore.Restored restored = store.restore(engine.connection());
            assertThat(restored.watermark()).isEqualTo(60);
            assertThat(restored.feeds()).isEmpty();
        }
    }
}
