// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import org.duckdb.DuckDBConnection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A database file kept readable by DuckDB 1.x ({@code storage_compatibility} v1.x) has no triggers, so no table in it
 * can be captured: materialized views over it are refused with {@code user.view.storage_version}, and nothing of
 * them is left behind.
 */
class StorageCompatibilityViewsTest {
    @TempDir
    Path dir;

    @Test
    void aMaterializedViewOverAFileKeptReadableByDuckDbOneIsRefusedNamingTheOptionAndLeavesNothing() throws SQLException {
        Path file = dir.resolve("v1.duckdb");
        try (DuckDBConnection connection = DuckDb.open("jdbc:duckdb:" + file + ";storage_compatibility_version=v1.0.0");
                MaterializedViews views = MaterializedViews.attach(connection)) {
            DuckDb.run(connection, "CREATE TABLE sales (region VARCHAR, amount INTEGER)", "INSERT INTO sales VALUES ('north', 5)");
            assertThatThrownBy(() -> views.createView("totals", "SELECT region, sum(amount) AS total FROM sales GROUP BY region"))
                    .isInstanceOfSatisfying(MallardException.class,
                            e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_VIEW_STORAGE_VERSION))
                    .hasMessageContaining("totals")
                    .hasMessageContaining("main.sales")
                    .hasMessageContaining("v1.0.0+")
                    .hasMessageContaining("storage_compatibility")
                    .hasMessageContaining("CREATE VIEW");
            assertThat(views.names()).isEmpty();
            assertThat(DuckDb.rows(connection, "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'totals'")).containsExactly("0");
            assertThat(DuckDb.rows(connection, "SELECT count(*) FROM mallard_views.tracked_tables")).containsExactly("0");
            DuckDb.run(connection, "CREATE VIEW totals AS SELECT region, sum(amount) AS total FROM sales GROUP BY region",
                    "INSERT INTO sales VALUES ('north', 2)");
            assertThat(DuckDb.rows(connection, "SELECT * FROM totals")).containsExactly("north|7");
        }
    }

    @Test
    void trackingATableOfSuchAFileIsRefusedTheSameWay() throws SQLException {
        Path file = dir.resolve("v1.duckdb");
        try (DuckDBConnection connection = DuckDb.open("jdbc:duckdb:" + file + ";storage_compatibility_version=v1.4.0");
                MaterializedViews views = MaterializedViews.attach(connection)) {
            DuckDb.run(connection, "CREATE TABLE sales (region VARCHAR, amount INTEGER)");
            assertThatThrownBy(() -> views.track("sales"))
                    .isInstanceOfSatisfying(MallardException.class,
                            e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_VIEW_STORAGE_VERSION))
                    .hasMessageContaining("v1.4.0+");
        }
    }

    @Test
    void aTableOfAnAttachedDatabaseInTheOneFormatIsRefusedWhileTheViewsOwnDatabaseIsTwo() throws SQLException {
        Path stock = dir.resolve("stock.duckdb");
        try (DuckDBConnection connection = DuckDb.open("jdbc:duckdb:");
                MaterializedViews views = MaterializedViews.attach(connection)) {
            DuckDb.run(connection, "ATTACH '" + stock + "' AS stock (STORAGE_VERSION 'v1.0.0')",
                    "CREATE TABLE stock.items (sku VARCHAR, qty INTEGER)");
            assertThatThrownBy(() -> views.createView("on_hand", "SELECT sku, sum(qty) AS qty FROM stock.items GROUP BY sku"))
                    .isInstanceOfSatisfying(MallardException.class,
                            e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_VIEW_STORAGE_VERSION))
                    .hasMessageContaining("stock.main.items")
                    .hasMessageContaining(stock.toString());
            assertThat(DuckDb.rows(connection, "SELECT count(*) FROM duckdb_triggers()")).containsExactly("0");
        }
    }

    @Test
    void aJdbcUrlAsksForTheOneFormatBesideDuckDbsOwnSettingsAndItsViewsAreRefusedWithTheCode() throws SQLException {
        Path file = dir.resolve("jdbc.duckdb");
        try (Connection connection = DriverManager.getConnection("jdbc:mallard:" + file + ";storage_compatibility=v1.0.0;threads=2");
                Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE sales (region VARCHAR, amount INTEGER)");
            assertThat(DuckDb.rows(connection, "SELECT current_setting('threads')")).containsExactly("2");
            assertThat(DuckDb.rows(connection, "SELECT tags['storage_version'] FROM duckdb_databases() WHERE database_name = 'jdbc'"))
                    .containsExactly("v1.0.0+");
            assertThatThrownBy(() -> statement.execute("CREATE MATERIALIZED VIEW totals AS SELECT region, sum(amount) AS total FROM sales GROUP BY region"))
                    .isInstanceOf(SQLException.class)
                    .hasMessageStartingWith("user.view.storage_version");
        }
    }

    @Test
    void aJdbcPropertyAsksForTheOneFormatToo() throws SQLException {
        Path file = dir.resolve("props.duckdb");
        java.util.Properties properties = new java.util.Properties();
        properties.setProperty("storage_compatibility", "v1.0.0");
        try (Connection connection = DriverManager.getConnection("jdbc:mallard:" + file, properties)) {
            assertThat(DuckDb.rows(connection, "SELECT tags['storage_version'] FROM duckdb_databases() WHERE database_name = 'props'"))
                    .containsExactly("v1.0.0+");
        }
    }

    @Test
    void aJdbcUrlWithAnUnknownReleaseIsRefusedNamingTheProperty() {
        Path file = dir.resolve("bad.duckdb");
        assertThatThrownBy(() -> DriverManager.getConnection("jdbc:mallard:" + file + ";storage_compatibility=v1.1"))
                .isInstanceOf(SQLException.class)
                .hasMessageStartingWith("user.config.invalid")
                .hasMessageContaining("storage_compatibility");
    }
}
