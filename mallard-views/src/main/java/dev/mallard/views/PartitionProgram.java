// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.sql.SqlText;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Window functions and scalar subqueries, kept in the view's SQL as written, so DuckDB evaluates them with its
 * own semantics (NULL for an empty subquery, 0 for COUNT, an error for a subquery of more than one row). The
 * rows are split into partitions that depend on nothing outside themselves: the rows sharing the keys every
 * window partitions by and every correlated subquery is correlated on. A sync recomputes only the partitions
 * a change touches: the view loses their old rows (-1) and gains them recomputed (+1). Old rows are read from
 * a state table that holds each view row with its partition keys.
 *
 * <p>Without windows and correlated subqueries ({@code partition} empty) every row depends on its source row
 * alone, and the view moves by the source's delta. An uncorrelated subquery's value is kept in a second state
 * table: a change to the tables it reads that leaves the value as it was touches nothing; one that moves it
 * recomputes the view. So does a change to the tables of an IN or EXISTS condition when the view has
 * partitions.
 *
 * @param partition the partition keys over the source's rows; empty when rows are independent, an empty list
 *     when the whole view is one partition
 * @param feeds the relations whose changes touch partitions, and the keys of the partitions a changed row touches
 * @param scalars the uncorrelated scalar subqueries
 */
