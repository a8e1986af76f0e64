package dev.mallard.views;

/**
 * Counters of one attached {@link MaterializedViews} since it was attached, plus what is pending now.
 *
 * @param views materialized views in the database that are maintained
 * @param brokenViews materialized views that can no longer be maintained (a source was dropped or changed)
 * @param trackedTables base tables with capture triggers
 * @param pendingRows captured delta rows not yet applied
 * @param syncs syncs run (including those with nothing to do)
 * @param deltaSyncs syncs that applied at least one captured row
 * @param capturedRows captured delta rows the syncs consumed
 * @param viewRowsChanged view table rows deleted plus inserted by the syncs
 * @param refreshes full recomputes (REFRESH MATERIALIZED VIEW)
 */
public record ViewStats(long views, long brokenViews, long trackedTables, long pendingRows, long syncs, long deltaSyncs,
        long capturedRows, long viewRowsChanged, long refreshes) {}
