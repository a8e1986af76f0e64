package dev.mallard.views;

import static java.util.Objects.requireNonNull;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The FROM and WHERE of a view: inner joins of base tables and a filter. It writes the Z-set delta of its
 * rows: with n table mentions, the change of a product of n inputs whose deltas are d_i and whose current
 * (post-change) contents are T_i is the sum over non-empty sets S of mentions of
 * (-1)^(|S|+1) x (the join with d_i for i in S and T_j elsewhere). Only mentions whose table changed take part.
 *
 * @param fromParts the FROM clause as text pieces and mention indexes (Integer), so each mention can read
 *     either its table or its table's delta log under the same alias
 */
record Source(List<Object> fromParts, List<TableOccurrence> occurrences, Optional<String> where) {
    static final String WEIGHT = "mallard_w";

    Source {
        fromParts = List.copyOf(fromParts);
        occurrences = List.copyOf(occurrences);
        requireNonNull(where, "where is null");
    }

    /** The distinct base tables, in first-mention order. */
    List<TableName> tables() {
        return occurrences.stream().map(TableOccurrence::table).distinct().toList();
    }

    /** The current rows: {@code SELECT columns, 1 AS mallard_w FROM tables WHERE filter}. */
    String current(List<String> columns) {
        return select(columns, "1", Set.of());
    }

    /** The delta of the rows since the last sync, given the tables whose logs hold changes. */
    String delta(List<String> columns, Set<TableName> changed) {
        List<Integer> moving = new ArrayList<>();
        for (int i = 0; i < occurrences.size(); i++) {
            if (changed.contains(occurrences.get(i).table())) {
                moving.add(i);
            }
        }
        List<String> terms = new ArrayList<>();
        for (int mask = 1; mask < (1 << moving.size()); mask++) {
            List<Integer> subset = new ArrayList<>();
            for (int bit = 0; bit < moving.size(); bit++) {
                if ((mask & (1 << bit)) != 0) {
                    subset.add(moving.get(bit));
                }
            }
            String weight = subset.stream()
                    .map(i -> Sql.quote(occurrences.get(i).alias()) + "." + WEIGHT)
                    .collect(Collectors.joining(" * "));
            if (subset.size() % 2 == 0) {
                weight = "-(" + weight + ")";
            }
            terms.add(select(columns, weight, Set.copyOf(subset)));
        }
        if (terms.isEmpty()) {
            // Keeps the statement valid (and typed) when none of the view's tables changed.
            return select(columns, "1", Set.of()) + " LIMIT 0";
        }
        return String.join("\nUNION ALL\n", terms);
    }

    private String select(List<String> columns, String weight, Set<Integer> fromDelta) {
        StringBuilder sql = new StringBuilder("SELECT ");
        for (String column : columns) {
            sql.append(column).append(", ");
        }
        sql.append("CAST(").append(weight).append(" AS INTEGER) AS ").append(WEIGHT).append("\nFROM ");
        for (Object part : fromParts) {
            if (part instanceof Integer index) {
                TableOccurrence occurrence = occurrences.get(index);
                String relation = fromDelta.contains(index) ? occurrence.table().deltaTable() : occurrence.table().sql();
                sql.append(relation).append(" AS ").append(Sql.quote(occurrence.alias()));
            } else {
                sql.append(part);
            }
        }
        where.ifPresent(filter -> sql.append("\nWHERE ").append(filter));
        return sql.toString();
    }
}
