// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.sql.SqlText;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A projection view kept in the writer's own statement: for every table mention of every SELECT, AFTER triggers on
 * the table (beside the capture triggers) insert the rows the statement's new rows give into the view table and
 * delete one copy of each row its old rows gave (UPDATE: both). The other tables of a join are read as they are in
 * the writer's transaction, which is the join's delta for a statement that changes one table. A sync then has
 * nothing to move for the view: its tables' delta logs only feed the fingerprints (and other views), so their rows
 * wait like those of views merged on read.
 *
 * <p>Kept this way: a {@link ProjectionProgram} whose every SELECT reads base tables of the views' database through
 * inner joins and a WHERE clause, each table mentioned once (a self-join's delta needs the table before the
 * statement, which a trigger does not see), no table a materialized view, and no other view reading it (its table
 * has no capture triggers, so trigger writes never fire further triggers). A view of another shape, or one another
 * view comes to read, is moved by the syncs.
 *
 * <p>Measured before it was built (1M rows, 10% pass the filter, p50 of 100 single-row writes, DuckDB alone): the
 * INSERT with its trigger 0.93 ms against 0.56 ms bare, UPDATE 2.2 against 0.69, DELETE 1.8 against 0.56; the sync
 * of the same view after each write cost 8-9 ms (docs/benchmarks.md, "Session 9").
 *
 * @param view the view's name; {@code relation} its table, qualified with database and schema (a trigger runs in the
 *     writer's connection, whose current schema may differ)
 */
record ImmediateView(String view, String relation, List<Branch> branches, List<String> columns) {
    /** What every trigger of a view kept in the writer's statement is named after. */
    static final String TRIGGER_PREFIX = "mallard_view$";

    ImmediateView {
        requireNonNull(view, "view is null");
        requireNonNull(relation, "relation is null");
        branches = List.copyOf(branches);
        columns = List.copyOf(columns);
    }

    /** The program as a view kept in the writer's statement, when its shape allows it (see the class comment). */
    static Optional<ImmediateView> of(String view, String relation, DeltaProgram program, List<String> columns,
            java.util.function.Predicate<TableName> isViewTable) {
        if (!(program instanceof ProjectionProgram projection)) {
            return Optional.empty();
        }
        for (Branch branch : projection.branches()) {
            FilteredJoin source = branch.source();
            if (!source.innerOnly()) {
                return Optional.empty();
            }
            Set<TableName> seen = new HashSet<>();
            for (TableOccurrence occurrence : source.occurrences()) {
                TableName table = occurrence.table().orElseThrow();
                if (!table.isHome() || isViewTable.test(table) || !seen.add(table)) {
                    return Optional.empty();
                }
            }
        }
        return Optional.of(new ImmediateView(view, relation, projection.branches(), columns));
    }

    /** Creates the triggers, in the caller's transaction (the view's table already holds its rows). */
    void create(Connection connection) {
        String list = columns.stream().map(SqlText::identifier).collect(Collectors.joining(", "));
        for (int b = 0; b < branches.size(); b++) {
            Branch branch = branches.get(b);
            List<TableOccurrence> occurrences = branch.source().occurrences();
            for (int m = 0; m < occurrences.size(); m++) {
                TableName table = occurrences.get(m).table().orElseThrow();
                String inserted = rows(branch, m, "mallard_new");
                String insert = "INSERT INTO " + relation + " SELECT * FROM (" + inserted + ")";
                String delete = delete(rows(branch, m, "mallard_old"), list);
                String on = " ON " + table.sql() + " REFERENCING ";
                Sql.update(connection, "CREATE TRIGGER " + trigger(b, m, "insert") + " AFTER INSERT" + on
                        + "NEW TABLE AS mallard_new FOR EACH STATEMENT " + insert);
                Sql.update(connection, "CREATE TRIGGER " + trigger(b, m, "delete") + " AFTER DELETE" + on
                        + "OLD TABLE AS mallard_old FOR EACH STATEMENT " + delete);
                // An UPDATE is its old rows leaving and its new ones entering: two triggers, as a bag the order does not matter.
                Sql.update(connection, "CREATE TRIGGER " + trigger(b, m, "update_old") + " AFTER UPDATE" + on
                        + "OLD TABLE AS mallard_old FOR EACH STATEMENT " + delete);
                Sql.update(connection, "CREATE TRIGGER " + trigger(b, m, "update_new") + " AFTER UPDATE" + on
                        + "NEW TABLE AS mallard_new FOR EACH STATEMENT " + insert);
            }
        }
    }

