// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.duckdb.DuckDBConnection;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ViewSqlTest {
    private DuckDBConnection connection;
    private MaterializedViews views;
    private ViewSql sql;

    @BeforeEach
    void open() {
        connection = DuckDb.open("jdbc:duckdb:");
        views = MaterializedViews.attach(connection);
        sql = new ViewSql(views);
    }

    @AfterEach
    void close() throws Exception {
        views.close();
        connection.close();
    }

    private void run(String statement) {
        try (ViewSql.Result ignored = sql.execute(statement)) {
            // executed for its effect
        }
    }

    @Test
    void recognizesTheFrontDoorsOwnStatementsAndNothingElse() {
        assertThat(List.of("CREATE MATERIALIZED VIEW v AS SELECT 1", "create or replace materialized view v as select 1",
                "DROP MATERIALIZED VIEW IF EXISTS v CASCADE", "REFRESH MATERIALIZED VIEW v", "SELECT dbsp_sync()",
                "SELECT dbsp_auto_sync(false)", "SELECT * FROM dbsp_stats()", "SELECT * FROM dbsp_query('v')",
                "SELECT dbsp_create_view('v', 'SELECT 1')", "SELECT dbsp_track('t')", "SELECT dbsp_untrack('t')",
                "SELECT dbsp_drop_view_cascade('v')", "-- note\nCREATE MATERIALIZED VIEW v AS SELECT 1",
                "/* a /* nested */ comment */ create\n materialized view main.\"v\" as select 1", "SELECT dbsp_sync() + 1",
                "SELECT view, differing_rows FROM dbsp_check()")).allMatch(ViewSql::recognizes);
        assertThat(List.of("CREATE VIEW v AS SELECT 1", "SELECT * FROM materialized", "INSERT INTO t VALUES (1)",
                "-- CREATE MATERIALIZED VIEW v AS SELECT 1\nSELECT 1", "SELECT 'CREATE MATERIALIZED VIEW'",
                "SELECT 1 -- dbsp_sync()")).noneMatch(ViewSql::recognizes);
    }

    @Test
    void viewDdlAndAutoSyncKeepTheViewCurrentAfterEveryStatement() {
        run("CREATE TABLE sales (region VARCHAR, amount INTEGER)");
        run("INSERT INTO sales VALUES ('north', 5), ('south', 7)");
        run("CREATE MATERIALIZED VIEW totals AS SELECT region, sum(amount) AS total FROM sales GROUP BY region;");
        run("INSERT INTO sales VALUES ('north', 1)");
        assertThat(DuckDb.rows(connection, "SELECT * FROM totals")).containsExactly("north|6", "south|7");

        run("CREATE OR REPLACE MATERIALIZED VIEW totals AS SELECT region, count(*) AS n FROM sales GROUP BY region");
        assertThat(DuckDb.rows(connection, "SELECT * FROM totals")).containsExactly("north|2", "south|1");

        run("DROP MATERIALIZED VIEW totals");
        run("DROP MATERIALIZED VIEW IF EXISTS totals");
        assertThat(views.names()).isEmpty();
        assertThat(DuckDb.rows(connection, "SELECT count(*) FROM duckdb_triggers()")).containsExactly("0");
    }

    @Test
    void dropCascadeDropsTheViewsThatReadItAndRestrictRefuses() {
        run("CREATE TABLE sales (region VARCHAR, amount INTEGER)");
        run("CREATE TABLE other (x INTEGER)");
        run("CREATE MATERIALIZED VIEW totals AS SELECT region, sum(amount) AS total FROM sales GROUP BY region");
        run("CREATE MATERIALIZED VIEW big AS SELECT region FROM totals WHERE total > 5");
        run("CREATE MATERIALIZED VIEW unrelated AS SELECT x FROM other");
        run("CREATE MATERIALIZED VIEW big_regions AS SELECT count(*) AS n FROM big");
        assertThatThrownBy(() -> run("DROP MATERIALIZED VIEW totals RESTRICT"))
                .isInstanceOfSatisfying(MallardException.class, e -> {
                    assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_VIEW_DEPENDED_ON);
                    assertThat(e.getMessage()).contains("CASCADE");
                });

        run("DROP MATERIALIZED VIEW totals CASCADE");
        assertThat(views.names()).containsExactly("unrelated");
        assertThat(DuckDb.rows(connection, "SELECT count(*) FROM duckdb_tables() WHERE table_name IN ('totals', 'big', 'big_regions')"))
                .containsExactly("0");
        run("DROP MATERIALIZED VIEW IF EXISTS totals CASCADE");

        run("CREATE MATERIALIZED VIEW copy AS SELECT x FROM unrelated");
        try (ViewSql.Result result = sql.execute("SELECT dbsp_drop_view_cascade('unrelated')")) {
            assertThat(result.rows()).isPresent();
        }
        assertThat(views.names()).isEmpty();
        assertThat(DuckDb.rows(connection, "SELECT count(*) FROM duckdb_triggers()")).containsExactly("0");
    }

    @Test
    void withAutoSyncOffChangesWaitForDbspSync() throws SQLException {
        run("CREATE TABLE t (x INTEGER)");
        // A MAX per group: a view the syncs move (a projection is moved by the writer's own statement, docs/views.md).
        run("CREATE MATERIALIZED VIEW doubled AS SELECT max(x) * 2 AS y FROM t GROUP BY x");
        run("SELECT dbsp_auto_sync(false)");
        run("INSERT INTO t SELECT range FROM range(10)");
        assertThat(DuckDb.rows(connection, "SELECT count(*) FROM doubled")).containsExactly("0");
        try (ViewSql.Result result = sql.execute("SELECT dbsp_sync()")) {
            ResultSet rows = result.rows().orElseThrow();
            rows.next();
            assertThat(rows.getLong(1)).isEqualTo(10);
        }
        assertThat(DuckDb.rows(connection, "SELECT count(*) FROM doubled")).containsExactly("10");
    }

    @Test
    void dbspStatsReportsWhatTheSyncsApplied() throws SQLException {
        run("CREATE TABLE t (x INTEGER)");
        // A view the syncs move; a projection's writes would wait in the log as pending rows (its triggers moved it).
        run("SELECT dbsp_create_view('v', 'SELECT max(x) AS x FROM t WHERE x > 1 GROUP BY x')");
        run("INSERT INTO t VALUES (1), (2), (3)");
        Map<String, Long> stats = new HashMap<>();
        try (ViewSql.Result result = sql.execute("SELECT * FROM dbsp_stats()")) {
            ResultSet rows = result.rows().orElseThrow();
            while (rows.next()) {
                stats.put(rows.getString("metric"), rows.getLong("value"));
            }
        }
        assertThat(stats).containsEntry("views", 1L).containsEntry("trigger_rows", 3L)
                .containsEntry("view_rows_changed", 2L).containsEntry("pending_rows", 0L);
        assertThat(DuckDb.rows(connection, "SELECT * FROM v")).containsExactly("2", "3");
    }

    @Test
    void refreshRebuildsAViewWrittenBehindTheMaintainersBack() {
        run("CREATE TABLE t (x INTEGER)");
        run("INSERT INTO t VALUES (1), (2)");
        // A self-join, which the syncs move: a view its writers' statements move cannot fail them (dbsp_check finds it).
        run("CREATE MATERIALIZED VIEW v AS SELECT t.x FROM t JOIN t AS u ON t.x = u.x");
        DuckDb.run(connection, "DELETE FROM v");
        // The write commits and says so; the sync after it fails, and an explicit sync reports why.
        run("DELETE FROM t WHERE x = 1");
        assertThat(DuckDb.rows(connection, "SELECT count(*) FROM t")).containsExactly("1");
        assertThat(sql.failedSyncs()).isEqualTo(1);
        assertThatThrownBy(() -> run("SELECT dbsp_sync()"))
                .isInstanceOfSatisfying(MallardException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_VIEW_DIVERGED));
        run("REFRESH MATERIALIZED VIEW v");
        assertThat(DuckDb.rows(connection, "SELECT * FROM v")).containsExactly("2");
    }

    @Test
    void dbspCheckFindsAViewWrittenBehindTheMaintainersBack() throws SQLException {
        run("CREATE TABLE t (x INTEGER)");
        run("INSERT INTO t VALUES (1), (2)");
        run("CREATE MATERIALIZED VIEW v AS SELECT x FROM t");
        run("CREATE MATERIALIZED VIEW w AS SELECT count(*) AS n FROM t");
        DuckDb.run(connection, "INSERT INTO v VALUES (7)");
        Map<String, Long> differing = new HashMap<>();
        try (ViewSql.Result result = sql.execute("SELECT * FROM dbsp_check()")) {
            ResultSet rows = result.rows().orElseThrow();
            while (rows.next()) {
                differing.put(rows.getString("view"), rows.getLong("differing_rows"));
            }
        }
        assertThat(differing).containsEntry("v", 1L).containsEntry("w", 0L);
        run("REFRESH MATERIALIZED VIEW v");
        assertThat(views.check("v")).isZero();
    }

    @Test
    void orReplaceRebuildsReadersAndDbspTrackKeepsATableCaptured() throws SQLException {
        run("CREATE TABLE sales (region VARCHAR, amount INTEGER)");
        try (ViewSql.Result result = sql.execute("SELECT dbsp_track('sales')")) {
            ResultSet rows = result.rows().orElseThrow();
            assertThat(rows.next()).isTrue();
            assertThat(rows.getString(1)).isEqualTo("Tracking table: sales (2 columns)");
        }
        run("INSERT INTO sales VALUES ('north', 5), ('south', 7)");
        run("CREATE MATERIALIZED VIEW totals AS SELECT region, sum(amount) AS total FROM sales GROUP BY region");
        run("CREATE MATERIALIZED VIEW big AS SELECT region FROM totals WHERE total > 6");
        run("CREATE OR REPLACE MATERIALIZED VIEW totals AS SELECT region, sum(amount) + 10 AS total FROM sales GROUP BY region");
        assertThat(DuckDb.rows(connection, "SELECT * FROM big")).containsExactly("north", "south");

        run("DROP MATERIALIZED VIEW totals CASCADE");
        assertThat(DuckDb.rows(connection, "SELECT count(*) FROM duckdb_triggers()")).containsExactly("3");
        run("SELECT dbsp_untrack('sales')");
        assertThat(DuckDb.rows(connection, "SELECT count(*) FROM duckdb_triggers()")).containsExactly("0");
    }

    @Test
    void dbspCheckReconcilesATableWrittenWhileItsTriggersWereGone() throws SQLException {
        run("CREATE TABLE t (x INTEGER)");
        run("INSERT INTO t VALUES (1), (2)");
        run("CREATE MATERIALIZED VIEW v AS SELECT x FROM t");
        for (String trigger : DuckDb.rows(connection, "SELECT trigger_name FROM duckdb_triggers()")) {
            DuckDb.run(connection, "DROP TRIGGER \"" + trigger + "\" ON t");
        }
        DuckDb.run(connection, "INSERT INTO t VALUES (3)", "DELETE FROM t WHERE x = 1");
        try (ViewSql.Result result = sql.execute("SELECT * FROM dbsp_check()")) {
            ResultSet rows = result.rows().orElseThrow();
            assertThat(rows.next()).isTrue();
            assertThat(rows.getLong("differing_rows")).isZero();
        }
        assertThat(DuckDb.rows(connection, "SELECT * FROM v")).containsExactly("2", "3");
        Map<String, Long> stats = new HashMap<>();
        try (ViewSql.Result result = sql.execute("SELECT * FROM dbsp_stats()")) {
            ResultSet rows = result.rows().orElseThrow();
            while (rows.next()) {
                stats.put(rows.getString("metric"), rows.getLong("value"));
            }
        }
        assertThat(stats).containsEntry("scan_syncs", 1L).containsEntry("provisional_tables", 0L)
                .containsEntry("reconcile_failures", 0L).containsEntry("last_reconcile_error", 0L)
                .containsKeys("exact_delta_syncs", "trigger_syncs", "trigger_rows");
    }

    @Test
    void dbspChangesShowsTheLastSyncsSignedDelta() throws SQLException {
        run("CREATE TABLE t (g VARCHAR, x INTEGER)");
        run("INSERT INTO t VALUES ('a', 1), ('b', 2)");
        run("CREATE MATERIALIZED VIEW sums AS SELECT g, sum(x) AS total FROM t GROUP BY g");
        assertThat(changes()).isEmpty();
        run("UPDATE t SET x = 5 WHERE g = 'a'");
        assertThat(changes()).containsExactly("a|1|-1", "a|5|1");
        run("INSERT INTO t VALUES ('c', 3), ('c', 3)");
        assertThat(changes()).containsExactly("c|6|1");
    }

    private java.util.List<String> changes() throws SQLException {
        java.util.List<String> rows = new java.util.ArrayList<>();
        try (ViewSql.Result result = sql.execute("SELECT * FROM dbsp_changes('sums')")) {
            ResultSet set = result.rows().orElseThrow();
            while (set.next()) {
                rows.add(set.getString(1) + "|" + set.getString(2) + "|" + set.getString("weight"));
            }
        }
        rows.sort(null);
        return rows;
    }

    @Test
    void otherStatementsPassThroughToDuckDb() throws SQLException {
        try (ViewSql.Result result = sql.execute("SELECT 40 + 2 AS answer")) {
            ResultSet rows = result.rows().orElseThrow();
            rows.next();
            assertThat(rows.getInt("answer")).isEqualTo(42);
        }
        assertThatThrownBy(() -> run("SELEC 1"))
                .isInstanceOfSatisfying(MallardException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_SQL_INVALID));
    }
}
