// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.server.config.AccessMode;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The official Flight SQL JDBC driver (18.3.0) against a running server. */
class FlightSqlJdbcIT {
    @TempDir
    static Path warehouse;

    static MallardServer server;

    @BeforeAll
    static void start() throws Exception {
        Path script = warehouse.resolve("startup.sql");
        Files.writeString(script, """
                CREATE TABLE cities (id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, population BIGINT, area DOUBLE);
                INSERT INTO cities VALUES (1, 'Lisbon', 545000, 100.05), (2, 'Porto', 232000, 41.42), (3, 'Braga', NULL, 183.4);
                CREATE SCHEMA sales;
                CREATE TABLE sales.orders (order_id BIGINT, city_id INTEGER, amount DECIMAL(10,2), placed TIMESTAMP, PRIMARY KEY (order_id, city_id));
                CREATE MATERIALIZED VIEW city_count AS SELECT count(*) AS cities FROM cities;
                """);
        server = MallardServer.start(TestServers.config(warehouse, AccessMode.COMPLETE, Optional.of(script)));
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    static Connection connect() throws SQLException {
        return TestServers.connect(server);
    }

    @Test
    void aStatementQueryReturnsRowsOfCommonTypes() throws Exception {
        try (Connection connection = connect(); Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery("""
                        SELECT 42::INTEGER AS i, 9000000000::BIGINT AS b, 1.5::DOUBLE AS d, 'héllo' AS s, true AS t,
                               DATE '2024-02-29' AS day, TIMESTAMP '2024-02-29 12:34:56.789' AS ts, 12.34::DECIMAL(10,2) AS dec,
                               NULL::VARCHAR AS nothing, [1, 2, 3] AS list
                        """)) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getInt("i")).isEqualTo(42);
            assertThat(rs.getLong("b")).isEqualTo(9_000_000_000L);
            assertThat(rs.getDouble("d")).isEqualTo(1.5);
            assertThat(rs.getString("s")).isEqualTo("héllo");
            assertThat(rs.getBoolean("t")).isTrue();
            assertThat(rs.getDate("day").toLocalDate()).isEqualTo(java.time.LocalDate.of(2024, 2, 29));
            assertThat(rs.getTimestamp("ts").toLocalDateTime()).isEqualTo(java.time.LocalDateTime.of(2024, 2, 29, 12, 34, 56, 789_000_000));
            assertThat(rs.getBigDecimal("dec")).isEqualByComparingTo(new BigDecimal("12.34"));
            assertThat(rs.getString("nothing")).isNull();
            assertThat(rs.wasNull()).isTrue();
            assertThat(rs.getArray("list").getArray()).isNotNull();
            assertThat(rs.next()).isFalse();
        }
    }

    @Test
    void moreDuckDbTypesArriveThroughTheDriver() throws Exception {
        try (Connection connection = connect(); Statement statement = connection.createStatement()) {
            statement.executeUpdate("CREATE TYPE IF NOT EXISTS mood AS ENUM ('sad', 'happy')");
            try (ResultSet rs = statement.executeQuery("""
                    SELECT 7::TINYINT AS ti, 300::SMALLINT AS si, 2.5::FLOAT AS f,
                           170141183460469231731687303715884105727::HUGEINT AS hi, 'a1b2c3d4-0000-4000-8000-000000000001'::UUID AS u,
                           '\\x01\\x02'::BLOB AS b, TIME '12:34:56' AS t, TIMESTAMPTZ '2024-01-02 03:04:05+00' AS tz,
                           INTERVAL 3 DAY AS iv, {'x': 1, 'y': 'two'} AS st, MAP {'k': 1} AS m, 'happy'::mood AS e,
                           '{"a": 1}'::JSON AS j
                    """)) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getByte("ti")).isEqualTo((byte) 7);
                assertThat(rs.getShort("si")).isEqualTo((short) 300);
                assertThat(rs.getFloat("f")).isEqualTo(2.5f);
                assertThat(rs.getBigDecimal("hi")).isEqualByComparingTo(new BigDecimal("170141183460469231731687303715884105727"));
                assertThat(rs.getString("u")).isEqualTo("a1b2c3d4-0000-4000-8000-000000000001");
                assertThat(rs.getBytes("b")).containsExactly(1, 2);
                assertThat(rs.getTime("t").toLocalTime()).isEqualTo(java.time.LocalTime.of(12, 34, 56));
                assertThat(rs.getTimestamp("tz").toInstant()).isEqualTo(java.time.Instant.parse("2024-01-02T03:04:05Z"));
                assertThat(rs.getObject("iv")).isNotNull();
                assertThat(rs.getObject("st").toString()).contains("two");
                assertThat(rs.getObject("m")).isNotNull();
                assertThat(rs.getString("e")).isEqualTo("happy");
                assertThat(rs.getString("j")).isEqualTo("{\"a\": 1}");
            }
        }
    }

    @Test
    void aLargeResultStreamsInManyBatches() throws Exception {
        try (Connection connection = connect(); Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery("SELECT range AS n, range::VARCHAR AS s FROM range(250000)")) {
            long count = 0;
            long sum = 0;
            while (rs.next()) {
                count++;
                sum += rs.getLong(1);
            }
            assertThat(count).isEqualTo(250_000);
            assertThat(sum).isEqualTo(250_000L * 249_999L / 2);
        }
    }

    @Test
    void aPreparedStatementTakesParameters() throws Exception {
        try (Connection connection = connect();
                PreparedStatement statement = connection.prepareStatement("SELECT name FROM cities WHERE population > ? AND name <> ? ORDER BY id")) {
            statement.setLong(1, 200_000);
            statement.setString(2, "Porto");
            List<String> names = new ArrayList<>();
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    names.add(rs.getString(1));
                }
            }
            assertThat(names).containsExactly("Lisbon");
            statement.setLong(1, 0);
            statement.setString(2, "Lisbon");
            names.clear();
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    names.add(rs.getString(1));
                }
            }
            assertThat(names).containsExactly("Porto");
        }
    }

    @Test
    void executeUpdateReportsTheRowsChanged() throws Exception {
        try (Connection connection = connect(); Statement statement = connection.createStatement()) {
            statement.executeUpdate("CREATE TABLE scratch_updates (id INTEGER, note VARCHAR)");
            assertThat(statement.executeUpdate("INSERT INTO scratch_updates VALUES (1, 'a'), (2, 'b'), (3, 'c')")).isEqualTo(3);
            assertThat(statement.executeUpdate("UPDATE scratch_updates SET note = 'z' WHERE id >= 2")).isEqualTo(2);
            try (PreparedStatement insert = connection.prepareStatement("INSERT INTO scratch_updates VALUES (?, ?)")) {
                insert.setInt(1, 4);
                insert.setString(2, "d");
                assertThat(insert.executeUpdate()).isEqualTo(1);
            }
            try (ResultSet rs = statement.executeQuery("SELECT count(*), count(*) FILTER (WHERE note = 'z') FROM scratch_updates")) {
                rs.next();
                assertThat(rs.getLong(1)).isEqualTo(4);
                assertThat(rs.getLong(2)).isEqualTo(2);
            }
        }
    }

    @Test
    void aTransactionBegunAsSqlRollsBackInItsSession() throws Exception {
        try (Connection connection = connect(); Statement statement = connection.createStatement()) {
            statement.executeUpdate("CREATE TABLE scratch_tx (id INTEGER)");
            statement.executeUpdate("BEGIN TRANSACTION");
            statement.executeUpdate("INSERT INTO scratch_tx VALUES (1), (2)");
            try (Connection other = connect(); Statement otherStatement = other.createStatement();
                    ResultSet rs = otherStatement.executeQuery("SELECT count(*) FROM scratch_tx")) {
                rs.next();
                assertThat(rs.getLong(1)).as("another session does not see uncommitted rows").isZero();
            }
            statement.executeUpdate("ROLLBACK");
            try (ResultSet rs = statement.executeQuery("SELECT count(*) FROM scratch_tx")) {
                rs.next();
                assertThat(rs.getLong(1)).isZero();
            }
        }
    }

    @Test
    void metadataListsCatalogsSchemasTablesColumnsAndKeys() throws Exception {
        try (Connection connection = connect()) {
            DatabaseMetaData meta = connection.getMetaData();
            assertThat(column(meta.getCatalogs(), "TABLE_CAT")).contains("memory");
            assertThat(column(meta.getSchemas(), "TABLE_SCHEM")).contains("main", "sales");
            assertThat(column(meta.getTables(null, null, "%", null), "TABLE_NAME")).contains("cities", "orders");
            assertThat(column(meta.getTables("memory", "sales", "%", null), "TABLE_NAME")).containsExactly("orders");
            assertThat(column(meta.getTableTypes(), "TABLE_TYPE")).contains("BASE TABLE", "VIEW");
            assertThat(column(meta.getColumns(null, "main", "cities", null), "COLUMN_NAME")).containsExactly("id", "name", "population", "area");
            assertThat(column(meta.getColumns(null, "sales", "orders", "%"), "TYPE_NAME")).hasSize(4);
            assertThat(column(meta.getPrimaryKeys("memory", "sales", "orders"), "COLUMN_NAME")).containsExactly("order_id", "city_id");
        }
    }

    @Test
    void metadataLeavesOutTheViewsCatalogsOwnSchemaButListsTheMaterializedView() throws Exception {
        try (Connection connection = connect(); Statement statement = connection.createStatement();
                ResultSet internal = statement.executeQuery("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'mallard_views'")) {
            internal.next();
            assertThat(internal.getLong(1)).as("the views catalog keeps its state in mallard_views").isPositive();
            DatabaseMetaData meta = connection.getMetaData();
            assertThat(column(meta.getSchemas(), "TABLE_SCHEM")).contains("main").doesNotContain("mallard_views");
            List<String> tables = column(meta.getTables(null, null, "%", null), "TABLE_NAME");
            assertThat(tables).contains("cities", "city_count");
            assertThat(column(meta.getTables(null, "mallard_views", "%", null), "TABLE_NAME")).isEmpty();
        }
    }

    @Test
    void aSqlErrorCarriesDuckDbsMessage() throws Exception {
        try (Connection connection = connect(); Statement statement = connection.createStatement()) {
            assertThatThrownBy(() -> statement.executeQuery("SELECT * FROM no_such_table"))
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("no_such_table");
        }
    }

    @Test
    void aQueryTimeoutGivenAsAConnectionPropertyInterruptsALongQuery() throws Exception {
        Properties properties = TestServers.credentials();
        properties.put("x-dd-query-timeout", "1");
        try (Connection connection = DriverManager.getConnection(TestServers.jdbcUrl(server), properties);
                Statement statement = connection.createStatement()) {
            assertThatThrownBy(() -> statement.executeQuery("SELECT sum(hash(a.range + b.range)) FROM range(1000000) a, range(1000000) b"))
                    .isInstanceOf(SQLException.class)
                    .hasStackTraceContaining("timeout of 1 s");
        }
    }

    @Test
    void statementCancelInterruptsALongQueryOnTheServer() throws Exception {
        try (Connection connection = connect(); Statement statement = connection.createStatement()) {
            java.util.concurrent.CompletableFuture<Throwable> outcome = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try (ResultSet rs = statement.executeQuery("SELECT sum(hash(a.range + b.range)) FROM range(1000000) a, range(1000000) b")) {
                    rs.next();
                    return null;
                } catch (Throwable e) {
                    return e;
                }
            });
            TestServers.awaitUntil(() -> server.sessions().runningStatements() > 0, "the long query runs in DuckDB");
            statement.cancel();
            // A trillion-row join: only an interrupt in DuckDB ends it, and the session runs nothing afterwards.
            TestServers.awaitUntil(() -> server.sessions().runningStatements() == 0, "DuckDB interrupted the query");
            assertThat(outcome.get(60, java.util.concurrent.TimeUnit.SECONDS)).as("the cancelled query fails on the client").isNotNull();
            try (Statement next = connection.createStatement(); ResultSet rs = next.executeQuery("SELECT 7")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getInt(1)).isEqualTo(7);
            }
        }
    }

    @Test
    void aCatalogNamedOnTheConnectionIsTheSessionsDatabase() throws Exception {
        try (Connection setup = connect(); Statement statement = setup.createStatement()) {
            statement.executeUpdate("ATTACH ':memory:' AS other");
            statement.executeUpdate("CREATE TABLE other.main.only_here AS SELECT 'other' AS source");
        }
        Properties properties = TestServers.credentials();
        properties.put("catalog", "other");
        Connection connection = DriverManager.getConnection(TestServers.jdbcUrl(server), properties);
        try (Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery("SELECT current_database(), source FROM only_here")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).isEqualTo("other");
            assertThat(rs.getString(2)).isEqualTo("other");
        } finally {
            // Driver 18.3 sends CloseSession (only when a catalog is set) after shutting its own channel, so close
            // fails on the client side; the server closes the session at its idle timeout.
            assertThatThrownBy(connection::close).hasStackTraceContaining("Channel shutdown invoked");
        }
    }

    @Test
    void aWrongPasswordIsRefused() {
        Properties properties = new Properties();
        properties.put("user", TestServers.USER);
        properties.put("password", "wrong");
        assertThatThrownBy(() -> DriverManager.getConnection(TestServers.jdbcUrl(server), properties).close())
                .isInstanceOf(SQLException.class)
                .hasStackTraceContaining("UNAUTHENTICATED")
                .hasStackTraceContaining("unknown user or wrong password");
    }

    @Test
    void aForgedTokenIsRefused() {
        Properties properties = new Properties();
        properties.put("token", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZGEiLCJqdGkiOiJ4IiwiaXNzIjoibWFsbGFyZCJ9.c2lnbmF0dXJl");
        assertThatThrownBy(() -> {
            try (Connection connection = DriverManager.getConnection(TestServers.jdbcUrl(server), properties);
                    Statement statement = connection.createStatement()) {
                statement.executeQuery("SELECT 1");
            }
        }).isInstanceOf(SQLException.class)
                .hasStackTraceContaining("UNAUTHENTICATED")
                .hasStackTraceContaining("signature does not match");
    }

    static List<String> column(ResultSet rs, String name) throws SQLException {
        List<String> values = new ArrayList<>();
        try (rs) {
            while (rs.next()) {
                values.add(rs.getString(name));
            }
        }
        return values;
    }
}
