// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.duckdb.DuckDBConnection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MallardDriverTest {
    @Test
    void aJdbcClientCreatesAViewAndEveryAutoCommitWriteKeepsItCurrent() throws SQLException {
        try (Connection connection = DriverManager.getConnection("jdbc:mallard:");
                Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE sales (region VARCHAR, amount INTEGER)");
            assertThat(statement.execute("CREATE MATERIALIZED VIEW totals AS SELECT region, sum(amount) AS total FROM sales GROUP BY region"))
                    .isFalse();
            try (PreparedStatement insert = connection.prepareStatement("INSERT INTO sales VALUES (?, ?)")) {
                insert.setString(1, "north");
                insert.setInt(2, 5);
                assertThat(insert.executeUpdate()).isEqualTo(1);
            }
            assertThat(statement.executeUpdate("INSERT INTO sales VALUES ('north', 2), ('south', 1)")).isEqualTo(2);
            assertThat(DuckDb.rows(connection, "SELECT * FROM totals")).containsExactly("north|7", "south|1");
            statement.addBatch("INSERT INTO sales VALUES ('east', 4)");
            statement.addBatch("DELETE FROM sales WHERE region = 'south'");
            statement.executeBatch();
            assertThat(DuckDb.rows(connection, "SELECT * FROM totals")).containsExactly("east|4", "north|7");
            assertThat(connection.unwrap(DuckDBConnection.class)).isNotNull();
        }
    }

    @Test
    void writesThatOnlyMergedViewsReadTellTheirRowsAndSkipThePollUntilAQueryOrACompaction() throws SQLException {
        try (Connection connection = DriverManager.getConnection("jdbc:mallard:");
                Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE sales (region VARCHAR, amount INTEGER)");
            statement.execute("CREATE MATERIALIZED VIEW totals AS SELECT region, sum(amount) AS total, count(*) AS n FROM sales GROUP BY region");
            PreparedStatement insert = connection.prepareStatement("INSERT INTO sales VALUES (?, ?)");
            String query = "SELECT region, sum(amount) AS total, count(*) AS n FROM sales GROUP BY region";
            for (int i = 0; i < 5; i++) {
                insert.setString(1, i % 2 == 0 ? "north" : "south");
                insert.setInt(2, i);
                insert.executeUpdate();
            }
            // The first write after the view was created polls; the next four skip it.
            assertThat(unpolledSyncs(statement)).isEqualTo(4);
            connection.setAutoCommit(false);
            insert.setString(1, "east");
            insert.setInt(2, 7);
            insert.executeUpdate();
            statement.executeUpdate("UPDATE sales SET amount = amount + 1 WHERE region = 'north'");
            connection.commit();
            assertThat(unpolledSyncs(statement)).isEqualTo(5);
            connection.setAutoCommit(true); // A sync too, told of no rows.
            assertThat(unpolledSyncs(statement)).isEqualTo(6);
            // A query may have written (INSERT ... RETURNING): the next sync polls again.
            assertThat(DuckDb.rows(connection, "SELECT count(*) FROM sales")).containsExactly("6");
            insert.setString(1, "west");
            insert.setInt(2, 1);
            insert.executeUpdate();
            assertThat(unpolledSyncs(statement)).isEqualTo(6);
            insert.executeUpdate();
            assertThat(unpolledSyncs(statement)).isEqualTo(7);
            try (Connection raw = connection.unwrap(DuckDBConnection.class).duplicate()) {
                assertThat(DuckDb.difference(raw, "totals", query)).isZero();
                assertThat(DuckDb.rows(raw, "SELECT * FROM totals ORDER BY region"))
                        .containsExactly("east|7|1", "north|9|3", "south|4|2", "west|2|2");
            }
            insert.close();
        }
    }

    private static long unpolledSyncs(Statement statement) throws SQLException {
        try (ResultSet row = statement.executeQuery("SELECT * FROM dbsp_stats()")) {
            while (row.next()) {
                if (row.getString("metric").equals("unpolled_syncs")) {
                    return row.getLong("value");
                }
            }
        }
        throw new AssertionError("dbsp_stats() has no unpolled_syncs");
    }

    @Test
    void aTransactionMovesTheViewsAtCommit() throws SQLException {
        try (Connection connection = DriverManager.getConnection("jdbc:mallard::memory:")) {
            DuckDb.run(connection, "CREATE TABLE t (x INTEGER)", "CREATE MATERIALIZED VIEW evens AS SELECT x FROM t WHERE x % 2 = 0");
            connection.setAutoCommit(false);
            DuckDb.run(connection, "INSERT INTO t VALUES (2), (3), (4)");
            connection.commit();
            assertThat(DuckDb.rows(connection, "SELECT * FROM evens")).containsExactly("2", "4");
            DuckDb.run(connection, "DELETE FROM t WHERE x = 2");
            connection.rollback();
            connection.setAutoCommit(true);
            assertThat(DuckDb.rows(connection, "SELECT * FROM evens")).containsExactly("2", "4");
        }
    }

    @Test
    void aViewOverATableOfAnAttachedDatabaseIsCurrentAfterEveryWrite(@TempDir Path directory) throws SQLException {
        String url = "jdbc:mallard:" + directory.resolve("shop.duckdb");
        String stock = directory.resolve("stock.duckdb").toString();
        try (Connection connection = DriverManager.getConnection(url); Statement statement = connection.createStatement()) {
            statement.execute("ATTACH '" + stock + "'");
            statement.execute("CREATE TABLE stock.main.items (sku VARCHAR, qty INTEGER)");
            statement.execute("CREATE MATERIALIZED VIEW on_hand AS SELECT sku, sum(qty) AS qty FROM stock.main.items GROUP BY sku");
            statement.executeUpdate("INSERT INTO stock.main.items VALUES ('a', 2), ('a', 3), ('b', 1)");
            assertThat(DuckDb.rows(connection, "SELECT * FROM on_hand")).containsExactly("a|5", "b|1");
        }
        try (Connection connection = DriverManager.getConnection(url); Statement statement = connection.createStatement()) {
            assertThatThrownBy(() -> statement.executeQuery("SELECT * FROM dbsp_query('on_hand')"))
                    .hasMessageStartingWith("user.view.broken").hasMessageContaining("ATTACH");
            statement.execute("ATTACH '" + stock + "'");
            statement.executeUpdate("DELETE FROM stock.main.items WHERE sku = 'b'");
            assertThat(DuckDb.rows(connection, "SELECT * FROM on_hand")).containsExactly("a|5");
        }
    }

    @Test
    void refusalsArriveAsSqlExceptionsWithTheErrorCode(@TempDir Path directory) throws SQLException {
        String url = "jdbc:mallard:" + directory.resolve("shop.duckdb");
        try (Connection connection = DriverManager.getConnection(url); Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE t (x INTEGER)");
            assertThatThrownBy(() -> statement.execute("CREATE MATERIALIZED VIEW v AS SELECT x FROM t ORDER BY x"))
                    .isInstanceOf(SQLException.class).hasMessageStartingWith("user.view.unsupported: ");
            statement.execute("CREATE MATERIALIZED VIEW v AS SELECT count(*) AS n FROM t");
        }
        try (Connection connection = DriverManager.getConnection(url); Statement statement = connection.createStatement()) {
            statement.execute("INSERT INTO t VALUES (1)");
            try (ResultSet rows = statement.executeQuery("SELECT n FROM v")) {
                rows.next();
                assertThat(rows.getLong(1)).isEqualTo(1);
            }
        }
    }

    @Test
    void writesWithReturningAndWritesOfARawDuckDbConnectionAreInTheNextReadOfATableBackedView() throws SQLException {
        try (Connection connection = DriverManager.getConnection("jdbc:mallard:");
                Statement statement = connection.createStatement();
                Connection raw = connection.unwrap(DuckDBConnection.class).duplicate()) {
            statement.execute("CREATE TABLE t (x INTEGER)");
            // A MAX per group, which the syncs move (a projection is moved by the writer's statement itself).
            statement.execute("CREATE MATERIALIZED VIEW v AS SELECT max(x) AS x FROM t WHERE x > 0 GROUP BY x");
            try (ResultSet returned = statement.executeQuery("INSERT INTO t VALUES (1) RETURNING x")) {
                assertThat(returned.next()).isTrue();
            }
            // A raw reader sees the state of the last sync: the RETURNING write's own.
            assertThat(DuckDb.rows(raw, "SELECT * FROM v")).containsExactly("1");
            try (PreparedStatement update = connection.prepareStatement("UPDATE t SET x = x + 1 RETURNING x");
                    ResultSet returned = update.executeQuery()) {
                assertThat(returned.next()).isTrue();
            }
            assertThat(DuckDb.rows(raw, "SELECT * FROM v")).containsExactly("2");
            assertThat(statement.execute("WITH gone AS (SELECT 1) DELETE FROM t RETURNING x")).isTrue();
            assertThat(DuckDb.rows(raw, "SELECT * FROM v")).isEmpty();
            DuckDb.run(raw, "INSERT INTO t VALUES (5)");
            assertThat(DuckDb.rows(raw, "SELECT * FROM v")).isEmpty();
            assertThat(DuckDb.rows(connection, "-- a comment first\nSELECT * FROM v")).containsExactly("5");
            DuckDb.run(raw, "INSERT INTO t VALUES (6)");
            try (PreparedStatement read = connection.prepareStatement("SELECT count(*) FROM \"v\"");
                    ResultSet rows = read.executeQuery()) {
                assertThat(rows.next()).isTrue();
                assertThat(rows.getLong(1)).isEqualTo(2);
            }
        }
    }

    @Test
    void aCaptureTriggerDroppedWhileTheConnectionIsOpenIsNoticedAtTheNextSyncAndWhatEscapedItIsRepaired() throws SQLException {
        try (Connection connection = DriverManager.getConnection("jdbc:mallard:");
                Statement statement = connection.createStatement();
                Connection raw = connection.unwrap(DuckDBConnection.class).duplicate()) {
            statement.execute("CREATE TABLE t (x INTEGER)");
            // A MAX per group, which the syncs move: every writer's sync polls (a projection's may skip it, docs/views.md).
            statement.execute("CREATE MATERIALIZED VIEW v AS SELECT max(x) AS x FROM t WHERE x > 0 GROUP BY x");
            statement.executeUpdate("INSERT INTO t VALUES (1)");
            DuckDb.run(raw, "DROP TRIGGER \"mallard_capture$main$t$insert\" ON t", "INSERT INTO t VALUES (2)");
            statement.executeUpdate("INSERT INTO t VALUES (3)");
            assertThat(DuckDb.rows(raw, "SELECT * FROM v")).containsExactlyInAnyOrder("1", "2", "3");
            assertThat(DuckDb.rows(raw, "SELECT count(*) FROM duckdb_triggers() WHERE table_name = 't' "
                    + "AND starts_with(trigger_name, 'mallard_capture$')")).containsExactly("3");
        }
    }
}
