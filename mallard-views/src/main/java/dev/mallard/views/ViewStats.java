// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import java.util.List;

/**
 * Counters of one attached {@link MaterializedViews} since it was attached, plus what is pending now.
 *
 * @param views materialized views in the database that are maintained
 * @param mergedViews of those, the views merged on read (a DuckDB view over their state and pending changes)
 * @param brokenViews materialized views that can no longer be maintained (a source was dropped or changed)
 * @param trackedTables base tables with capture triggers
 * @param pendingRows captured delta rows not yet applied
 * @param syncs syncs run (including those with nothing to do)
 * @param unpolledSyncs of those, writer's syncs that read nothing: the rows they were told of could wait
 * @param deltaSyncs syncs that applied at least one captured row
 * @param capturedRows captured delta rows the syncs consumed
 * @param viewRowsChanged view table rows deleted plus inserted by the syncs and reconciles
 * @param refreshes full recomputes (REFRESH MATERIALIZED VIEW)
 * @param exactDeltaSyncs sync calls that moved views by captured deltas alone (outside a reconcile)
 * @param scanSyncs views rebuilt by scan-and-diff in a reconcile
 * @param provisionalTables tracked tables whose rows their deltas did not explain and whose reconcile failed
 * @param reconcileFailures reconciles that failed (each leaves its tables provisional; the next sync tries again)
 * @param lastReconcileError the last failed reconcile's message, or empty
 */
public record ViewStats(long views, long mergedViews, long brokenViews, long trackedTables, long pendingRows, long syncs, long unpolledSyncs,
        long deltaSyncs,
        long capturedRows, long viewRowsChanged, long refreshes, long exactDeltaSyncs, long scanSyncs,
        List<String> provisionalTables, long reconcileFailures, String lastReconcileError) {
    public ViewStats {
        provisionalTables = List.copyOf(provisionalTables);
    }
}
