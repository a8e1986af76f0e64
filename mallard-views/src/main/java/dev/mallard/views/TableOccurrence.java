package dev.mallard.views;

import static java.util.Objects.requireNonNull;

import java.util.List;

/**
 * One mention of a base table in a view's FROM clause (a self-join mentions a table twice), with the alias
 * the view's expressions use for it and the table's columns in order.
 */
record TableOccurrence(TableName table, String alias, List<String> columns) {
    TableOccurrence {
        requireNonNull(table, "table is null");
        requireNonNull(alias, "alias is null");
        columns = List.copyOf(columns);
    }
}
