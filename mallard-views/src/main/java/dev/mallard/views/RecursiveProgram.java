// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.sql.SqlText;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.IntFunction;
import java.util.stream.Collectors;

/**
 * {@code WITH RECURSIVE r AS (base UNION step) SELECT ... FROM r}: the set r is the least fixpoint of
 * {@code r = base ∪ step(r)}, kept in a state table (the closure), with every branch an inner join of tables
 * and each step reading r once (linear recursion), so every branch is monotone in every input.
 *
 * <p>A sync moves the closure by delete-and-rederive: it over-deletes the rows with a derivation that used a
 * deleted table row (and, round by round, the rows derived from those), removes them, then runs semi-naive
 * evaluation from what is left: the seeds are the over-deleted rows that still have a derivation, and the
 * rows derived with an inserted table row; each round applies the step to the last round's new rows only,
 * until a round adds nothing. Every row left after the over-delete keeps a derivation that uses no deleted
 * input, so the result is the fixpoint over the new tables. The view's delta is the outer SELECT over the
 * closure's change: rows added (+1) and rows removed (-1).
 *
 * @param closure the state table holding r's rows
 * @param columns r's column names
 * @param base the anchor's branches; their columns are r's columns
 * @param steps the recursive branches, each reading r through one mention of {@code closure}
 * @param result the view's SELECT over r alone (r read through {@code closure})
 * @param view the view's name, for the error of a recursion that does not end
 * @param limit how many rounds, and how long, one evaluation may take
 */
