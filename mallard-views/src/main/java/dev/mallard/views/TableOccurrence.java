// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.sql.SqlText;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * One mention of a relation in a view's FROM clause (a self-join mentions a table twice), with the alias the
 * view's expressions use for it and its columns in order. The relation is a base table, or a derived one: a
 * CTE or a subquery in FROM, inlined as the branches of a projection (a UNION ALL of SELECTs over joins), whose
 * current rows and delta are those of its branches, renamed to the columns the query gives it; or an aggregating
 * CTE or subquery, kept by a {@link GroupedRelation}.
 *
 * @param table the base table, or empty for a derived relation
 * @param derived the derived relation's branches, empty otherwise
 * @param grouped the aggregating relation, empty otherwise
 */
record TableOccurrence(String alias, List<String> columns, Optional<TableName> table, List<Branch> derived,
        Optional<GroupedRelation> grouped) {
    TableOccurrence {
        requireNonNull(alias, "alias is null");
        columns = List.copyOf(columns);
        requireNonNull(table, "table is null");
        derived = List.copyOf(derived);
        requireNonNull(grouped, "grouped is null");
        if ((table.isPresent() ? 1 : 0) + (derived.isEmpty() ? 0 : 1) + (grouped.isPresent() ? 1 : 0) != 1) {
            throw new IllegalArgumentException("an occurrence is a table, derived or grouped");
        }
    }

    static TableOccurrence table(TableName table, String alias, List<String> columns) {
        return new TableOccurrence(alias, columns, Optional.of(table), List.of(), Optional.empty());
    }

    static TableOccurrence derived(List<Branch> branches, String alias, List<String> columns) {
        return new TableOccurrence(alias, columns, Optional.empty(), branches, Optional.empty());
    }

    /** An aggregating CTE or subquery, kept by a {@link GroupedRelation}; its columns are the relation's names. */
    static TableOccurrence grouped(GroupedRelation relation, String alias) {
        return new TableOccurrence(alias, relation.names(), Optional.empty(), List.of(), Optional.of(relation));
    }

    List<TableName> tables() {
        if (grouped.isPresent()) {
            return grouped.get().source().tables();
        }
        return table.map(List::of).orElseGet(() -> Branch.tables(derived));
    }

    boolean changed(Set<TableName> changed) {
        return tables().stream().anyMatch(changed::contains);
    }

    /** The relation's current rows, as a FROM item without alias. */
    String now() {
        if (grouped.isPresent()) {
            return grouped.get().now();
        }
        return table.map(TableName::sql).orElseGet(() -> "(SELECT * EXCLUDE (" + FilteredJoin.WEIGHT + ") FROM ("
                + Branch.current(derived) + ") AS mallard_q(" + names() + "))");
    }

    /** The relation's changes since the last sync, with their weight column, as a FROM item without alias. */
    String delta(Set<TableName> changed) {
        if (grouped.isPresent()) {
            return grouped.get().delta();
        }
        return table.map(TableName::deltaTable).orElseGet(() -> "(SELECT * FROM (" + Branch.delta(derived, changed)
                + ") AS mallard_q(" + names() + "))");
    }

    private String names() {
        return columns.stream().map(SqlText::identifier).collect(Collectors.joining(", ")) + ", " + FilteredJoin.WEIGHT;
    }
}
