// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.nio.file.Path;
import org.duckdb.DuckDBConnection;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Base tables in ATTACHed databases: captured in their own database, keyed by database.schema.table. */
class AttachedSourcesTest {
    private static final String TOTALS = "SELECT s.city, sum(s.amount) AS total, count(*) AS n, max(c.region) AS region "
            + "FROM o.main.sales s JOIN cities c ON s.city = c.city GROUP BY s.city";

    @TempDir
    Path dir;
    private String url;
    private String other;
    private DuckDBConnection connection;
    private MaterializedViews views;

    @BeforeEach
    void open() {
        url = "jdbc:duckdb:" + dir.resolve("main.duckdb");
        other = dir.resolve("o.duckdb").toString();
        connection = DuckDb.open(url);
        DuckDb.run(connection, "ATTACH '" + other + "' AS o",
                "CREATE TABLE o.main.sales (city VARCHAR, amount INTEGER)",
                "INSERT INTO o.main.sales VALUES ('Oslo', 4), ('Rome', 9), ('Oslo', 1)",
                "CREATE TABLE cities (city VARCHAR, region VARCHAR)",
                "INSERT INTO cities VALUES ('Oslo', 'north'), ('Rome', 'south')",
                // A table of the same schema and name in the main database: the key must tell them apart.
                "CREATE TABLE sales (city VARCHAR, amount INTEGER)", "INSERT INTO sales VALUES ('Bari', 100)");
        views = MaterializedViews.attach(connection);
    }

    @AfterEach
    void close() throws Exception {
        views.close();
        connection.close();
    }

    @Test
    void aViewOverAnAttachedTableFollowsItsWritesFromAnyConnection() throws Exception {
        views.createView("totals", TOTALS);
        views.createView("local", "SELECT city, amount FROM sales");
        assertThat(DuckDb.difference(connection, "totals", TOTALS)).isZero();

        DuckDb.run(connection, "INSERT INTO o.main.sales VALUES ('Rome', 1)", "UPDATE o.main.sales SET amount = 5 WHERE amount = 4",
                "INSERT INTO sales VALUES ('Bari', 1)");
        try (DuckDBConnection raw = (DuckDBConnection) connection.duplicate()) {
            DuckDb.run(raw, "BEGIN", "DELETE FROM o.main.sales WHERE amount = 1", "COMMIT");
        }
        assertThat(views.stats().pendingRows()).as("1 + 2 (update) + 1 (sales of main) + 2").isEqualTo(6);
        views.sync();

        assertThat(DuckDb.difference(connection, "totals", TOTALS)).isZero();
        assertThat(DuckDb.rows(connection, "SELECT * FROM totals")).containsExactly("Oslo|5|1|north", "Rome|9|1|south");
        assertThat(DuckDb.difference(connection, "local", "SELECT city, amount FROM sales")).isZero();
        assertThat(DuckDb.rows(connection, "SELECT count(*) FROM o.mallard_views.\"capture$main$sales\""))
                .as("the taken capture rows are deleted after the sync commits").containsExactly("0");
        assertThat(DuckDb.rows(connection, "SELECT database_name, schema_name, table_name FROM mallard_views.tracked_tables"))
                .containsExactlyInAnyOrder("|main|cities", "|main|sales", "o|main|sales");

        views.dropView("totals");
        assertThat(DuckDb.rows(connection, "SELECT count(*) FROM duckdb_triggers() WHERE database_name = 'o'")).containsExactly("0");
        assertThat(DuckDb.rows(connection, "SELECT database_name, table_name FROM mallard_views.tracked_tables"))
                .containsExactly("|sales");
    }

    @Test
    void aTableNamedDatabaseDotTableIsTheAttachedDatabasesMainSchema() {
        views.createView("by_city", "SELECT city, sum(amount) AS total FROM o.sales GROUP BY city");
        DuckDb.run(connection, "INSERT INTO o.main.sales VALUES ('Lund', 3)");
        views.sync();
        assertThat(DuckDb.rows(connection, "SELECT * FROM by_city")).containsExactly("Lund|3", "Oslo|5", "Rome|9");
    }

