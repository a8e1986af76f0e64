// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.error.MallardException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.duckdb.DuckDBConnection;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Changes the capture triggers could not see are found by the fingerprint check and reconciled by scan-and-diff. */
class ReconcileTest {
    private static final String TOTALS = "SELECT city, sum(amount) AS total, count(*) AS n FROM orders GROUP BY city";
    private static final String BIG = "SELECT city, total FROM totals WHERE total > 5";
    private static final String ROWS = "SELECT id, upper(city) AS city FROM orders WHERE amount > 1";

    @TempDir
    Path dir;
    private String url;
    private DuckDBConnection connection;
    private MaterializedViews views;

    @BeforeEach
    void open() {
        url = "jdbc:duckdb:" + dir.resolve("shop.duckdb");
        connection = DuckDb.open(url);
        DuckDb.run(connection, "CREATE TABLE orders (id INTEGER, city VARCHAR, amount INTEGER)",
                "INSERT INTO orders VALUES (1, 'Oslo', 4), (2, 'Oslo', 3), (3, 'Rome', 9), (4, 'Bari', 1), (4, 'Bari', 1)");
        views = MaterializedViews.attach(connection);
        views.createView("totals", TOTALS);
        views.createView("big", BIG);
        views.createView("rows", ROWS);
    }

    @AfterEach
    void close() throws Exception {
        views.close();
        connection.close();
    }

    @Test
    void writesWithTheTriggersDroppedAreReconciledAndTheTriggersComeBack() {
        dropTriggers(connection, "orders");
        DuckDb.run(connection, "INSERT INTO orders VALUES (5, 'Rome', 2), (6, 'Lund', 8)", "DELETE FROM orders WHERE id = 1",
                "UPDATE orders SET amount = 7 WHERE id = 4");
        assertThat(views.stats().pendingRows()).isZero();

        assertThat(views.reconcile()).containsExactly("main.orders");

        assertEqualToTheirQueries();
        assertThat(triggers()).isEqualTo(3);
        assertThat(viewTriggers()).as("insert, delete, and update's old and new rows").isEqualTo(4);
        ViewStats stats = views.stats();
        assertThat(stats.scanSyncs()).as("totals and rows rescanned; big moved by totals' difference").isEqualTo(2);
        assertThat(stats.provisionalTables()).isEmpty();
        assertThat(views.reconcile()).isEmpty();
        assertThat(views.stats().scanSyncs()).isEqualTo(2);

        DuckDb.run(connection, "DELETE FROM orders WHERE city = 'Rome'");
        views.sync();
        assertEqualToTheirQueries();
        assertThat(views.stats().exactDeltaSyncs()).isEqualTo(1);
    }

    @Test
    void aViewTableThatOthersReadIsReconciledWhenWrittenWithItsTriggersDropped() {
        dropTriggers(connection, "totals");
        DuckDb.run(connection, "DELETE FROM totals WHERE city = 'Rome'", "INSERT INTO totals VALUES ('Nowhere', 99, 1)");

        assertThat(views.reconcile()).containsExactly("main.totals");

        assertEqualToTheirQueries();
    }

    @Test
    void aSyncChecksFirstWhenAnIntervalIsSetSoTriggersRecreatedBehindItsBackDoNotHideAWrite() {
        List<String> triggerSql = DuckDb.rows(connection, "SELECT sql FROM duckdb_triggers() WHERE table_name = 'orders'");
        dropTriggers(connection, "orders");
        DuckDb.run(connection, "DELETE FROM orders WHERE id = 3", "INSERT INTO orders VALUES (7, 'Oslo', 30)");
        DuckDb.run(connection, triggerSql.toArray(String[]::new));
        DuckDb.run(connection, "INSERT INTO orders VALUES (8, 'Rome', 1)");

        views.reconcileEvery(Duration.ZERO).sync();

        assertEqualToTheirQueries();
        assertThat(views.stats().scanSyncs()).isEqualTo(2);
    }

    @Test
    void reopeningAFileWrittenBehindMallardsBackReconcilesAtAttach() throws Exception {
        views.close();
        connection.close();
        try (DuckDBConnection raw = DuckDb.open(url)) {
            dropTriggers(raw, "orders");
            DuckDb.run(raw, "INSERT INTO orders VALUES (9, 'Oslo', 100)", "DELETE FROM orders WHERE city = 'Bari'");
        }
        connection = DuckDb.open(url);
        views = MaterializedViews.attach(connection);

        assertEqualToTheirQueries();
        assertThat(views.stats().scanSyncs()).isEqualTo(2);
        assertThat(triggers()).isEqualTo(3);
    }

