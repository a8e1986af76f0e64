// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.error.MallardException;
import org.duckdb.DuckDBConnection;
import org.junit.jupiter.api.Test;

/** Scratch tables kept for the connection's life: filled again in place, made anew after whatever removed them. */
class ScratchTablesTest {
    private static final String TOUCHED = "temp.main.\"mallard_touched$t\"";

    @Test
    void aSecondFillKeepsTheSameTableAndHoldsOnlyTheNewRows() throws Exception {
        try (DuckDBConnection connection = DuckDb.open("jdbc:duckdb:"); StatementCache statements = new StatementCache(connection)) {
            ScratchTables scratch = ScratchTables.kept(connection, statements);
            scratch.fill(TOUCHED, "SELECT range AS k, range * 2 AS v FROM range(3)");
            String oid = oid(connection);

            long filled = scratch.fill(TOUCHED, "SELECT range AS k, range * 2 AS v FROM range(10, 12)");

            assertThat(filled).isEqualTo(2);
            assertThat(oid(connection)).isEqualTo(oid);
            assertThat(DuckDb.rows(connection, "SELECT k, v FROM " + TOUCHED)).containsExactly("10|20", "11|22");
        }
    }

    @Test
    void aTableItsRolledBackTransactionCreatedIsMadeAnewOnceForgotten() throws Exception {
        try (DuckDBConnection connection = DuckDb.open("jdbc:duckdb:"); StatementCache statements = new StatementCache(connection)) {
            ScratchTables scratch = ScratchTables.kept(connection, statements);
            DuckDb.run(connection, "BEGIN TRANSACTION");
            scratch.fill(TOUCHED, "SELECT 1 AS k");
            DuckDb.run(connection, "ROLLBACK");
            assertThat(DuckDb.rows(connection, "SELECT count(*) FROM duckdb_tables() WHERE temporary")).containsExactly("0");

            scratch.forgetAll();
            scratch.fill(TOUCHED, "SELECT 7 AS k");

            assertThat(DuckDb.rows(connection, "SELECT k FROM " + TOUCHED)).containsExactly("7");
        }
    }

    /**
     * A MIN/MAX view's first sync after a REFRESH (which drops its touched groups' table) fails and rolls back the
     * table it made; once the cause is gone, the next sync makes it again and the view equals its query.
     */
    @Test
    void aSyncAfterARolledBackSyncMakesTheTouchedGroupsTableAgain() throws Exception {
        String query = "SELECT g, min(x) AS lo, max(x) AS hi FROM t GROUP BY g";
        try (DuckDBConnection connection = DuckDb.open("jdbc:duckdb:"); MaterializedViews views = MaterializedViews.attach(connection)) {
            DuckDb.run(connection, "CREATE TABLE t (g INTEGER, x INTEGER)", "INSERT INTO t VALUES (1, 5), (1, 9), (2, 3)");
            views.createView("lows", query);
            views.refresh("lows");
            // Behind the views' back, a column too narrow for the next value: the sync's INSERT into the view fails.
            DuckDb.run(connection, "ALTER TABLE lows ALTER hi TYPE TINYINT", "INSERT INTO t VALUES (1, 1000)");
            assertThatThrownBy(views::sync).isInstanceOf(MallardException.class)
                    .hasMessageContaining("INSERT INTO \"lows\"");

            DuckDb.run(connection, "ALTER TABLE lows ALTER hi TYPE INTEGER");
            views.sync();
            DuckDb.run(connection, "DELETE FROM t WHERE x = 1000", "INSERT INTO t VALUES (2, 1), (3, 4)");
            views.sync();

            assertThat(DuckDb.difference(connection, "lows", query)).isZero();
            assertThat(DuckDb.rows(connection, "SELECT * FROM lows")).containsExactly("1|5|9", "2|1|3", "3|4|4");
        }
    }

    private static String oid(DuckDBConnection connection) {
        return DuckDb.rows(connection, "SELECT table_oid FROM duckdb_tables() WHERE temporary AND table_name = 'mallard_touched$t'").get(0);
    }
}
