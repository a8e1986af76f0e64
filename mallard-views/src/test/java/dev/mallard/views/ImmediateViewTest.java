// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.duckdb.DuckDBConnection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Projections over inner joins are moved by the writer's own statement (their triggers), not by a sync. */
class ImmediateViewTest {
    private static final String JOIN = "SELECT o.id, o.amount * 2 AS doubled, c.region FROM orders o JOIN cities c ON o.city = c.city "
            + "WHERE o.amount > 1";

    @TempDir
    Path dir;

    @Test
    void aProjectionOverAJoinIsCurrentAtEveryCommitOfARawWriterWithoutASync() throws Exception {
        try (DuckDBConnection connection = DuckDb.open("jdbc:duckdb:" + dir.resolve("shop.duckdb"));
                MaterializedViews views = MaterializedViews.attach(connection);
                DuckDBConnection raw = connection.duplicate()) {
            DuckDb.run(connection, "CREATE TABLE orders (id INTEGER, city VARCHAR, amount INTEGER)",
                    "CREATE TABLE cities (city VARCHAR, region VARCHAR)", "INSERT INTO cities VALUES ('Oslo', 'north'), ('Rome', 'south')",
                    "INSERT INTO orders VALUES (1, 'Oslo', 4), (2, 'Rome', 3), (2, 'Rome', 3), (3, 'Bari', 9)");
            views.createView("big", JOIN);

            DuckDb.run(raw, "INSERT INTO orders VALUES (4, 'Oslo', 5), (5, 'Rome', 1)", "UPDATE orders SET amount = amount + 1 WHERE id = 2",
                    "DELETE FROM orders WHERE id = 1", "INSERT INTO cities VALUES ('Bari', 'south')", "UPDATE cities SET region = 'east' "
                            + "WHERE city = 'Rome'");
            assertThat(DuckDb.difference(raw, "big", JOIN)).as("no sync ran").isZero();

            DuckDb.run(raw, "BEGIN TRANSACTION", "DELETE FROM cities WHERE city = 'Oslo'", "INSERT INTO orders VALUES (6, 'Bari', 7)");
            assertThat(DuckDb.difference(raw, "big", JOIN)).as("inside the writer's transaction").isZero();
            DuckDb.run(raw, "ROLLBACK");
            assertThat(DuckDb.difference(raw, "big", JOIN)).as("after its rollback").isZero();
            assertThat(DuckDb.rows(raw, "SELECT count(*) FROM big")).containsExactly("4");

            views.sync();
            assertThat(DuckDb.difference(connection, "big", JOIN)).as("a sync moves it no further").isZero();
            assertThat(views.reconcile()).as("tables whose fingerprint the syncs did not explain").isEmpty();
        }
    }

    @Test
    void aViewThatAnotherViewComesToReadIsMovedBySyncsFromThenAndAReopenedOneByItsTriggers() throws Exception {
        String url = "jdbc:duckdb:" + dir.resolve("shop.duckdb");
        try (DuckDBConnection connection = DuckDb.open(url); MaterializedViews views = MaterializedViews.attach(connection)) {
            DuckDb.run(connection, "CREATE TABLE orders (id INTEGER, city VARCHAR, amount INTEGER)",
                    "CREATE TABLE cities (city VARCHAR, region VARCHAR)", "INSERT INTO cities VALUES ('Oslo', 'north')",
                    "INSERT INTO orders VALUES (1, 'Oslo', 4)");
            views.createView("big", JOIN);
            views.createView("kept", "SELECT id FROM orders WHERE amount > 3");
            DuckDb.run(connection, "INSERT INTO orders VALUES (2, 'Oslo', 6)");
            views.createView("per_region", "SELECT region, count(*) AS n FROM big GROUP BY region");
            assertThat(viewTriggers(connection, "big")).as("big is now read by per_region").isZero();
            assertThat(viewTriggers(connection, "kept")).isEqualTo(4);

            DuckDb.run(connection, "INSERT INTO orders VALUES (3, 'Oslo', 8)", "DELETE FROM orders WHERE id = 1");
            views.sync();
            assertThat(DuckDb.difference(connection, "big", JOIN)).isZero();
            assertThat(DuckDb.difference(connection, "per_region", "SELECT region, count(*) AS n FROM (" + JOIN + ") GROUP BY region"))
                    .isZero();
        }
        try (DuckDBConnection connection = DuckDb.open(url); MaterializedViews views = MaterializedViews.attach(connection)) {
            DuckDb.run(connection, "INSERT INTO orders VALUES (4, 'Oslo', 9)", "DELETE FROM orders WHERE id = 2");
            assertThat(DuckDb.difference(connection, "kept", "SELECT id FROM orders WHERE amount > 3")).as("before any sync").isZero();
            views.sync();
            assertThat(DuckDb.difference(connection, "big", JOIN)).isZero();
            assertThat(views.reconcile()).isEmpty();
        }
    }

    private static long viewTriggers(DuckDBConnection connection, String view) {
        return Long.parseLong(DuckDb.rows(connection, "SELECT count(*) FROM duckdb_triggers() WHERE starts_with(trigger_name, "
                + "'mallard_view$" + view + "$')").get(0));
    }
}