    /** Drops the triggers of the tables that still exist (dropping a table drops its triggers). */
    void drop(Connection connection, java.util.function.Predicate<TableName> exists) {
        for (int b = 0; b < branches.size(); b++) {
            List<TableOccurrence> occurrences = branches.get(b).source().occurrences();
            for (int m = 0; m < occurrences.size(); m++) {
                TableName table = occurrences.get(m).table().orElseThrow();
                if (!exists.test(table)) {
                    continue;
                }
                for (String event : List.of("insert", "delete", "update_old", "update_new")) {
                    Sql.update(connection, "DROP TRIGGER IF EXISTS " + trigger(b, m, event) + " ON " + table.sql());
                }
            }
        }
    }

    /** The names of the triggers of the views kept in the writer's statement, in this database, lower case. */
    static Set<String> triggerNames(Connection connection) {
        return Set.copyOf(Sql.strings(connection, "SELECT lower(trigger_name) FROM duckdb_triggers() WHERE database_name = "
                + "current_database() AND starts_with(trigger_name, " + SqlText.literal(TRIGGER_PREFIX) + ")"));
    }

    /** Whether every trigger of this view is in {@code names} (from {@link #triggerNames}). */
    boolean triggersIn(Set<String> names) {
        return names.containsAll(triggerNames());
    }

    /** Whether some trigger of this view is in {@code names}: it was created kept in its writers' statements. */
    boolean anyTriggerIn(Set<String> names) {
        return triggerNames().stream().anyMatch(names::contains);
    }

    private List<String> triggerNames() {
        List<String> wanted = new ArrayList<>();
        for (int b = 0; b < branches.size(); b++) {
            for (int m = 0; m < branches.get(b).source().occurrences().size(); m++) {
                for (String event : List.of("insert", "delete", "update_old", "update_new")) {
                    wanted.add(name(b, m, event).toLowerCase(java.util.Locale.ROOT));
                }
            }
        }
        return wanted;
    }

    private String trigger(int branch, int mention, String event) {
        return SqlText.identifier(name(branch, mention, event));
    }

    private String name(int branch, int mention, String event) {
        return TRIGGER_PREFIX + view + "$" + branch + "$" + mention + "$" + event;
    }

    /** The SELECT's rows (the view's columns only) with mention {@code m} read from a transition table. */
    private String rows(Branch branch, int m, String transition) {
        String weighted = branch.source().reading(branch.columns(), "1", i -> i == m ? transition
                : branch.source().occurrences().get(i).now());
        return "SELECT * EXCLUDE (" + FilteredJoin.WEIGHT + ") FROM (" + weighted + ") AS mallard_r";
    }

    /**
     * Deletes one view row per old row: the old rows counted by value (NULLs equal), each matched with the view's
     * rows of equal value (null-safe), and as many of their row ids as it has copies.
     */
    private String delete(String old, String list) {
        List<String> equal = new ArrayList<>();
        List<String> nullSafe = new ArrayList<>();
        List<String> someNull = new ArrayList<>();
        for (String column : columns) {
            String c = SqlText.identifier(column);
            equal.add("v." + c + " = o." + c);
            nullSafe.add("v." + c + " IS NOT DISTINCT FROM o." + c);
            someNull.add("o." + c + " IS NULL");
        }
        String counted = "SELECT *, row_number() OVER () AS \"mallard$row\" FROM (SELECT *, count(*) AS \"mallard$copies\" FROM ("
                + old + ") AS mallard_o(" + list + ") GROUP BY ALL)";
        // Plain equality for the old rows without a NULL, as in ViewTable.apply (about 40% less CPU here for a 100k-row
        // join view than null-safe equality for all); a null-safe match only for those with one, usually none.
        String copies = "SELECT unnest(list(v.rowid)[1:any_value(o.\"mallard$copies\")]) FROM " + relation + " AS v JOIN ";
        return "DELETE FROM " + relation + " WHERE rowid IN (WITH mallard_old_rows AS MATERIALIZED (" + counted + ")\n"
                + copies + "(SELECT * FROM mallard_old_rows AS o WHERE NOT (" + String.join(" OR ", someNull) + ")) AS o ON "
                + String.join(" AND ", equal) + " GROUP BY o.\"mallard$row\"\nUNION ALL\n"
                + copies + "(SELECT * FROM mallard_old_rows AS o WHERE " + String.join(" OR ", someNull) + ") AS o ON "
                + String.join(" AND ", nullSafe) + " GROUP BY o.\"mallard$row\")";
    }
}