    @Test
    void dbspTrackTracksAnAttachedTable() {
        assertThat(views.track("o.main.sales")).isEqualTo("o.main.sales");
        assertThat(DuckDb.rows(connection, "SELECT count(*) FROM duckdb_triggers() WHERE database_name = 'o'")).containsExactly("3");
        DuckDb.run(connection, "INSERT INTO o.main.sales VALUES ('Lund', 3)");
        views.sync();
        assertThat(views.stats().pendingRows()).isZero();
        views.createView("totals", TOTALS);
        assertThat(DuckDb.difference(connection, "totals", TOTALS)).isZero();
    }

    @Test
    void aViewWhoseDatabaseIsMissingAtReopenIsBrokenAndComesBackWhenItIsAttached() throws Exception {
        views.createView("totals", TOTALS);
        views.createView("local", "SELECT city, amount FROM sales");
        views.close();
        connection.close();

        // Written while the views are not attached: the triggers live in o, so the writes are captured there.
        try (DuckDBConnection raw = DuckDb.open("jdbc:duckdb:" + other)) {
            DuckDb.run(raw, "INSERT INTO sales VALUES ('Oslo', 10)");
        }
        connection = DuckDb.open(url);
        views = MaterializedViews.attach(connection);
        assertThat(views.broken()).containsOnlyKeys("totals");
        assertThat(views.broken().get("totals")).contains("no database o is attached", "ATTACH");
        // The way back is to attach the database again, not to drop the view.
        assertThatThrownBy(() -> views.query("totals")).isInstanceOfSatisfying(MallardException.class,
                e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_VIEW_BROKEN))
                .hasMessageContaining("ATTACH it AS o").hasMessageNotContaining("DROP MATERIALIZED VIEW");
        DuckDb.run(connection, "INSERT INTO sales VALUES ('Bari', 1)");
        views.sync();
        assertThat(DuckDb.difference(connection, "local", "SELECT city, amount FROM sales")).isZero();

        DuckDb.run(connection, "ATTACH '" + other + "' AS o");
        views.sync();
        assertThat(views.broken()).isEmpty();
        assertThat(DuckDb.difference(connection, "totals", TOTALS)).isZero();
        // Back from broken, the view is rebuilt once: the changes of its other tables meanwhile were not applied to it.
        assertThat(views.stats().scanSyncs()).isEqualTo(1);

