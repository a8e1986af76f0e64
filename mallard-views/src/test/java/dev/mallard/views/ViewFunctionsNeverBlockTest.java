// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.duckdb.DuckDBConnection;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code dbsp_*} functions never block a DuckDB worker on a Java lock: each call, in a projection, a WHERE, a
 * subquery or {@code query()}, answers or fails with a coded error within a bound, and other connections keep working.
 */
class ViewFunctionsNeverBlockTest {
    /** Far above what any statement here needs; a hang is what it catches. */
    private static final long BOUND_SECONDS = 60;

    private final ExecutorService executor = Executors.newCachedThreadPool();

    @AfterEach
    void stop() {
        executor.shutdownNow();
    }

    /** What a statement did within the bound: its rows ("a|b" each) or its error message. */
    private record Outcome(List<String> rows, String error) {}

    private Outcome within(Connection connection, String sql) throws Exception {
        Future<Outcome> future = executor.submit(() -> run(connection, sql));
        try {
            return future.get(BOUND_SECONDS, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            future.cancel(true);
            return fail("hung for " + BOUND_SECONDS + " s: " + sql);
        }
    }

    private static Outcome run(Connection connection, String sql) {
        try (Statement statement = connection.createStatement()) {
            if (!statement.execute(sql)) {
                return new Outcome(List.of(), null);
            }
            List<String> rows = new ArrayList<>();
            try (ResultSet result = statement.getResultSet()) {
                int columns = result.getMetaData().getColumnCount();
                while (result.next()) {
                    StringBuilder row = new StringBuilder();
                    for (int i = 1; i <= columns; i++) {
                        row.append(i > 1 ? "|" : "").append(result.getString(i));
                    }
                    rows.add(row.toString());
                }
            }
            return new Outcome(rows, null);
        } catch (SQLException e) {
            return new Outcome(List.of(), String.valueOf(e.getMessage()));
        }
    }

    @Test
    void everyViewFunctionInAProjectionAWhereASubqueryOrQueryAnswersOrFailsWithinABoundAndOthersKeepWorking(@TempDir Path dir)
            throws Exception {
        String url = "jdbc:mallard:" + dir.resolve("shop.duckdb");
        try (Connection caller = DriverManager.getConnection(url); Connection other = DriverManager.getConnection(url)) {
            run(caller, "CREATE TABLE t (x INTEGER)");
            run(caller, "INSERT INTO t VALUES (1), (2)");
            run(caller, "CREATE MATERIALIZED VIEW v0 AS SELECT x FROM t");
            List<String> calls = List.of("dbsp_sync()", "dbsp_auto_sync(true)", "dbsp_create_view('w' || 'x', 'SELECT x FROM t')",
                    "dbsp_drop_view('wx')", "dbsp_track('t')", "dbsp_untrack('t')", "dbsp_create_view('v' || x, 'SELECT 1 AS one')",
                    "dbsp_drop_view_cascade('v' || x)", "dbsp_drop('v' || x)");
            List<String> tables = List.of("dbsp_stats()", "dbsp_query('v0')", "dbsp_check()", "dbsp_changes('v0')", "dbsp_sync()");
            List<String> statements = new ArrayList<>();
            for (String call : calls) {
                statements.add("SELECT " + call + " FROM t");
                statements.add("SELECT count(*) FROM t WHERE " + call + " IS NOT NULL");
                statements.add("SELECT (SELECT " + call + ") FROM t");
                statements.add("SELECT * FROM query('SELECT " + call.replace("'", "''") + "')");
            }
            for (String table : tables) {
                statements.add("SELECT * FROM " + table + " WHERE true");
                statements.add("SELECT (SELECT count(*) FROM " + table + ") AS n");
                statements.add("SELECT * FROM t WHERE x IN (SELECT 1 FROM " + table + ")");
                statements.add("SELECT * FROM query('SELECT * FROM " + table.replace("'", "''") + "')");
            }
            statements.add("SELECT dbsp_create_view('v'||range, 'SELECT 1') FROM range(2,4)");
            for (String sql : statements) {
                Outcome outcome = within(caller, sql);
                assertThat(outcome.error() == null || outcome.error().startsWith("user.view.") || outcome.error().startsWith("user.sql."))
                        .as("%s failed with %s", sql, outcome.error()).isTrue();
                assertThat(within(other, "INSERT INTO t VALUES (3)").error()).as("a write after " + sql).isNull();
                assertThat(within(other, "DELETE FROM t WHERE x = 3").error()).as("a write after " + sql).isNull();
            }
            // The three statements: the one with row-dependent arguments is refused, the others answer.
            assertThat(within(caller, "SELECT dbsp_create_view('v'||range, 'SELECT 1') FROM range(2,4)").error())
                    .startsWith("user.view.call_placement");
            assertThat(within(caller, "SELECT metric, value FROM dbsp_stats() WHERE metric = 'views'").rows())
                    .containsExactly("views|1");
            assertThat(within(caller, "SELECT dbsp_sync() AS s").rows()).containsExactly("0");
            assertThat(within(caller, "SELECT view, differing_rows FROM dbsp_check()").rows()).containsExactly("v0|0");
            assertThat(within(caller, "SELECT * FROM dbsp_sync()").rows()).containsExactly("Synced all tracked tables");
            assertThat(within(caller, "SELECT * FROM query('SELECT dbsp_sync()')").error()).startsWith("user.view.call_placement");
            assertThat(within(other, "SELECT count(*) FROM v0").rows()).containsExactly("2");
        }
    }

    @Test
    void registeredViewFunctionsNeverWaitForTheLockOfTheThreadThatRunsTheirStatement() throws Exception {
        // Closed only when nothing hung: closing a connection whose statement is stuck would hang the test instead of failing it.
        DuckDBConnection connection = DuckDb.open("jdbc:duckdb:");
        MaterializedViews shared = MaterializedViews.attach(connection).registerFunctions();
        DuckDBConnection session = (DuckDBConnection) connection.duplicate();
        DuckDb.run(session, "CREATE TABLE t (x INTEGER)", "INSERT INTO t VALUES (1)", "SET threads = 4");
        shared.createView("v0", "SELECT x FROM t");
        for (String sql : List.of("SELECT dbsp_sync() FROM range(3)", "SELECT dbsp_sync() FROM range(4000000) WHERE range % 1000000 = 0",
                "SELECT count(*) FROM dbsp_stats(), range(4000000) WHERE range % 1000000 = 0",
                "SELECT * FROM dbsp_stats() WHERE metric = 'views'",
                "SELECT dbsp_create_view('v' || range, 'SELECT x FROM t') FROM range(2, 4)", "SELECT dbsp_sync() AS s")) {
            // A server runs a session's statement while it holds the shared views' monitor, as it did when this hung.
            Future<Outcome> future = executor.submit(() -> {
                synchronized (shared) {
                    return run(session, sql);
                }
            });
            Outcome outcome;
            try {
                outcome = future.get(BOUND_SECONDS, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                throw new AssertionError("hung for " + BOUND_SECONDS + " s: " + sql, e);
            }
            assertThat(outcome.error() == null || outcome.error().contains("system.view.busy"))
                    .as("%s: %s", sql, outcome.error()).isTrue();
        }
        assertThat(DuckDb.rows(session, "SELECT value FROM dbsp_stats() WHERE metric = 'views'")).containsExactly("3");
        session.close();
        shared.close();
        connection.close();
    }
}
