package dev.mallard.views;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.sql.Connection;
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
    private static final String NET = "mallard_net";

    private final String view;
    private final String relation;
    private final List<String> columns;
    /** The output table's column definitions, read once: a view's columns never change. */
    private String outputColumns;

    ViewTable(String view, List<String> columns) {
        this.view = view;
        this.relation = Sql.quote(view);
        this.columns = List.copyOf(columns);
    }

    String relation() {
        return relation;
    }

    /** An empty output table with the view's column types and a weight column. */
    void prepareOutput(Connection connection) {
        if (outputColumns == null) {
            outputColumns = Sql.columnDefinitions(connection, "SELECT * FROM " + relation) + ", " + Source.WEIGHT + " INTEGER";
        }
        Sql.update(connection, "CREATE OR REPLACE TEMP TABLE " + OUTPUT + " (" + outputColumns + ")");
    }

    /** Applies the output delta; returns how many view rows were deleted plus inserted. */
    long apply(Connection connection) {
        String w = Source.WEIGHT;
        String list = columns.stream().map(Sql::quote).collect(Collectors.joining(", "));
        String netList = columns.stream().map(c -> "n." + Sql.quote(c)).collect(Collectors.joining(", "));
        Sql.update(connection, "CREATE OR REPLACE TEMP TABLE " + NET + " AS SELECT " + list + ", sum(" + w + ") AS " + w
                + " FROM " + OUTPUT + " GROUP BY " + list + " HAVING sum(" + w + ") <> 0");
        String[] shape = Sql.strings(connection, "SELECT CAST(coalesce(sum(-" + w + ") FILTER (WHERE " + w + " < 0), 0) AS BIGINT) "
                + "|| ',' || CAST(coalesce(max(" + w + "), 0) AS BIGINT) FROM " + NET).get(0).split(",");
        long expectedDeletes = Long.parseLong(shape[0]);
        long mostCopies = Long.parseLong(shape[1]);
        long deleted = 0;
        if (expectedDeletes > 0) {
            String match = columns.stream()
                    .map(c -> "v." + Sql.quote(c) + " IS NOT DISTINCT FROM n." + Sql.quote(c))
                    .collect(Collectors.joining(" AND "));
            deleted = Sql.update(connection, "DELETE FROM " + relation + " WHERE rowid IN (SELECT r FROM (SELECT v.rowid AS r, "
                    + "row_number() OVER (PARTITION BY n.rowid) AS copy, -n." + w + " AS wanted FROM "
                    + relation + " AS v JOIN " + NET + " AS n ON " + match + " WHERE n." + w + " < 0) "
                    + "WHERE copy <= wanted)");
            if (deleted != expectedDeletes) {
                throw new MallardException(ErrorCode.USER_VIEW_DIVERGED, "materialized view " + view + " should lose "
                        + expectedDeletes + " rows in this sync but its table holds only " + deleted
                        + " of them: the table was written directly; run REFRESH MATERIALIZED VIEW " + view);
            }
        }
        long inserted = 0;
        if (mostCopies > 0) {
            inserted = Sql.update(connection, "INSERT INTO " + relation + " SELECT " + netList + " FROM " + NET + " AS n WHERE n."
                    + w + " > 0");
        }
        if (mostCopies > 1) {
            // A row gained more than one copy: the extra copies, one per number below its weight.
            inserted += Sql.update(connection, "INSERT INTO " + relation + " SELECT " + netList + " FROM " + NET + " AS n, "
                    + "range(CAST(n." + w + " AS BIGINT) - 1) WHERE n." + w + " > 1");
        }
        return deleted + inserted;
    }

    void dropScratch(Connection connection) {
        Sql.update(connection, "DROP TABLE IF EXISTS " + OUTPUT);
        Sql.update(connection, "DROP TABLE IF EXISTS " + NET);
    }
}