record PartitionProgram(String view, FilteredJoin source, List<String> outputs, Optional<String> qualify,
        Optional<List<String>> partition, List<Feed> feeds, List<Scalar> scalars) implements DeltaProgram {
    private static final String TOUCHED = "mallard_touched";

    /** A relation whose changed rows touch the partitions with their {@code keys}. */
    record Feed(FilteredJoin source, List<String> keys) {
        Feed {
            requireNonNull(source, "source is null");
            keys = List.copyOf(keys);
        }
    }

    /** An uncorrelated scalar subquery, as DuckDB prints it, and the tables it reads. */
    record Scalar(String sql, List<TableName> tables) {
        Scalar {
            requireNonNull(sql, "sql is null");
            tables = List.copyOf(tables);
        }
    }

    PartitionProgram {
        requireNonNull(view, "view is null");
        requireNonNull(source, "source is null");
        outputs = List.copyOf(outputs);
        requireNonNull(qualify, "qualify is null");
        partition = partition.map(List::copyOf);
        feeds = List.copyOf(feeds);
        scalars = List.copyOf(scalars);
    }

    @Override
    public List<TableName> tables() {
        Set<TableName> tables = new LinkedHashSet<>(source.tables());
        feeds.forEach(f -> tables.addAll(f.source().tables()));
        scalars.forEach(s -> tables.addAll(s.tables()));
        return List.copyOf(tables);
    }

    @Override
    public void initialize(Connection connection) {
        if (!scalars.isEmpty()) {
            Sql.update(connection, "CREATE OR REPLACE TABLE " + scalarTable() + " AS SELECT " + scalarValues());
        }
        if (keyed()) {
            Sql.update(connection, "CREATE OR REPLACE TABLE " + stateTable() + " AS SELECT * EXCLUDE (" + FilteredJoin.WEIGHT + ") FROM ("
                    + keyedRows(source) + ")");
            writeState(connection, "1", "TRUE");
        } else {
            Sql.update(connection, "INSERT INTO " + ViewTable.OUTPUT + " " + rows(source, outputs));
        }
    }

    @Override
    public void maintain(Connection connection, Set<TableName> changed) {
        boolean whole = partition.isPresent() && partition.get().isEmpty() && rowTables().stream().anyMatch(changed::contains);
        boolean everything = scalarsMoved(connection, changed) || whole
                || keyed() && conditionTables().stream().anyMatch(changed::contains);
        if (everything) {
            recompute(connection);
            return;
        }
        if (partition.isEmpty()) {
            Set<TableName> moved = new LinkedHashSet<>(source.tables());
            moved.retainAll(changed);
            if (!moved.isEmpty()) {
                Sql.update(connection, "INSERT INTO " + ViewTable.OUTPUT + " " + source.delta(outputs, moved));
            }
            return;
        }
        List<String> touched = new ArrayList<>();
        for (Feed feed : feeds) {
            if (feed.source().tables().stream().anyMatch(changed::contains)) {
                touched.add("SELECT " + String.join(", ", keyColumns("")) + " FROM (" + feed.source().delta(aliased(feed.keys(), "mallard_k"), changed)
                        + ")");
            }
        }
        if (touched.isEmpty()) {
            return;
        }
        Sql.update(connection, "CREATE OR REPLACE TEMP TABLE " + TOUCHED + " AS SELECT DISTINCT * FROM ("
                + String.join(" UNION ALL ", touched) + ")");
        String inState = touchedBy(keyColumns("s."));
        writeState(connection, "-1", inState);
        Sql.update(connection, "DELETE FROM " + stateTable() + " AS s WHERE " + inState);
        Sql.update(connection, "INSERT INTO " + stateTable() + " SELECT * EXCLUDE (" + FilteredJoin.WEIGHT + ") FROM ("
                + keyedRows(source.restricted(touchedBy(partition.get().stream().map(k -> "(" + k + ")").toList())))
                + ")");
        writeState(connection, "1", inState);
    }

    @Override
    public void dropState(Connection connection) {
        AggregateProgram.dropState(connection, view);
    }

    private boolean keyed() {
        return partition.isPresent() && !partition.get().isEmpty();
    }

    /** The view's rows all leave and come back recomputed. */
    private void recompute(Connection connection) {
        if (keyed()) {
            writeState(connection, "-1", "TRUE");
            Sql.update(connection, "DELETE FROM " + stateTable());
            Sql.update(connection, "INSERT INTO " + stateTable() + " SELECT * EXCLUDE (" + FilteredJoin.WEIGHT + ") FROM ("
                    + keyedRows(source) + ")");
            writeState(connection, "1", "TRUE");
            return;
        }
        Sql.update(connection, "INSERT INTO " + ViewTable.OUTPUT + " SELECT *, -1 FROM " + SqlText.identifier(view));
        Sql.update(connection, "INSERT INTO " + ViewTable.OUTPUT + " " + rows(source, outputs));
    }

    /** Whether a changed table moved an uncorrelated subquery's value; keeps the new values. */
    private boolean scalarsMoved(Connection connection, Set<TableName> changed) {
        if (scalars.stream().noneMatch(s -> s.tables().stream().anyMatch(changed::contains))) {
            return false;
        }
        List<String> differs = new ArrayList<>();
        List<String> sets = new ArrayList<>();
        for (int i = 0; i < scalars.size(); i++) {
            differs.add("old.s" + i + " IS DISTINCT FROM new.s" + i);
            sets.add("s" + i + " = new.s" + i);
        }
        String now = "(SELECT " + scalarValues() + ") AS new";
        boolean moved = Sql.count(connection, "SELECT count(*) FROM " + scalarTable() + " AS old, " + now + " WHERE "
                + String.join(" OR ", differs)) > 0;
        if (moved) {
            Sql.update(connection, "UPDATE " + scalarTable() + " AS old SET " + String.join(", ", sets) + " FROM " + now);
        }
        return moved;
    }

    /** The tables the rows depend on besides the uncorrelated subqueries' (whose values are compared instead). */
    private Set<TableName> rowTables() {
        Set<TableName> tables = new LinkedHashSet<>(source.tables());
        feeds.forEach(f -> tables.addAll(f.source().tables()));
        return tables;
    }

    /** The tables of IN and EXISTS conditions: a change there flips rows of any partition. */
    private List<TableName> conditionTables() {
        List<TableName> tables = new ArrayList<>();
        source.requirements().forEach(r -> tables.addAll(r.inner().tables()));
        return tables;
    }

    private String scalarValues() {
        List<String> values = new ArrayList<>();
        for (int i = 0; i < scalars.size(); i++) {
            values.add(scalars.get(i).sql() + " AS s" + i);
        }
        return String.join(", ", values);
    }

    /** The view's rows of a source, windows evaluated and QUALIFY applied, weight 1. */
    private String rows(FilteredJoin rows, List<String> columns) {
        return rows.current(columns) + qualify.map(q -> "\nQUALIFY " + q).orElse("");
    }

    /** The rows with their partition keys first: the state table's columns. */
    private String keyedRows(FilteredJoin rows) {
        List<String> columns = aliased(partition.orElseThrow(), "mallard_k");
        columns.addAll(aliased(outputs, "mallard_o"));
        return rows(rows, columns);
    }

    /**
     * A condition that the keys (SQL expressions, in partition order) are those of a touched partition. The
     * alias is one a view's SQL does not use, so the keys' column references keep their meaning inside.
     */
    private String touchedBy(List<String> keys) {
        List<String> terms = new ArrayList<>();
        for (int i = 0; i < keys.size(); i++) {
            terms.add("mallard_t.mallard_k" + i + " IS NOT DISTINCT FROM " + keys.get(i));
        }
        return "EXISTS (SELECT 1 FROM " + TOUCHED + " AS mallard_t WHERE " + String.join(" AND ", terms) + ")";
    }

    /** Writes the state's rows that meet {@code filter} to the view's output with a weight. */
    private void writeState(Connection connection, String weight, String filter) {
        List<String> columns = new ArrayList<>();
        for (int j = 0; j < outputs.size(); j++) {
            columns.add("s.mallard_o" + j);
        }
        Sql.update(connection, "INSERT INTO " + ViewTable.OUTPUT + " SELECT " + String.join(", ", columns) + ", " + weight + " FROM " + stateTable()
                + " AS s WHERE " + filter);
    }

    private List<String> keyColumns(String prefix) {
        List<String> columns = new ArrayList<>();
        for (int i = 0; i < partition.orElseThrow().size(); i++) {
            columns.add(prefix + "mallard_k" + i);
        }
        return columns;
    }

    private static List<String> aliased(List<String> expressions, String prefix) {
        List<String> columns = new ArrayList<>();
        for (int i = 0; i < expressions.size(); i++) {
            columns.add(expressions.get(i) + " AS " + prefix + i);
        }
        return columns;
    }

    private String stateTable() {
        return AggregateProgram.stateTable(view);
    }

    private String scalarTable() {
        return TableName.VIEWS_SCHEMA + "." + SqlText.identifier("state$" + view + "$scalars");
    }
}