        DuckDb.run(connection, "DETACH o");
        views.sync();
        assertThat(views.broken()).containsOnlyKeys("totals");
    }

    @Test
    void writesToAnAttachedTableBehindItsTriggersAreReconciled() throws Exception {
        views.createView("totals", TOTALS);
        views.close();
        connection.close();
        try (DuckDBConnection raw = DuckDb.open("jdbc:duckdb:" + other)) {
            for (String trigger : DuckDb.rows(raw, "SELECT trigger_name FROM duckdb_triggers()")) {
                DuckDb.run(raw, "DROP TRIGGER \"" + trigger + "\" ON sales");
            }
            DuckDb.run(raw, "INSERT INTO sales VALUES ('Rome', 50)");
        }
        connection = DuckDb.open(url);
        DuckDb.run(connection, "ATTACH '" + other + "' AS o");
        views = MaterializedViews.attach(connection);
        assertThat(views.stats().scanSyncs()).isEqualTo(1);
        assertThat(DuckDb.difference(connection, "totals", TOTALS)).isZero();
        assertThat(DuckDb.rows(connection, "SELECT count(*) FROM duckdb_triggers() WHERE database_name = 'o'")).containsExactly("3");
    }

    @Test
    void aDatabaseAttachedUnderAnotherNameThanItsFilesIsRefused() {
        DuckDb.run(connection, "DETACH o", "ATTACH '" + other + "' AS other");
        String query = "SELECT city, amount FROM other.main.sales";
        assertThatThrownBy(() -> views.createView("copy", query)).isInstanceOfSatisfying(MallardException.class, e -> {
            assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_VIEW_UNSUPPORTED);
            assertThat(e.getMessage()).contains("AS o)");
        });
        assertThat(DuckDb.rows(connection, "SELECT count(*) FROM duckdb_triggers()")).containsExactly("0");
        assertThat(views.names()).isEmpty();
    }

    @Test
    void aReadOnlyAttachedDatabaseIsRefused() {
        DuckDb.run(connection, "DETACH o", "ATTACH '" + other + "' AS o (READ_ONLY)");
        assertThatThrownBy(() -> views.createView("totals", TOTALS)).isInstanceOfSatisfying(MallardException.class, e -> {
            assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_VIEW_UNSUPPORTED);
            assertThat(e.getMessage()).contains("READ_ONLY");
        });
        assertThat(views.names()).isEmpty();
    }

    @Test
    void aViewBackFromADetachedDatabaseHoldsTheRowsItsOtherTableGainedMeanwhileAndTheCheckRepairsWhatDiffers() {
        views.createView("totals", TOTALS);
        views.createView("local", "SELECT city, amount FROM sales");
        DuckDb.run(connection, "DETACH o", "INSERT INTO cities VALUES ('Lund', 'north')", "UPDATE cities SET region = 'east' "
                + "WHERE city = 'Oslo'", "INSERT INTO sales VALUES ('Bari', 2)");
        views.sync(); // totals is broken while o is detached; local moves, and the logs are cleared.
        assertThat(views.broken()).containsOnlyKeys("totals");
        DuckDb.run(connection, "ATTACH '" + other + "' AS o", "INSERT INTO o.main.sales VALUES ('Lund', 6)");
        views.sync();
        assertThat(views.broken()).isEmpty();
        assertThat(DuckDb.difference(connection, "totals", TOTALS)).isZero();
        assertThat(DuckDb.difference(connection, "local", "SELECT city, amount FROM sales")).isZero();

        // A view table written behind the maintainer's back: dbsp_check() reports the difference and repairs it.
        DuckDb.run(connection, "DELETE FROM local WHERE amount = 2");
        ViewSql front = new ViewSql(views);
        try (ViewSql.Result result = front.execute("SELECT view, differing_rows FROM dbsp_check() ORDER BY view")) {
            java.util.List<String> rows = new java.util.ArrayList<>();
            java.sql.ResultSet set = result.rows().orElseThrow();
            while (set.next()) {
                rows.add(set.getString(1) + "|" + set.getLong(2));
            }
            assertThat(rows).containsExactly("local|1", "totals|0");
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
        assertThat(DuckDb.difference(connection, "local", "SELECT city, amount FROM sales")).isZero();
    }

    @Test
    void aViewWhoseDatabaseIsDetachedBehindTheViewsIsBrokenAtItsFirstQuery() {
        views.createView("totals", TOTALS);
        DuckDb.run(connection, "DETACH o");
        assertThatThrownBy(() -> views.query("totals").close()).isInstanceOfSatisfying(MallardException.class,
                e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_VIEW_BROKEN));
    }

    @Test
    void aViewWhoseDatabaseIsDetachedBehindTheViewsIsBrokenAtItsFirstDbspQuery() {
        views.createView("totals", TOTALS);
        DuckDb.run(connection, "DETACH o");
        assertThatThrownBy(() -> new ViewSql(views).execute("SELECT * FROM dbsp_query('totals')").close())
                .isInstanceOfSatisfying(MallardException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_VIEW_BROKEN));
    }

    @Test
    void aViewWhoseDatabaseIsAttachedAgainBehindTheFrontDoorIsRightAtItsFirstRead() throws Exception {
        views.createView("totals", TOTALS);
        ViewSql front = new ViewSql(views);
        front.execute("DETACH o").close();
        front.execute("INSERT INTO cities VALUES ('Lund', 'north')").close();
        DuckDb.run(connection, "ATTACH '" + other + "' AS o",
                "INSERT INTO o.main.sales VALUES ('Lund', 6)");
        try (ViewSql.Result result = front.execute("SELECT * FROM totals")) {
            assertThat(DuckDb.rows(result.rows().orElseThrow())).as("a read through the front door")
                    .isEqualTo(DuckDb.rows(connection, TOTALS));
        }
        try (java.sql.ResultSet rows = views.query("totals")) {
            assertThat(DuckDb.rows(rows)).isEqualTo(DuckDb.rows(connection, TOTALS)).contains("Lund|6|1|north");
        }
    }

    @Test
    void aViewWhoseDatabaseIsAttachedAgainBehindTheViewsAnswersItsFirstQuery() throws Exception {
        views.createView("totals", TOTALS);
        DuckDb.run(connection, "DETACH o");
        views.sync();
        DuckDb.run(connection, "INSERT INTO cities VALUES ('Lund', 'north')", "ATTACH '" + other + "' AS o",
                "INSERT INTO o.main.sales VALUES ('Lund', 6)");
        try (java.sql.ResultSet rows = views.query("totals")) {
            assertThat(DuckDb.rows(rows)).isEqualTo(DuckDb.rows(connection, TOTALS)).contains("Lund|6|1|north");
        }
    }
}