    @Test
    void reopeningAnUnchangedFileRecomputesNothing() throws Exception {
        DuckDb.run(connection, "INSERT INTO orders VALUES (10, 'Oslo', 1)");
        views.close();
        connection.close();
        connection = DuckDb.open(url);
        views = MaterializedViews.attach(connection);
        assertThat(views.stats().scanSyncs()).isZero();
        // The row captured before the close is applied when the views are attached, before any read.
        assertThat(views.stats().pendingRows()).isZero();
        assertEqualToTheirQueries();
        views.sync();
        assertEqualToTheirQueries();
        assertThat(views.stats().scanSyncs()).isZero();
    }

    @Test
    void attachingWithoutTheCheckLeavesAnUnexplainedChangeToTheNextReconcile() throws Exception {
        views.close();
        connection.close();
        try (DuckDBConnection raw = DuckDb.open(url)) {
            dropTriggers(raw, "orders");
            DuckDb.run(raw, "INSERT INTO orders VALUES (9, 'Oslo', 100)");
        }
        connection = DuckDb.open(url);
        views = MaterializedViews.attachWithoutCheck(connection);
        assertThat(views.stats().scanSyncs()).isZero();

        assertThat(views.reconcile()).containsExactly("main.orders");
        assertEqualToTheirQueries();
    }

    @Test
    void aCatalogFromBeforeFingerprintsTakesItsTablesAsTheyAreAtAttachAndChecksThemFromThen() throws Exception {
        views.close();
        connection.close();
        try (DuckDBConnection raw = DuckDb.open(url)) {
            DuckDb.run(raw, "ALTER TABLE mallard_views.tracked_tables DROP COLUMN row_hash",
                    "ALTER TABLE mallard_views.tracked_tables DROP COLUMN row_count",
                    "ALTER TABLE mallard_views.tracked_tables DROP COLUMN explicit",
                    "ALTER TABLE mallard_views.tracked_tables DROP COLUMN database_name",
                    "INSERT INTO orders VALUES (11, 'Oslo', 5)");
        }
        connection = DuckDb.open(url);
        views = MaterializedViews.attach(connection);
        assertThat(views.stats().scanSyncs()).isZero();
        views.sync();
        assertEqualToTheirQueries();

        dropTriggers(connection, "orders");
        DuckDb.run(connection, "DELETE FROM orders WHERE id = 11");
        assertThat(views.reconcile()).containsExactly("main.orders");
        assertEqualToTheirQueries();
    }

    @Test
    void aFailedReconcileIsCountedAndEverySyncTriesAgainUntilItWorks() {
        DuckDb.run(connection, "CREATE TABLE codes (code VARCHAR)", "INSERT INTO codes VALUES ('1'), ('2')");
        views.createView("numbers", "SELECT CAST(code AS INTEGER) AS n FROM codes");
        dropTriggers(connection, "codes");
        DuckDb.run(connection, "INSERT INTO codes VALUES ('x')");

        assertThatThrownBy(views::reconcile).isInstanceOf(MallardException.class).hasMessageContaining("Conversion");
        ViewStats stats = views.stats();
        assertThat(stats.reconcileFailures()).isEqualTo(1);
        assertThat(stats.lastReconcileError()).contains("Conversion");
        assertThat(stats.provisionalTables()).containsExactly("main.codes");
        assertThatThrownBy(views::sync).isInstanceOf(MallardException.class);
        assertThat(views.stats().reconcileFailures()).isEqualTo(2);

        DuckDb.run(connection, "DELETE FROM codes WHERE code = 'x'", "INSERT INTO codes VALUES ('3')");
        views.sync();
        assertThat(views.stats().provisionalTables()).isEmpty();
        assertThat(DuckDb.difference(connection, "numbers", "SELECT CAST(code AS INTEGER) AS n FROM codes")).isZero();
    }

    private void assertEqualToTheirQueries() {
        assertThat(DuckDb.difference(connection, "totals", TOTALS)).isZero();
        assertThat(DuckDb.difference(connection, "big", "SELECT city, total FROM (" + TOTALS + ") WHERE total > 5")).isZero();
        assertThat(DuckDb.difference(connection, "rows", ROWS)).isZero();
    }

    private static void dropTriggers(DuckDBConnection raw, String table) {
        for (String trigger : DuckDb.rows(raw, "SELECT '\"' || trigger_name || '\" ON ' || table_name FROM duckdb_triggers() "
                + "WHERE table_name = '" + table + "'")) {
            DuckDb.run(raw, "DROP TRIGGER " + trigger);
        }
    }

    /** The capture triggers on orders. */
    private long triggers() {
        return Long.parseLong(DuckDb.rows(connection, "SELECT count(*) FROM duckdb_triggers() WHERE table_name = 'orders' "
                + "AND starts_with(trigger_name, 'mallard_capture$')").get(0));
    }

    /** The triggers by which the writers' statements move the view rows (a projection). */
    private long viewTriggers() {
        return Long.parseLong(DuckDb.rows(connection, "SELECT count(*) FROM duckdb_triggers() WHERE table_name = 'orders' "
                + "AND starts_with(trigger_name, 'mallard_view$rows$')").get(0));
    }
}
