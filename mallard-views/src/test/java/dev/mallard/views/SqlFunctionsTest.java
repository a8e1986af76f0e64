// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import org.duckdb.DuckDBConnection;
import org.junit.jupiter.api.Test;

class SqlFunctionsTest {
    @Test
    void aPlainDuckDbConnectionCreatesSyncsAndDropsViewsThroughTheDbspFunctions() throws Exception {
        try (DuckDBConnection connection = DuckDb.open("jdbc:duckdb:");
                MaterializedViews views = MaterializedViews.attach(connection).registerFunctions();
                Connection other = connection.duplicate()) {
            DuckDb.run(other, "CREATE TABLE t (g VARCHAR, x INTEGER)", "INSERT INTO t VALUES ('a', 1), ('b', 2)");
            assertThat(DuckDb.rows(other, "SELECT dbsp_create_view('sums', 'SELECT g, sum(x) AS total FROM t GROUP BY g')"))
                    .containsExactly("Created view: sums (sources: t)");
            DuckDb.run(other, "INSERT INTO t VALUES ('a', 10)");
            // Merged on read: the plain connection's write shows before any sync, which then folds it into the state.
            assertThat(DuckDb.rows(other, "SELECT * FROM sums")).containsExactly("a|11", "b|2");

            // One group's state moved.
            assertThat(DuckDb.rows(other, "SELECT dbsp_sync()")).containsExactly("1");
            assertThat(DuckDb.rows(other, "SELECT * FROM sums")).containsExactly("a|11", "b|2");
            assertThat(DuckDb.rows(other, "SELECT metric || '=' || value FROM dbsp_stats() WHERE metric IN ('views', 'merged_views', "
                    + "'trigger_rows')")).containsExactlyInAnyOrder("trigger_rows=1", "views=1", "merged_views=1");

            assertThat(DuckDb.rows(other, "SELECT dbsp_create_view('top', 'SELECT g FROM sums WHERE total > 5')"))
                    .containsExactly("Created view: top (sources: sums)");
            assertThat(DuckDb.rows(other, "SELECT dbsp_drop_view_cascade('sums')")).containsExactly("Dropped sums (and 1 dependent views)");
            assertThat(views.names()).isEmpty();
        }
    }

    @Test
    void anyConnectionTracksAndUntracksATable() throws Exception {
        try (DuckDBConnection connection = DuckDb.open("jdbc:duckdb:");
                MaterializedViews views = MaterializedViews.attach(connection).registerFunctions();
                Connection other = connection.duplicate()) {
            DuckDb.run(other, "CREATE TABLE t (x INTEGER)");
            assertThat(DuckDb.rows(other, "SELECT dbsp_track('t')")).containsExactly("Tracking table: t (1 columns)");
            assertThat(DuckDb.rows(other, "SELECT value FROM dbsp_stats() WHERE metric = 'tracked_tables'")).containsExactly("1");
            assertThat(DuckDb.rows(other, "SELECT dbsp_untrack('t')")).containsExactly("true");
            assertThat(DuckDb.rows(other, "SELECT count(*) FROM duckdb_triggers()")).containsExactly("0");
            assertThat(DuckDb.rows(other, "SELECT metric FROM dbsp_stats() WHERE metric IN ('exact_delta_syncs', 'scan_syncs', "
                    + "'provisional_tables', 'reconcile_failures', 'last_reconcile_error')")).hasSize(5);
        }
    }

    @Test
    void aFailingCallReportsTheViewsMessage() throws Exception {
        try (DuckDBConnection connection = DuckDb.open("jdbc:duckdb:");
                MaterializedViews views = MaterializedViews.attach(connection).registerFunctions()) {
            assertThatThrownBy(() -> DuckDb.rows(connection, "SELECT dbsp_drop_view('nope')"))
                    .hasMessageContaining("no materialized view named nope");
        }
    }
}
