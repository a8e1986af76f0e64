// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.server.config.AccessMode;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** CREATE MATERIALIZED VIEW and the dbsp_* functions through the server, with the official Flight SQL JDBC driver. */
class MaterializedViewsIT {
    @TempDir
    static Path warehouse;

    static MallardServer server;

    @BeforeAll
    static void start() {
        server = MallardServer.start(TestServers.config(warehouse, AccessMode.COMPLETE, Optional.empty()));
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
    void aViewCreatedOverJdbcFollowsWritesFromAnotherSession() throws Exception {
        try (Connection owner = connect(); Connection writer = connect(); Statement statement = owner.createStatement();
                Statement writes = writer.createStatement()) {
            statement.executeUpdate("CREATE TABLE orders (id INTEGER, city VARCHAR, amount INTEGER)");
            statement.executeUpdate("INSERT INTO orders VALUES (1, 'Lisbon', 10), (2, 'Porto', 5)");
            statement.execute("CREATE MATERIALIZED VIEW city_totals AS SELECT city, sum(amount) AS total, count(*) AS n FROM orders GROUP BY city");
            assertThat(totals(statement, "SELECT city, total FROM city_totals")).containsExactly(Map.entry("Lisbon", 10L), Map.entry("Porto", 5L));

            writes.executeUpdate("INSERT INTO orders VALUES (3, 'Lisbon', 7), (4, 'Braga', 1)");
            assertThat(totals(statement, "SELECT city, total FROM city_totals"))
                    .containsExactly(Map.entry("Braga", 1L), Map.entry("Lisbon", 17L), Map.entry("Porto", 5L));

            try (PreparedStatement delete = writer.prepareStatement("DELETE FROM orders WHERE id = ?")) {
                delete.setInt(1, 2);
                assertThat(delete.executeUpdate()).isEqualTo(1);
            }
            assertThat(totals(statement, "SELECT * FROM dbsp_query('city_totals')"))
                    .containsExactly(Map.entry("Braga", 1L), Map.entry("Lisbon", 17L));

            // city_totals is merged on read (a DuckDB view over its state and the pending changes): it showed each write
            // above at once. The writer session's first sync found the catalog changed (this session created the view),
            // so it reloaded and folded the inserts in; the deleted row is still pending, below compactAfter. The
            // counters of dbsp_stats() are the session's own since it attached; views and pending rows are the database's.
            Map<String, Long> stats = new LinkedHashMap<>();
            try (ResultSet rs = statement.executeQuery("SELECT * FROM dbsp_stats()")) {
                while (rs.next()) {
                    stats.put(rs.getString("metric"), rs.getLong("value"));
                }
            }
            assertThat(stats).containsEntry("views", 1L).containsEntry("pending_rows", 1L);
            try (ResultSet rs = statement.executeQuery("SELECT * FROM dbsp_check()")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isEqualTo("city_totals");
                assertThat(rs.getLong(2)).isZero();
            }
            try (ResultSet rs = statement.executeQuery("SELECT dbsp_sync()")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getLong(1)).isZero();
            }

            statement.execute("DROP MATERIALIZED VIEW city_totals");
            assertThatThrownBy(() -> statement.executeQuery("SELECT * FROM city_totals")).isInstanceOf(SQLException.class)
                    .hasMessageContaining("city_totals");
        }
    }

    @Test
    void theViewFunctionsAnswerTheSeedsStatusStringsThroughTheServer() throws Exception {
        try (Connection connection = connect(); Statement statement = connection.createStatement()) {
            statement.executeUpdate("CREATE TABLE sales (region VARCHAR, amount INTEGER)");
            statement.executeUpdate("INSERT INTO sales VALUES ('north', 5), ('south', 7)");
            assertThat(text(statement, "SELECT * FROM dbsp_track('sales')")).isEqualTo("Tracking table: sales (2 columns)");
            assertThat(text(statement, "SELECT * FROM dbsp_create_view('region_totals', 'SELECT region, sum(amount) AS total FROM sales GROUP BY region')"))
                    .isEqualTo("Created view: region_totals (sources: sales)");
            assertThat(text(statement, "SELECT * FROM dbsp_sync('sales')")).isEqualTo("Synced: sales");
            assertThat(text(statement, "SELECT * FROM dbsp_sync()")).isEqualTo("Synced all tracked tables");
            assertThat(text(statement, "SELECT * FROM dbsp_recursion_limit()")).isEqualTo("Recursion limit: 10000 rounds, 60 s");
            assertThat(text(statement, "SELECT * FROM dbsp_parallel(2)")).isEqualTo("Parallel mode ENABLED: a sync's statements run on 2 DuckDB threads");
            statement.executeUpdate("INSERT INTO sales VALUES ('north', 1)");
            assertThat(totals(statement, "SELECT region AS city, total FROM region_totals"))
                    .containsExactly(Map.entry("north", 6L), Map.entry("south", 7L));
            assertThat(text(statement, "SELECT * FROM dbsp_parallel(false)"))
                    .isEqualTo("Parallel mode DISABLED: a sync's statements use DuckDB's own threads setting");
            // The server's file_access is warehouse: the views module would open the file itself, outside DuckDB's rules.
            assertThatThrownBy(() -> statement.executeQuery("SELECT * FROM dbsp_save('views.json')")).isInstanceOf(SQLException.class)
                    .hasStackTraceContaining("dbsp_save with a file").hasStackTraceContaining("file_access");
            assertThat(java.nio.file.Files.exists(java.nio.file.Path.of("views.json"))).isFalse();
            assertThat(text(statement, "SELECT dbsp_drop('region_totals')")).isEqualTo("Dropped");
        }
    }

    private static String text(Statement statement, String sql) throws SQLException {
        try (ResultSet rs = statement.executeQuery(sql)) {
            assertThat(rs.next()).as(sql).isTrue();
            return rs.getString(1);
        }
    }

    @Test
    void aViewStatementThatFailsCarriesTheViewsMessage() throws Exception {
        try (Connection connection = connect(); Statement statement = connection.createStatement()) {
            assertThatThrownBy(() -> statement.execute("CREATE MATERIALIZED VIEW broken AS SELECT * FROM no_such_table"))
                    .isInstanceOf(SQLException.class)
                    .hasStackTraceContaining("no_such_table");
        }
    }

    private static Map<String, Long> totals(Statement statement, String sql) throws SQLException {
        Map<String, Long> rows = new java.util.TreeMap<>();
        try (ResultSet rs = statement.executeQuery(sql)) {
            while (rs.next()) {
                rows.put(rs.getString("city"), rs.getLong("total"));
            }
        }
        return rows;
    }
}