record RecursiveProgram(TableName closure, List<String> columns, List<Branch> base, List<Branch> steps, Branch result,
        String view, RecursionLimit limit) implements DeltaProgram {
    private static final String DELETED = "mallard_rec_deleted";
    private static final String FRONTIER = "mallard_rec_frontier";
    private static final String NEXT = "mallard_rec_next";
    private static final String ADDED = "mallard_rec_added";
    private static final String CHANGE = "mallard_rec_change";

    /** How a branch reads one of its tables. */
    private enum Reading { NOW, DELETED_ROWS, INSERTED_ROWS, BEFORE }

    RecursiveProgram {
        requireNonNull(closure, "closure is null");
        columns = List.copyOf(columns);
        base = List.copyOf(base);
        steps = List.copyOf(steps);
        requireNonNull(result, "result is null");
        requireNonNull(view, "view is null");
        requireNonNull(limit, "limit is null");
        if (base.isEmpty() || steps.isEmpty()) {
            throw new IllegalArgumentException("a recursion needs a base and a step");
        }
    }

    @Override
    public List<TableName> tables() {
        Set<TableName> tables = new LinkedHashSet<>();
        for (Branch branch : all()) {
            tables.addAll(branch.source().tables());
        }
        tables.addAll(result.source().tables());
        tables.remove(closure);
        return List.copyOf(tables);
    }

    @Override
    public List<String> outputs() {
        return result.columns();
    }

    @Override
    public void initialize(Connection connection) {
        try (RecursionLimit.Run run = limit.start(view, connection)) {
            try {
                initialize(connection, run);
            } catch (RuntimeException e) {
                throw run.failed(e);
            }
        }
    }

    private void initialize(Connection connection, RecursionLimit.Run run) {
        String anchors = union(base.stream().map(b -> rows(b, closure.sql(), i -> Reading.NOW)).toList());
        Sql.createEmpty(connection, "CREATE OR REPLACE TABLE " + closure.sql(), anchors, "");
        run.update("CREATE OR REPLACE TEMP TABLE " + FRONTIER + " AS " + anchors);
        run.update("INSERT INTO " + closure.sql() + " SELECT * FROM " + FRONTIER);
        run.update("CREATE OR REPLACE TEMP TABLE " + ADDED + " AS SELECT * FROM " + FRONTIER);
        iterate(connection, run);
        run.update("INSERT INTO " + ViewTable.OUTPUT + " " + result.source().current(result.columns()));
    }

    @Override
    public void maintain(Connection connection, Set<TableName> changed) {
        try (RecursionLimit.Run run = limit.start(view, connection)) {
            try {
                maintain(connection, changed, run);
            } catch (RuntimeException e) {
                throw run.failed(e);
            }
        }
    }

    private void maintain(Connection connection, Set<TableName> changed, RecursionLimit.Run run) {
        String now = closure.sql();
        // Over-delete: rows with a derivation that used a deleted row, then what those rows derive.
        List<String> lost = new ArrayList<>();
        for (Branch branch : all()) {
            for (int i : changedMentions(branch, changed)) {
                int swapped = i;
                lost.add(rows(branch, now, j -> j == swapped ? Reading.DELETED_ROWS : before(branch, j, changed)));
            }
        }
        Sql.createEmpty(connection, "CREATE OR REPLACE TEMP TABLE " + DELETED, "SELECT * FROM " + now, "");
        if (!lost.isEmpty()) {
            run.update("INSERT INTO " + DELETED + " " + intersectClosure(lost));
        }
        run.update("CREATE OR REPLACE TEMP TABLE " + FRONTIER + " AS SELECT * FROM " + DELETED);
        while (run.count("SELECT count(*) FROM " + FRONTIER) > 0) {
            run.round();
            List<String> derived = steps.stream().map(s -> rows(s, FRONTIER, j -> before(s, j, changed))).toList();
            run.update("CREATE OR REPLACE TEMP TABLE " + NEXT + " AS SELECT * FROM (" + intersectClosure(derived)
                    + ") EXCEPT SELECT * FROM " + DELETED);
            run.update("INSERT INTO " + DELETED + " SELECT * FROM " + NEXT);
            run.update("CREATE OR REPLACE TEMP TABLE " + FRONTIER + " AS SELECT * FROM " + NEXT);
        }
        boolean overDeleted = run.count("SELECT count(*) FROM " + DELETED) > 0;
        if (overDeleted) {
            run.update("DELETE FROM " + now + " AS c WHERE EXISTS (SELECT 1 FROM " + DELETED + " AS d WHERE "
                    + match("c", "d") + ")");
        }
        // Seeds: the over-deleted rows that still have a derivation, and rows derived with an inserted row.
        List<String> seeds = new ArrayList<>();
        if (overDeleted) {
            List<String> everything = new ArrayList<>();
            base.forEach(b -> everything.add(rows(b, now, j -> Reading.NOW)));
            steps.forEach(s -> everything.add(rows(s, now, j -> Reading.NOW)));
            seeds.add("SELECT * FROM (" + union(everything) + ") INTERSECT SELECT * FROM " + DELETED);
        }
        for (Branch branch : all()) {
            for (int i : changedMentions(branch, changed)) {
                int swapped = i;
                seeds.add(rows(branch, now, j -> j == swapped ? Reading.INSERTED_ROWS : Reading.NOW));
            }
        }
        Sql.createEmpty(connection, "CREATE OR REPLACE TEMP TABLE " + ADDED, "SELECT * FROM " + now, "");
        Sql.createEmpty(connection, "CREATE OR REPLACE TEMP TABLE " + FRONTIER, "SELECT * FROM " + now, "");
        if (!seeds.isEmpty()) {
            run.update("INSERT INTO " + FRONTIER + " SELECT * FROM (" + union(seeds) + ") EXCEPT SELECT * FROM " + now);
            run.update("INSERT INTO " + now + " SELECT * FROM " + FRONTIER);
            run.update("INSERT INTO " + ADDED + " SELECT * FROM " + FRONTIER);
        }
        iterate(connection, run);
        // The closure's change: a row both over-deleted and derived again did not move.
        run.update("CREATE OR REPLACE TEMP TABLE " + CHANGE + " AS SELECT *, 1 AS " + FilteredJoin.WEIGHT + " FROM ("
                + "SELECT * FROM " + ADDED + " EXCEPT SELECT * FROM " + DELETED + ") UNION ALL SELECT *, -1 FROM ("
                + "SELECT * FROM " + DELETED + " EXCEPT SELECT * FROM " + ADDED + ")");
        FilteredJoin outer = result.source();
        String alias = SqlText.identifier(outer.occurrences().get(0).alias());
        run.update("INSERT INTO " + ViewTable.OUTPUT + " " + outer.reading(result.columns(), alias + "." + FilteredJoin.WEIGHT,
                i -> CHANGE));
    }

    @Override
    public void dropState(Connection connection) {
        Sql.update(connection, "DROP TABLE IF EXISTS " + closure.sql());
    }

    /** Semi-naive rounds: the step over the last round's new rows, until a round derives nothing new. */
    private void iterate(Connection connection, RecursionLimit.Run run) {
        while (run.count("SELECT count(*) FROM " + FRONTIER) > 0) {
            run.round();
            List<String> derived = steps.stream().map(s -> rows(s, FRONTIER, j -> Reading.NOW)).toList();
            run.update("CREATE OR REPLACE TEMP TABLE " + NEXT + " AS SELECT * FROM (" + union(derived)
                    + ") EXCEPT SELECT * FROM " + closure.sql());
            run.update("INSERT INTO " + closure.sql() + " SELECT * FROM " + NEXT);
            run.update("INSERT INTO " + ADDED + " SELECT * FROM " + NEXT);
            run.update("CREATE OR REPLACE TEMP TABLE " + FRONTIER + " AS SELECT * FROM " + NEXT);
        }
    }

    private List<Branch> all() {
        List<Branch> all = new ArrayList<>(base);
        all.addAll(steps);
        return all;
    }

    /** The mentions of changed tables in a branch (not the closure). */
    private List<Integer> changedMentions(Branch branch, Set<TableName> changed) {
        List<Integer> mentions = new ArrayList<>();
        List<TableOccurrence> occurrences = branch.source().occurrences();
        for (int i = 0; i < occurrences.size(); i++) {
            if (!isClosure(occurrences.get(i)) && occurrences.get(i).changed(changed)) {
                mentions.add(i);
            }
        }
        return mentions;
    }

    /** A changed table read as it may have been before the change (its rows now and its deleted rows). */
    private Reading before(Branch branch, int mention, Set<TableName> changed) {
        return branch.source().occurrences().get(mention).changed(changed) ? Reading.BEFORE : Reading.NOW;
    }

    private boolean isClosure(TableOccurrence occurrence) {
        return occurrence.table().filter(closure::equals).isPresent();
    }

    /** A branch's distinct rows as r's columns, reading r from {@code r} and each table as {@code reading} says. */
    private String rows(Branch branch, String r, IntFunction<Reading> reading) {
        List<TableOccurrence> occurrences = branch.source().occurrences();
        IntFunction<String> relation = i -> {
            TableOccurrence occurrence = occurrences.get(i);
            if (isClosure(occurrence)) {
                return r;
            }
            TableName table = occurrence.table().orElseThrow();
            String list = occurrence.columns().stream().map(SqlText::identifier).collect(Collectors.joining(", "));
            String logged = "SELECT " + list + " FROM " + table.deltaTable() + " WHERE " + FilteredJoin.WEIGHT;
            return switch (reading.apply(i)) {
                case NOW -> table.sql();
                case DELETED_ROWS -> "(" + logged + " < 0)";
                // A row inserted and deleted again in the same batch is in the log but not in the table.
                case INSERTED_ROWS -> "(" + logged + " > 0 INTERSECT SELECT " + list + " FROM " + table.sql() + ")";
                case BEFORE -> "(SELECT " + list + " FROM " + table.sql() + " UNION ALL " + logged + " < 0)";
            };
        };
        List<String> named = new ArrayList<>();
        for (int j = 0; j < columns.size(); j++) {
            named.add(branch.columns().get(j) + " AS " + SqlText.identifier(columns.get(j)));
        }
        return "SELECT DISTINCT * EXCLUDE (" + FilteredJoin.WEIGHT + ") FROM (" + branch.source().reading(named, "1", relation) + ")";
    }

    /** The union of derivations restricted to rows the closure holds. */
    private String intersectClosure(List<String> derivations) {
        return "SELECT * FROM (" + union(derivations) + ") INTERSECT SELECT * FROM " + closure.sql();
    }

    private static String union(List<String> parts) {
        return parts.stream().map(p -> "(" + p + ")").collect(Collectors.joining(" UNION "));
    }

    private String match(String left, String right) {
        return columns.stream().map(c -> left + "." + SqlText.identifier(c) + " IS NOT DISTINCT FROM " + right + "." + SqlText.identifier(c))
                .collect(Collectors.joining(" AND "));
    }
}
