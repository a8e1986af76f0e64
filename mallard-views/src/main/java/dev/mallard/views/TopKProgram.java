// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.sql.SqlText;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * {@code ORDER BY ... LIMIT k [OFFSET m]} over a projection and filter. A state table keeps the sort keys of the
 * first k + m rows. A change can only move the view if one of its rows (inserted or deleted) ranks among the
 * first k + m when put beside them, ties included; otherwise the sync does nothing. When one does, the view
 * loses its rows (-1) and gains the query's (+1): DuckDB's top-N reads the source once.
 *
 * @param keys the ORDER BY expressions over the source
 * @param directions per key, {@code ASC}/{@code DESC} and {@code NULLS FIRST}/{@code LAST} as written (may be empty)
 */
record TopKProgram(String view, FilteredJoin source, List<String> outputs, List<String> keys, List<String> directions, long limit,
        long offset) implements DeltaProgram {
    private static final String CHANGED = "mallard_topk_changed";

    TopKProgram {
        requireNonNull(view, "view is null");
        requireNonNull(source, "source is null");
        outputs = List.copyOf(outputs);
        keys = List.copyOf(keys);
        directions = List.copyOf(directions);
        if (keys.size() != directions.size() || keys.isEmpty()) {
            throw new IllegalArgumentException("one direction per ORDER BY key");
        }
    }

    @Override
    public List<TableName> tables() {
        return source.tables();
    }

    @Override
    public void initialize(Connection connection) {
        Sql.update(connection, "CREATE OR REPLACE TABLE " + stateTable() + " AS " + leaders());
        Sql.update(connection, "INSERT INTO " + ViewTable.OUTPUT + " " + source.current(outputs) + "\nORDER BY "
                + order(keys) + "\nLIMIT " + limit + " OFFSET " + offset);
    }

    @Override
    public void maintain(Connection connection, Set<TableName> changed) {
        List<String> sortKeys = new ArrayList<>();
        for (int i = 0; i < keys.size(); i++) {
            sortKeys.add(keys.get(i) + " AS mallard_o" + i);
        }
        Sql.update(connection, "CREATE OR REPLACE TEMP TABLE " + CHANGED + " AS SELECT * EXCLUDE (" + FilteredJoin.WEIGHT + ") FROM ("
                + source.delta(sortKeys, changed) + ")");
        long entering = Sql.count(connection, "SELECT count(*) FROM (SELECT mallard_changed, rank() OVER (ORDER BY "
                + order(stateKeys()) + ") AS mallard_rank FROM (SELECT *, false AS mallard_changed FROM " + stateTable()
                + " UNION ALL SELECT *, true FROM " + CHANGED + ")) WHERE mallard_changed AND mallard_rank <= " + (limit + offset));
        if (entering == 0) {
            return;
        }
        Sql.update(connection, "INSERT INTO " + ViewTable.OUTPUT + " SELECT *, -1 FROM " + SqlText.identifier(view));
        initialize(connection);
    }

    @Override
    public void dropState(Connection connection) {
        Sql.update(connection, "DROP TABLE IF EXISTS " + stateTable());
    }

    /** The sort keys of the first {@code limit + offset} rows. */
    private String leaders() {
        List<String> sortKeys = new ArrayList<>();
        for (int i = 0; i < keys.size(); i++) {
            sortKeys.add(keys.get(i) + " AS mallard_o" + i);
        }
        return "SELECT * EXCLUDE (" + FilteredJoin.WEIGHT + ") FROM (" + source.current(sortKeys) + "\nORDER BY " + order(keys)
                + "\nLIMIT " + (limit + offset) + ")";
    }

    private List<String> stateKeys() {
        List<String> columns = new ArrayList<>();
        for (int i = 0; i < keys.size(); i++) {
            columns.add("mallard_o" + i);
        }
        return columns;
    }

    private String order(List<String> expressions) {
        List<String> items = new ArrayList<>();
        for (int i = 0; i < expressions.size(); i++) {
            items.add(expressions.get(i) + directions.get(i));
        }
        return String.join(", ", items);
    }

    private String stateTable() {
        return AggregateProgram.stateTable(view);
    }
}
