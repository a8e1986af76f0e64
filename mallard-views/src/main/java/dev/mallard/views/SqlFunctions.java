// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.sql.SQLException;
import java.util.List;
import org.duckdb.DuckDBColumnType;
import org.duckdb.DuckDBDataChunkWriter;
import org.duckdb.DuckDBFunctions;
import org.duckdb.DuckDBTableFunction;
import org.duckdb.DuckDBTableFunctionBindInfo;
import org.duckdb.DuckDBTableFunctionCallInfo;
import org.duckdb.DuckDBTableFunctionInitInfo;

/**
 * The {@code dbsp_*} SQL functions as Java functions registered in DuckDB, so any connection to the database
 * (not only the {@link ViewSql} front door) can call them: {@code dbsp_sync()}, {@code dbsp_create_view(name, sql)},
 * {@code dbsp_drop_view(name)} and {@code dbsp_drop(name)}, {@code dbsp_drop_view_cascade(name)} and
 * {@code dbsp_drop_cascade(name)}, {@code dbsp_track(table)},
 * {@code dbsp_untrack(table)} and the table function {@code dbsp_stats()}. They run on the views' own
 * connection, in a transaction of their own, while the calling query runs: a query that calls
 * {@code dbsp_sync()} reads the tables as they were when it started, the next statement sees the sync.
 */
final class SqlFunctions {
    record Metric(String name, long value, String detail) {}

    private SqlFunctions() {}

    static void register(MaterializedViews views) {
        try {
            DuckDBFunctions.scalarFunction().withName("dbsp_sync").withReturnType(Long.class)
                    .withFunction(() -> views.maintainingNow("dbsp_sync()", views::sync)).withVolatile().register(views.connection());
            DuckDBFunctions.scalarFunction().withName("dbsp_create_view").withParameters(String.class, String.class)
                    .withReturnType(String.class)
                    .withFunction((String name, String sql) -> views.maintainingNow("dbsp_create_view()", () -> {
                        views.createView(name, sql);
                        return ViewStatus.created(name, views.sources(name));
                    })).withVolatile().register(views.connection());
            for (String drop : List.of("dbsp_drop_view", "dbsp_drop")) {
                DuckDBFunctions.scalarFunction().withName(drop).withParameter(String.class)
                        .withReturnType(String.class)
                        .withFunction((String name) -> views.maintainingNow(drop + "()", () -> {
                            views.dropView(name);
                            return ViewStatus.dropped();
                        })).withVolatile().register(views.connection());
            }
            for (String drop : List.of("dbsp_drop_view_cascade", "dbsp_drop_cascade")) {
                DuckDBFunctions.scalarFunction().withName(drop).withParameter(String.class)
                        .withReturnType(String.class)
                        .withFunction((String name) -> views.maintainingNow(drop + "()",
                                () -> ViewStatus.droppedCascade(name, views.dropViewCascade(name))))
                        .withVolatile().register(views.connection());
            }
            DuckDBFunctions.scalarFunction().withName("dbsp_track").withParameter(String.class)
                    .withReturnType(String.class)
                    .withFunction((String table) -> views.maintainingNow("dbsp_track()",
                            () -> ViewStatus.tracking(table, views.columnCount(views.track(table))))).withVolatile().register(views.connection());
            DuckDBFunctions.scalarFunction().withName("dbsp_untrack").withParameter(String.class)
                    .withReturnType(Boolean.class)
                    .withFunction((String table) -> views.maintainingNow("dbsp_untrack()", () -> views.untrack(table))).withVolatile().register(views.connection());
            DuckDBFunctions.tableFunction().withName("dbsp_stats").withFunction(new StatsFunction(views))
                    .register(views.connection());
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot register the dbsp_* functions (they are "
                    + "registered once per database; another MaterializedViews on it may hold them): " + e.getMessage(), e);
        }
    }

    static List<Metric> metrics(ViewStats stats) {
        return List.of(
                new Metric("views", stats.views(), "materialized views in the database that are maintained"),
                new Metric("merged_views", stats.mergedViews(), "views merged on read: DuckDB views over their state and pending changes, current at every commit"),
                new Metric("broken_views", stats.brokenViews(), "views whose source tables were dropped or changed; drop and recreate them"),
                new Metric("tracked_tables", stats.trackedTables(), "base tables with capture triggers"),
                new Metric("pending_rows", stats.pendingRows(), "captured delta rows not yet applied"),
                new Metric("syncs", stats.syncs(), "syncs run since attach"),
                new Metric("unpolled_syncs", stats.unpolledSyncs(), "writers' syncs that read nothing: their rows could wait in the logs"),
                new Metric("trigger_syncs", stats.deltaSyncs(), "syncs that applied captured rows"),
                new Metric("trigger_rows", stats.capturedRows(), "captured delta rows applied since attach"),
                new Metric("view_rows_changed", stats.viewRowsChanged(), "view rows deleted plus inserted since attach"),
                new Metric("refreshes", stats.refreshes(), "full recomputes since attach"),
                new Metric("exact_delta_syncs", stats.exactDeltaSyncs(), "syncs that moved views by captured deltas alone"),
                new Metric("scan_syncs", stats.scanSyncs(), "views rebuilt by scan-and-diff in a reconcile since attach"),
                new Metric("provisional_tables", stats.provisionalTables().size(), stats.provisionalTables().isEmpty()
                        ? "tables whose rows their deltas do not explain, awaiting reconcile"
                        : "awaiting reconcile: " + String.join(", ", stats.provisionalTables())),
                new Metric("reconcile_failures", stats.reconcileFailures(), "reconciles that failed since attach"),
                new Metric("last_reconcile_error", stats.lastReconcileError().isEmpty() ? 0 : 1, stats.lastReconcileError()));
    }

    /** {@code dbsp_stats()}: columns metric VARCHAR, value BIGINT, detail VARCHAR. */
    private static final class StatsFunction implements DuckDBTableFunction<Object, StatsFunction.Cursor, Object> {
        private final MaterializedViews views;

        StatsFunction(MaterializedViews views) {
            this.views = views;
        }

        static final class Cursor {
            private final List<Metric> metrics;
            private int next;

            Cursor(List<Metric> metrics) {
                this.metrics = metrics;
            }
        }

        @Override
        public Object bind(DuckDBTableFunctionBindInfo info) {
            info.addResultColumn("metric", DuckDBColumnType.VARCHAR);
            info.addResultColumn("value", DuckDBColumnType.BIGINT);
            info.addResultColumn("detail", DuckDBColumnType.VARCHAR);
            return new Object();
        }

        @Override
        public Cursor init(DuckDBTableFunctionInitInfo info) {
            info.setMaxThreads(1);
            return new Cursor(metrics(views.maintainingNow("dbsp_stats()", views::stats)));
        }

        @Override
        public long apply(DuckDBTableFunctionCallInfo info, DuckDBDataChunkWriter output) {
            Cursor cursor = info.getInitData();
            long rows = 0;
            while (cursor.next < cursor.metrics.size() && rows < output.capacity()) {
                Metric metric = cursor.metrics.get(cursor.next++);
                output.vector(0).setString(rows, metric.name());
                output.vector(1).setLong(rows, metric.value());
                output.vector(2).setString(rows, metric.detail());
                rows++;
            }
            return rows;
        }
    }
}
