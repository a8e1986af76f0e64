// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Random;
import org.duckdb.DuckDBConnection;
import org.junit.jupiter.api.Test;

/** dbsp_spill and dbsp_parallel: a sync under a memory bound, or on several threads, moves the views exactly. */
class SyncResourcesTest {
    private static final String JOINED = "SELECT a.k, a.x, b.y FROM a JOIN b ON a.k = b.k";
    private static final String GROUPED = "SELECT a.k % 1000 AS g, count(*) AS n, sum(b.y) AS s FROM a JOIN b ON a.k = b.k GROUP BY a.k % 1000";

    @Test
    void aBigSyncUnderASmallMemoryBoundCompletesEqualToItsQueryAndPutsTheLimitBack() throws Exception {
        try (DuckDBConnection connection = DuckDb.open("jdbc:duckdb:");
                MaterializedViews views = MaterializedViews.attach(connection)) {
            DuckDb.run(connection, "SET temp_directory = 'target/spill-" + System.nanoTime() + "'",
                    "CREATE TABLE a (k BIGINT, x VARCHAR)", "CREATE TABLE b (k BIGINT, y BIGINT)",
                    "INSERT INTO b SELECT range, range * 3 FROM range(300000)");
            views.createView("joined", JOINED);
            views.createView("grouped", GROUPED);
            String before = DuckDb.rows(connection, "SELECT current_setting('memory_limit')").get(0);
            views.spill(32L * 1024 * 1024);

            DuckDb.run(connection, "INSERT INTO a SELECT range, repeat('x', 40) || range FROM range(300000)");
            views.sync();

            assertThat(DuckDb.difference(connection, "joined", JOINED)).isZero();
            assertThat(DuckDb.difference(connection, "grouped", GROUPED)).isZero();
            assertThat(DuckDb.rows(connection, "SELECT count(*) FROM joined")).containsExactly("300000");
            assertThat(DuckDb.rows(connection, "SELECT current_setting('memory_limit')")).containsExactly(before);
        }
    }

    @Test
    void syncsOnSeveralThreadsLeaveTheViewsEqualToASerialSyncOfTheSameWrites() throws Exception {
        try (DuckDBConnection serial = DuckDb.open("jdbc:duckdb:"); DuckDBConnection parallel = DuckDb.open("jdbc:duckdb:");
                MaterializedViews one = MaterializedViews.attach(serial);
                MaterializedViews many = MaterializedViews.attach(parallel).parallel(4)) {
            for (DuckDBConnection connection : List.of(serial, parallel)) {
                DuckDb.run(connection, "CREATE TABLE a (k BIGINT, x VARCHAR)", "CREATE TABLE b (k BIGINT, y BIGINT)",
                        "INSERT INTO b SELECT range, range % 7 FROM range(20000)");
            }
            for (MaterializedViews views : List.of(one, many)) {
                views.createView("joined", JOINED);
                views.createView("grouped", GROUPED);
            }
            String threads = DuckDb.rows(parallel, "SELECT current_setting('threads')").get(0);
            Random random = new Random(20);
            for (int round = 0; round < 5; round++) {
                long from = random.nextInt(20000);
                List<String> writes = List.of("INSERT INTO a SELECT range, 'r" + round + "' FROM range(" + from + ", " + (from + 3000) + ")",
                        "DELETE FROM a WHERE k % 11 = " + random.nextInt(11), "UPDATE b SET y = y + 1 WHERE k % 5 = " + random.nextInt(5));
                for (DuckDBConnection connection : List.of(serial, parallel)) {
                    DuckDb.run(connection, writes.toArray(String[]::new));
                }
                one.sync();
                many.sync();
                for (String view : List.of("joined", "grouped")) {
                    assertThat(DuckDb.rows(parallel, "SELECT * FROM " + view + " ORDER BY ALL"))
                            .isEqualTo(DuckDb.rows(serial, "SELECT * FROM " + view + " ORDER BY ALL"));
                }
                assertThat(DuckDb.difference(parallel, "grouped", GROUPED)).isZero();
            }
            assertThat(DuckDb.rows(parallel, "SELECT current_setting('threads')")).containsExactly(threads);
        }
    }
}
