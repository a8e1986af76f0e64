// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static java.util.Objects.requireNonNull;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * One SELECT of a view (a view of several is a UNION): its source and the columns it contributes, as SQL over
 * the source's aliases. The rows of several branches are the UNION ALL of each branch's rows.
 */
record Branch(FilteredJoin source, List<String> columns) {
    Branch {
        requireNonNull(source, "source is null");
        columns = List.copyOf(columns);
    }

    static List<TableName> tables(List<Branch> branches) {
        Set<TableName> tables = new LinkedHashSet<>();
        branches.forEach(branch -> tables.addAll(branch.source().tables()));
        return List.copyOf(tables);
    }

    /** The branches' current rows with weight 1. */
    static String current(List<Branch> branches) {
        return branches.stream().map(b -> "(" + b.source().current(b.columns()) + ")")
                .collect(Collectors.joining("\nUNION ALL\n"));
    }

    /** The branches' weighted changes; a branch none of whose tables changed contributes nothing. */
    static String delta(List<Branch> branches, Set<TableName> changed) {
        List<String> parts = new ArrayList<>();
        for (Branch branch : branches) {
            if (branch.source().tables().stream().anyMatch(changed::contains)) {
                parts.add("(" + branch.source().delta(branch.columns(), changed) + ")");
            }
        }
        if (parts.isEmpty()) {
            Branch first = branches.get(0);
            parts.add("(" + first.source().delta(first.columns(), Set.of()) + ")");
        }
        return String.join("\nUNION ALL\n", parts);
    }
}
