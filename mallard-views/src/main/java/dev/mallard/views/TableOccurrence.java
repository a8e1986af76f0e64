package dev.mallard.views;

import static java.util.Objects.requireNonNull;

import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * One mention of a relation in a view's FROM clause (a self-join mentions a table twice), with the alias the
 * view's expressions use for it and its columns in order. The relation is a base table, or a derived one: a
 * CTE or a subquery in FROM, inlined as the branches of a projection (a UNION ALL of SELECTs over joins), whose
 * current rows and delta are those of its branches, renamed to the columns the query gives it.
 *
 * @param table the base table, or empty for a derived relation
 * @param derived the derived relation's branches, empty for a base table
 */
record TableOccurrence(String alias, List<String> columns, Optional<TableName> table, List<Branch> derived) {
    TableOccurrence {
        requireNonNull(alias, "alias is null");
        columns = List.copyOf(columns);
        requireNonNull(table, "table is null");
        derived = List.copyOf(derived);
        if (table.isPresent() == !derived.isEmpty()) {
            throw new IllegalArgumentException("an occurrence is either a table or derived");
        }
    }

    static TableOccurrence table(TableName table, String alias, List<String> columns) {
        return new TableOccurrence(alias, columns, Optional.of(table), List.of());
    }

    static TableOccurrence derived(List<Branch> branches, String alias, List<String> columns) {
        return new TableOccurrence(alias, columns, Optional.empty(), branches);
    }

    List<TableName> tables() {
        return table.map(List::of).orElseGet(() -> Branch.tables(derived));
    }

    boolean changed(Set<TableName> changed) {
        return tables().stream().anyMatch(changed::contains);
    }

    /** The relation's current rows, as a FROM item without alias. */
    String now() {
        return table.map(TableName::sql).orElseGet(() -> "(SELECT * EXCLUDE (" + Source.WEIGHT + ") FROM ("
                + Branch.current(derived) + ") AS mallard_q(" + names() + "))");
    }

    /** The relation's changes since the last sync, with their weight column, as a FROM item without alias. */
    String delta(Set<TableName> changed) {
        return table.map(TableName::deltaTable).orElseGet(() -> "(SELECT * FROM (" + Branch.delta(derived, changed)
                + ") AS mallard_q(" + names() + "))");
    }

    private String names() {
        return columns.stream().map(Sql::quote).collect(Collectors.joining(", ")) + ", " + Source.WEIGHT;
    }
}
