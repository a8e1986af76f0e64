// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.sql.SqlText;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * An aggregating CTE or subquery in FROM ({@code GROUP BY}, aggregates, {@code HAVING}, {@code DISTINCT}) read by a
 * view. A state table keeps its rows with their group keys. Before the view's program runs, the groups a change
 * touches (the keys of its source's changed rows) are recomputed into a scratch table; the relation's current rows
 * are the state's untouched groups and the recomputed ones, its delta the recomputed rows (+1) and the touched
 * groups' rows in the state (-1). After the program ran, the recomputed groups replace the touched ones in the state.
 * The rows that leave are the very rows that entered before, so any aggregate DuckDB computes can be used.
 *
 * @param index this relation's number within its view, naming its tables
 * @param keys the grouping expressions over the source (empty: one group)
 * @param columns the SELECT list over the source, aggregates included
 * @param names the relation's column names
 */
record GroupedRelation(String view, int index, FilteredJoin source, List<String> keys, List<String> columns,
        Optional<String> having, List<String> names) {
    GroupedRelation {
        requireNonNull(view, "view is null");
        requireNonNull(source, "source is null");
        keys = List.copyOf(keys);
        columns = List.copyOf(columns);
        requireNonNull(having, "having is null");
        names = List.copyOf(names);
    }

    /** The current rows, as a FROM item without alias, valid while the view's program runs. */
    String now() {
        return "(SELECT " + nameList("s.") + " FROM " + state() + " AS s WHERE NOT " + touched("s") + " UNION ALL SELECT "
                + nameList("") + " FROM " + fresh() + ")";
    }

    /** The change since the last sync, with its weight column, as a FROM item without alias. */
    String delta() {
        return "(SELECT " + nameList("") + ", CAST(1 AS INTEGER) AS " + FilteredJoin.WEIGHT + " FROM " + fresh()
                + " UNION ALL SELECT " + nameList("s.") + ", CAST(-1 AS INTEGER) FROM " + state() + " AS s WHERE " + touched("s") + ")";
    }

    /** Builds the state from the tables and empty scratch tables (nothing touched). */
    void create(Connection connection) {
        Sql.update(connection, "CREATE OR REPLACE TABLE " + state() + " AS " + rows(source));
        prepare(connection, Set.of());
    }

    /** Recomputes the groups the changed tables touch, before the view's program reads the relation. */
    void prepare(Connection connection, Set<TableName> changed) {
        boolean moved = source.tables().stream().anyMatch(changed::contains);
        List<String> touchedKeys = new ArrayList<>();
        for (int i = 0; i < keys.size(); i++) {
            touchedKeys.add(keys.get(i) + " AS mallard_k" + i);
        }
        if (keys.isEmpty()) {
            touchedKeys.add("TRUE AS mallard_any");
        }
        Set<TableName> moving = moved ? changed : Set.of();
        Sql.update(connection, "CREATE OR REPLACE TEMP TABLE " + touchedTable() + " AS SELECT DISTINCT * EXCLUDE (" + FilteredJoin.WEIGHT
                + ") FROM (" + source.delta(touchedKeys, moving) + ")");
        List<String> restriction = new ArrayList<>();
        for (int i = 0; i < keys.size(); i++) {
            restriction.add("mallard_t.mallard_k" + i + " IS NOT DISTINCT FROM (" + keys.get(i) + ")");
        }
        String touchedRows = "EXISTS (SELECT 1 FROM " + touchedTable() + " AS mallard_t"
                + (restriction.isEmpty() ? "" : " WHERE " + String.join(" AND ", restriction)) + ")";
        // One group: a global aggregate has a row even over no rows, so the restriction applies to its result.
        String recomputed = keys.isEmpty() ? "SELECT * FROM (" + rows(source) + ") WHERE " + touchedRows
                : rows(source.restricted(touchedRows));
        Sql.update(connection, "CREATE OR REPLACE TEMP TABLE " + fresh() + " AS " + recomputed + (moved ? "" : " LIMIT 0"));
    }

    /** Replaces the touched groups in the state with their recomputed rows, after the view's program ran. */
    void commit(Connection connection) {
        Sql.update(connection, "DELETE FROM " + state() + " AS s WHERE " + touched("s"));
        Sql.update(connection, "INSERT INTO " + state() + " SELECT * FROM " + fresh());
    }

    void drop(Connection connection) {
        Sql.update(connection, "DROP TABLE IF EXISTS " + state());
    }

    /** The relation's rows over a source, with the group keys first. */
    private String rows(FilteredJoin rows) {
        List<String> selected = new ArrayList<>();
        for (int i = 0; i < keys.size(); i++) {
            selected.add(keys.get(i) + " AS mallard_k" + i);
        }
        for (int j = 0; j < columns.size(); j++) {
            selected.add(columns.get(j) + " AS " + SqlText.identifier(names.get(j)));
        }
        return "SELECT * EXCLUDE (" + FilteredJoin.WEIGHT + ") FROM (" + rows.current(selected)
                + (keys.isEmpty() ? "" : "\nGROUP BY " + String.join(", ", keys)) + having.map(h -> "\nHAVING " + h).orElse("") + ")";
    }

    private String touched(String alias) {
        List<String> terms = new ArrayList<>();
        for (int i = 0; i < keys.size(); i++) {
            terms.add("mallard_t.mallard_k" + i + " IS NOT DISTINCT FROM " + alias + ".mallard_k" + i);
        }
        return "EXISTS (SELECT 1 FROM " + touchedTable() + " AS mallard_t" + (terms.isEmpty() ? "" : " WHERE "
                + String.join(" AND ", terms)) + ")";
    }

    private String nameList(String prefix) {
        return names.stream().map(n -> prefix + SqlText.identifier(n)).collect(Collectors.joining(", "));
    }

    private String state() {
        return TableName.VIEWS_SCHEMA + "." + SqlText.identifier("state$" + view + "$cte" + index);
    }

    private String touchedTable() {
        return SqlText.identifier("mallard_cte_touched$" + view + "$" + index);
    }

    private String fresh() {
        return SqlText.identifier("mallard_cte_fresh$" + view + "$" + index);
    }
}
