// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlText;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The view as a real DuckDB table holding a bag of rows. It takes a Z-set of changes, consolidates it (rows
 * with equal values, NULLs equal, sum their weights) and applies it: a weight of -k deletes k copies of the
 * row, +k inserts k copies. A delete that finds fewer copies than it needs means the table was written
 * behind the maintainer's back, and the sync fails instead of leaving a wrong view.
 */
final class ViewTable {
    static final String OUTPUT = "mallard_out";

    private final String view;
    private final String relation;
    /** The last applied change, consolidated: kept (temporary, per connection) for {@code dbsp_changes}. */
    private final String net;
    private final List<String> columns;
    /** The output table's column definitions, read once: a view's columns never change. */
    private String outputColumns;

    ViewTable(String view, List<String> columns) {
        this.view = view;
        this.relation = SqlText.identifier(view);
        this.net = "temp.main." + SqlText.identifier("mallard_changes$" + view);
        this.columns = List.copyOf(columns);
    }

    String relation() {
        return relation;
    }

    /** The view's columns, in the order of its program's outputs. */
    List<String> columns() {
        return columns;
    }

    /**
     * The view's last applied change: its columns and {@code weight} (+k rows inserted, -k deleted), or no rows
     * when nothing was applied since this connection attached.
     */
    String changesQuery(Connection connection) {
        boolean kept = Sql.temporaryTableExists(connection, "mallard_changes$" + view);
        String source = kept ? net : "(SELECT *, 0::INTEGER AS " + FilteredJoin.WEIGHT + " FROM " + relation + " LIMIT 0)";
        return "SELECT * EXCLUDE (" + FilteredJoin.WEIGHT + "), " + FilteredJoin.WEIGHT + " AS weight FROM " + source + " AS c";
    }

    /** An empty output table with the view's column types and a weight column. */
    void prepareOutput(Connection connection) {
        if (outputColumns == null) {
            outputColumns = Sql.columnDefinitions(connection, "SELECT * FROM " + relation) + ", " + FilteredJoin.WEIGHT + " INTEGER";
        }
        Sql.update(connection, "CREATE OR REPLACE TEMP TABLE " + OUTPUT + " (" + outputColumns + ")");
    }

    /** Applies the output delta; returns how many view rows were deleted plus inserted. */
    long apply(Connection connection) {
        String w = FilteredJoin.WEIGHT;
        String list = columns.stream().map(SqlText::identifier).collect(Collectors.joining(", "));
        String netList = columns.stream().map(c -> "n." + SqlText.identifier(c)).collect(Collectors.joining(", "));
        Sql.update(connection, "CREATE OR REPLACE TEMP TABLE " + net + " AS SELECT " + list + ", sum(" + w + ") AS " + w
                + " FROM " + OUTPUT + " GROUP BY " + list + " HAVING sum(" + w + ") <> 0");
        // How many rows to delete, the most copies of one row to delete and to insert, and per column whether a
        // deleted row has NULL there.
        String shapeSql = "SELECT concat_ws(',', CAST(coalesce(sum(-" + w + ") FILTER (WHERE " + w + " < 0), 0) AS BIGINT), "
                + "CAST(coalesce(max(" + w + "), 0) AS BIGINT), CAST(coalesce(-min(" + w + "), 0) AS BIGINT)"
                + columns.stream().map(c -> ", count(*) FILTER (WHERE " + w + " < 0 AND " + SqlText.identifier(c) + " IS NULL)")
                        .collect(Collectors.joining()) + ") FROM " + net;
        String[] shape = Sql.strings(connection, shapeSql).get(0).split(",");
        long expectedDeletes = Long.parseLong(shape[0]);
        long mostCopies = Long.parseLong(shape[1]);
        long mostDeletedCopies = Long.parseLong(shape[2]);
        long deleted = 0;
        if (expectedDeletes > 0) {
            // Plain equality where no deleted row has a NULL: DuckDB then pushes the deleted rows' value ranges into the
            // scan of the view table, which skips the row groups that cannot match.
            List<String> match = new ArrayList<>();
            for (int i = 0; i < columns.size(); i++) {
                String column = SqlText.identifier(columns.get(i));
                match.add("v." + column + (Long.parseLong(shape[i + 3]) == 0 ? " = n." : " IS NOT DISTINCT FROM n.") + column);
            }
            String matches = relation + " AS v JOIN " + net + " AS n ON " + String.join(" AND ", match) + " WHERE n." + w + " < 0";
            // One copy each: any matching row will do, which a grouping finds faster than numbering the copies.
            String doomed = mostDeletedCopies == 1 ? "SELECT min(v.rowid) FROM " + matches + " GROUP BY n.rowid"
                    : "SELECT r FROM (SELECT v.rowid AS r, row_number() OVER (PARTITION BY n.rowid) AS copy, -n." + w
                            + " AS wanted FROM " + matches + ") WHERE copy <= wanted";
            deleted = Sql.update(connection, "DELETE FROM " + relation + " WHERE rowid IN (" + doomed + ")");
            if (deleted != expectedDeletes) {
                throw new MallardException(ErrorCode.USER_VIEW_DIVERGED, "materialized view " + view + " should lose "
                        + expectedDeletes + " rows in this sync but its table holds only " + deleted
                        + " of them: the table was written directly; run REFRESH MATERIALIZED VIEW " + view);
            }
        }
        long inserted = 0;
        if (mostCopies > 0) {
            inserted = Sql.update(connection, "INSERT INTO " + relation + " SELECT " + netList + " FROM " + net + " AS n WHERE n."
                    + w + " > 0");
        }
        if (mostCopies > 1) {
            // A row gained more than one copy: the extra copies, one per number below its weight.
            inserted += Sql.update(connection, "INSERT INTO " + relation + " SELECT " + netList + " FROM " + net + " AS n, "
                    + "range(CAST(n." + w + " AS BIGINT) - 1) WHERE n." + w + " > 1");
        }
        return deleted + inserted;
    }

    /**
     * Inserts the output rows into a view table that holds none of them yet (a REFRESH after emptying it): each
     * row as many times as its weight, with no consolidation and nothing to delete. Returns the rows inserted.
     */
    long fill(Connection connection) {
        String w = FilteredJoin.WEIGHT;
        String outputList = columns.stream().map(c -> "o." + SqlText.identifier(c)).collect(Collectors.joining(", "));
        long inserted = Sql.update(connection, "INSERT INTO " + relation + " SELECT " + outputList + " FROM " + OUTPUT + " AS o WHERE o."
                + w + " > 0");
        // Rows of more than one copy (EXCEPT ALL, INTERSECT ALL): the extra copies, one per number below the weight.
        return inserted + Sql.update(connection, "INSERT INTO " + relation + " SELECT " + outputList + " FROM " + OUTPUT + " AS o, "
                + "range(CAST(o." + w + " AS BIGINT) - 1) WHERE o." + w + " > 1");
    }

    void dropChanges(Connection connection) {
        Sql.update(connection, "DROP TABLE IF EXISTS " + net);
    }

    void dropScratch(Connection connection) {
        Sql.update(connection, "DROP TABLE IF EXISTS " + OUTPUT);
        Sql.update(connection, "DROP TABLE IF EXISTS " + net);
    }
}
