// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.sql.SqlText;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * GROUP BY (or a global aggregate) over the source. The state table holds one row per group: the key columns
 * {@code k_j}, the group's row count, and each slot's running sums and counts, so SUM, COUNT and AVG move by
 * the delta alone. MIN and MAX move by the delta unless a removed row's value reaches the group's old extreme
 * (a MIN's removed value at or below it): only then is the group recomputed from the base tables, restricted
 * to that group. The view's delta is the touched groups' old output rows with weight -1 and their new ones
 * with weight +1, both read from one table of the touched groups' old and new state.
 *
 * <p>SELECT DISTINCT and UNION (without ALL) are the same program with keys and no aggregate: a row's count
 * in the state is its multiplicity, and the view holds each row once while the count is positive.
 *
 * @param inputs the branches feeding the state; each gives the key columns {@code k_j} and then the aggregate
 *     arguments {@code a_i} (for the slots that have one), aliased
 * @param keyCount how many key columns, 0 for a global aggregate
 * @param outputs the view's columns in terms of the state columns
 * @param having the HAVING condition in terms of the state columns
 * @param copies how many copies of a group's output row the view holds, in terms of the state columns (EXCEPT ALL,
 *     INTERSECT ALL); empty for one copy
 */
record AggregateProgram(String view, List<Branch> inputs, int keyCount, List<AggregateSlot> slots, List<String> outputs,
        Optional<String> having, Optional<String> copies) implements DeltaProgram {
    static final String COUNT = "mallard_count";
    private static final String DELTA = "mallard_group_delta";
    /**
     * The touched groups (temporary, per connection, one per view): keys, new state columns, the old ones prefixed
     * with {@link #OLD}, and two flags. It stays until the view's next sync: a view applied in place reads its last
     * change from it.
     */
    private static final String TOUCHED = "mallard_touched$";
    private static final String OLD = "mallard_old_";
    private static final String MATCHED = "mallard_matched";
    private static final String RECOMPUTE = "mallard_recompute";
    private static final String ROWS = "mallard_rows";
    private static final String VALUES = "mallard_value_delta";

    AggregateProgram {
        requireNonNull(view, "view is null");
        inputs = List.copyOf(inputs);
        slots = List.copyOf(slots);
        outputs = List.copyOf(outputs);
        requireNonNull(having, "having is null");
        requireNonNull(copies, "copies is null");
    }

    AggregateProgram(String view, List<Branch> inputs, int keyCount, List<AggregateSlot> slots, List<String> outputs,
            Optional<String> having) {
        this(view, inputs, keyCount, slots, outputs, having, Optional.empty());
    }

    String stateTable() {
        return stateTable(view);
    }

    private String touched() {
        return touchedTable(view);
    }

    private static String touchedTable(String view) {
        return "temp.main." + SqlText.identifier(TOUCHED + view);
    }

    static String stateTable(String view) {
        return TableName.VIEWS_SCHEMA + "." + SqlText.identifier("state$" + view);
    }

    @Override
    public List<TableName> tables() {
        return Branch.tables(inputs);
    }

    @Override
    public void initialize(Connection connection) {
        Sql.update(connection, "CREATE OR REPLACE TABLE " + stateTable() + " AS " + grouped(Branch.current(inputs), true));
        for (AggregateSlot slot : distinctSlots()) {
            Sql.update(connection, "CREATE OR REPLACE TABLE " + valuesTable(slot) + " AS SELECT " + keysThen() + slot.argumentColumn()
                    + " AS v, count(*) AS c FROM (" + Branch.current(inputs) + ") AS src WHERE " + slot.argumentColumn()
                    + " IS NOT NULL GROUP BY " + keysThen() + slot.argumentColumn());
        }
        if (keyCount != 0) {
            Sql.update(connection, "DELETE FROM " + stateTable() + " WHERE " + COUNT + " = 0");
        }
        Sql.update(connection, "INSERT INTO " + ViewTable.OUTPUT + " " + outputRows(stateTable() + " AS g", "1"));
    }

    @Override
    public void maintain(Connection connection, Set<TableName> changed) {
        ScratchTables scratch = ScratchTables.replacedEachTime(connection);
        Optional<Boolean> nullKey = moveGroups(connection, scratch, changed);
        // The touched groups' rows leave the view as they were and come back as they are.
        Sql.update(connection, "INSERT INTO " + ViewTable.OUTPUT + " " + outputRows(oldGroups(), "-1") + "\nUNION ALL\n"
                + outputRows(touched() + " AS g", "1"));
        mergeState(scratch, nullKey);
    }

    /**
     * Whether the view can take its change in place ({@link #maintainInPlace}): it holds one row per visible group
     * (no EXCEPT ALL / INTERSECT ALL copies) and shows every group key as a column, so a group's row is found by its
     * keys. Then no consolidation of a Z-set is needed: a touched group's old row is deleted by key and its new one
     * inserted. A global aggregate's view holds at most its one row.
     */
    boolean appliesInPlace() {
        if (copies.isPresent()) {
            return false;
        }
        for (String key : keyColumns()) {
            if (!outputs.contains(key)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Moves the state by the deltas and writes the touched groups' rows straight into the view table: deletes each
     * touched group's old row found by its keys, inserts its new one. Returns the view rows deleted plus inserted.
     * Its statements have the same text at every sync: they run prepared, and the touched groups' table is kept
     * ({@code scratch}). Only for a view that {@link #appliesInPlace}.
     */
    long maintainInPlace(Connection connection, ScratchTables scratch, Set<TableName> changed, ViewTable table) {
        List<String> columns = table.columns();
        Optional<Boolean> nullKey = moveGroups(connection, scratch, changed);
        long deleted;
        if (keyCount == 0) {
            deleted = scratch.update("DELETE FROM " + table.relation());
        } else {
            // Plain equality lets DuckDB skip the view's row groups that cannot hold a touched key; groups with a NULL key
            // (rare) take a second, null-safe join whose build side is otherwise empty, so it reads nothing.
            List<String> equal = new ArrayList<>();
            List<String> nullSafe = new ArrayList<>();
            List<String> someNull = new ArrayList<>();
            for (int j = 0; j < keyCount; j++) {
                String column = "v." + SqlText.identifier(columns.get(outputs.indexOf("k" + j)));
                equal.add(column + " = o.k" + j);
                nullSafe.add(column + " IS NOT DISTINCT FROM o.k" + j);
                someNull.add("k" + j + " IS NULL");
            }
            String old = "SELECT " + String.join(", ", keyColumns()) + " FROM " + oldGroups() + " WHERE " + visible();
            String view = table.relation() + " AS v";
            deleted = scratch.update("DELETE FROM " + table.relation() + " WHERE rowid IN (SELECT v.rowid FROM " + view
                    + " JOIN (" + old + ") AS o ON " + String.join(" AND ", equal) + "\nUNION ALL\nSELECT v.rowid FROM " + view
                    + " JOIN (SELECT * FROM (" + old + ") AS n WHERE " + String.join(" OR ", someNull) + ") AS o ON "
                    + String.join(" AND ", nullSafe) + ")");
        }
        long inserted = scratch.update("INSERT INTO " + table.relation() + " SELECT " + String.join(", ", outputs)
                + " FROM " + touched() + " AS g WHERE " + visible());
        mergeState(scratch, nullKey);
        return deleted + inserted;
    }

    /**
     * Whether the view can be merged on read ({@link #mergedQuery}): it {@link #appliesInPlace}, keeps only sums and
     * counts (no MIN, MAX or DISTINCT aggregate, whose state a delta alone cannot move), and every branch reads base
     * tables of this database through inner joins and a WHERE clause only, so its pending change is the join terms
     * over the tables' delta logs.
     */
    boolean mergesOnRead() {
        if (!appliesInPlace() || slots.stream().anyMatch(s -> s.isExtreme() || s.distinct())) {
            return false;
        }
        for (Branch branch : inputs) {
            if (!branch.source().innerOnly() || branch.source().tables().stream().anyMatch(t -> !t.isHome())) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether every branch mentions one table once. Then a read groups only the pending rows; with a join, a table's
     * pending rows are joined with the other tables' current rows, a scan of each (DuckDB skips it while the pending
     * side is empty).
     */
    boolean readsOneMention() {
        return inputs.stream().allMatch(b -> b.source().occurrences().size() == 1);
    }

    /** Whether each input mentions the table at most once (a self-join mentions it twice). */
    boolean mentionsOnce(TableName table) {
        Optional<TableName> named = Optional.of(table);
        return inputs.stream().allMatch(b -> b.source().occurrences().stream().filter(o -> o.table().equals(named)).count() <= 1);
    }

    /**
     * The view's rows as a query over the state and the changes its tables' delta logs hold since the last
     * {@link #compact}: the pending changes grouped as a sync would group them, joined to the state by key (a full
     * join: a group may be only in one of them), summed, and the visible groups' outputs cast to the view's column
     * types. Reading it costs a scan of the state (one row per group) and the pending changes' join terms.
     */
    String mergedQuery(List<String> columns, List<String> types) {
        List<String> merged = new ArrayList<>();
        keyColumns().forEach(k -> merged.add("coalesce(s." + k + ", d." + k + ") AS " + k));
        for (String column : stateColumns().subList(keyCount, stateColumns().size())) {
            merged.add("coalesce(s." + column + ", 0) + coalesce(d." + column + ", 0) AS " + column);
        }
        String pending = grouped(Branch.delta(inputs, Set.copyOf(tables())), false);
        String from = keyCount == 0 ? stateTable() + " AS s, (" + pending + ") AS d"
                : stateTable() + " AS s FULL JOIN (" + pending + ") AS d ON " + match("s", "d");
        List<String> named = new ArrayList<>();
        for (int i = 0; i < columns.size(); i++) {
            named.add("CAST(" + outputs.get(i) + " AS " + types.get(i) + ") AS " + SqlText.identifier(columns.get(i)));
        }
        return "SELECT " + String.join(", ", named) + " FROM (SELECT " + String.join(", ", merged) + " FROM " + from
                + ") AS g WHERE " + visible();
    }

    /**
     * Folds the pending changes into the state, for a view merged on read: one MERGE of the grouped changes (one
     * UPDATE for a global aggregate); the caller clears the delta logs. Sums and counts move by the delta alone, so
     * unlike {@link #maintainInPlace} no touched-groups table is needed. Returns the state rows updated, inserted or
     * deleted: the groups the changes touched.
     */
    long compact(StatementCache statements, Set<TableName> changed) {
        String pending = grouped(Branch.delta(inputs, changed), false);
        List<String> moved = stateColumns().subList(keyCount, stateColumns().size());
        String sums = moved.stream().map(c -> c + " = g." + c + " + d." + c).collect(Collectors.joining(", "));
        if (keyCount == 0) {
            return statements.update("UPDATE " + stateTable() + " AS g SET " + sums + " FROM (" + pending + ") AS d");
        }
        return statements.update("MERGE INTO " + stateTable() + " AS g USING (" + pending + ") AS d ON (" + match("g", "d")
                + ") WHEN MATCHED AND g." + COUNT + " + d." + COUNT + " = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET " + sums
                + " WHEN NOT MATCHED AND d." + COUNT + " <> 0 THEN INSERT (" + String.join(", ", stateColumns()) + ") VALUES ("
                + stateColumns().stream().map(c -> "d." + c).collect(Collectors.joining(", ")) + ")");
    }

    /**
     * For a view merged on read, before {@link #compact}: keeps the change the pending rows make to the view, as
     * {@link #inPlaceChangesQuery} reads it (the touched groups' old and new state).
     */
    void keepChange(Connection connection, ScratchTables scratch, Set<TableName> changed) {
        moveGroups(connection, scratch, changed);
    }

    /** Forgets the change {@link #keepChange} kept, once a later compaction has made it stale. */
    void dropChange(Connection connection) {
        Sql.update(connection, "DROP TABLE IF EXISTS " + touched());
    }

    /**
     * The last change this connection applied in place to the view, consolidated, as {@code dbsp_changes} shows it;
     * empty when the view's touched groups are not kept (no in-place sync of it since it was built or refreshed).
     */
    Optional<String> inPlaceChangesQuery(Connection connection, List<String> columns) {
        if (!Sql.temporaryTableExists(connection, TOUCHED + view)) {
            return Optional.empty();
        }
        List<String> named = new ArrayList<>();
        for (int i = 0; i < columns.size(); i++) {
            named.add(outputs.get(i) + " AS " + SqlText.identifier(columns.get(i)));
        }
        String w = FilteredJoin.WEIGHT;
        String list = columns.stream().map(SqlText::identifier).collect(Collectors.joining(", "));
        String rows = "SELECT " + String.join(", ", named) + ", -1 AS " + w + " FROM " + oldGroups() + " WHERE " + visible()
                + "\nUNION ALL\nSELECT " + String.join(", ", named) + ", 1 AS " + w + " FROM " + touched() + " AS g WHERE " + visible();
        return Optional.of("SELECT " + list + ", CAST(sum(" + w + ") AS INTEGER) AS weight FROM (" + rows + ") AS c GROUP BY "
                + list + " HAVING sum(" + w + ") <> 0");
    }

    /** Groups the deltas, joins them with the state into the touched groups' table, recomputes extremes that need it. */
    /**
     * Builds the touched groups' table (old and new state of each group the delta touches), recomputing extremes that
     * need it; returns whether a touched group has a NULL key when that was read on the way, else empty.
     */
    private Optional<Boolean> moveGroups(Connection connection, ScratchTables scratch, Set<TableName> changed) {
        String rows = Branch.delta(inputs, changed);
        String groups = grouped(rows, false);
        if (!distinctSlots().isEmpty()) {
            // The distinct values' tables read the same weighted rows as the group state.
            Sql.update(connection, "CREATE OR REPLACE TEMP TABLE " + ROWS + " AS " + rows);
            Sql.update(connection, "CREATE OR REPLACE TEMP TABLE " + DELTA + " AS " + grouped("SELECT * FROM " + ROWS, false));
            for (AggregateSlot slot : distinctSlots()) {
                moveDistinct(connection, slot);
            }
            groups = "SELECT * FROM " + DELTA;
        }
        // One join of the group delta with the state gives every touched group's old and new state.
        String select;
        if (keyCount == 0) {
            select = "SELECT " + touchedColumns() + " FROM (" + groups + ") AS d, " + stateTable() + " AS g";
        } else {
            // Plain equality lets DuckDB skip the state's row groups that cannot hold a touched key (a state of a
            // million groups is otherwise read whole); groups with a NULL key take a null-safe join of their own.
            String join = " LEFT JOIN " + stateTable() + " AS g ON ";
            select = "WITH mallard_d AS MATERIALIZED (" + groups + ")\nSELECT " + touchedColumns() + " FROM (SELECT * FROM mallard_d WHERE NOT ("
                    + someKeyNull("mallard_d") + ")) AS d" + join + equal("g", "d") + "\nUNION ALL\nSELECT " + touchedColumns()
                    + " FROM (SELECT * FROM mallard_d WHERE " + someKeyNull("mallard_d") + ") AS d" + join + match("g", "d");
        }
        scratch.fill(touched(), select);
        return recomputeExtremes(scratch);
    }

    /** The touched groups that existed before, with their old state under the state's column names, aliased g. */
    private String oldGroups() {
        return "(SELECT " + oldState() + " FROM " + touched() + " WHERE " + MATCHED + ") AS g";
    }

    /** Writes the touched groups' new state into the state table. */
    /** Moves the state by the touched groups; {@code nullKey}: whether one has a NULL key, if already read. */
    private void mergeState(ScratchTables scratch, Optional<Boolean> nullKey) {
        if (keyCount == 0) {
            scratch.update("UPDATE " + stateTable() + " AS g SET " + assigned() + " FROM " + touched() + " AS t");
        } else {
            // As for the touched groups: plain equality for the keys without NULLs, a second MERGE only when a touched
            // group has a NULL key.
            String actions = " WHEN MATCHED AND t." + COUNT + " = 0 THEN DELETE "
                    + "WHEN MATCHED THEN UPDATE SET " + assigned() + " "
                    + "WHEN NOT MATCHED AND t." + COUNT + " <> 0 THEN INSERT (" + String.join(", ", stateColumns())
                    + ") VALUES (" + stateColumns().stream().map(c -> "t." + c).collect(Collectors.joining(", ")) + ")";
            String merge = "MERGE INTO " + stateTable() + " AS g USING (SELECT * FROM " + touched() + " AS t WHERE ";
            scratch.update(merge + "NOT (" + someKeyNull("t") + ")) AS t ON (" + equal("g", "t") + ")" + actions);
            if (nullKey.orElseGet(() -> Long.parseLong(scratch.first("SELECT count(*) FROM " + touched() + " AS t WHERE " + someKeyNull("t"))) > 0)) {
                scratch.update(merge + someKeyNull("t") + ") AS t ON (" + match("g", "t") + ")" + actions);
            }
        }
    }

    @Override
    public void dropState(Connection connection) {
        dropState(connection, view);
    }

    /** Drops the view's state tables, whatever program made them. */
    static void dropState(Connection connection, String view) {
        Sql.update(connection, "DROP TABLE IF EXISTS " + stateTable(view));
        Sql.update(connection, "DROP TABLE IF EXISTS " + touchedTable(view));
        for (String table : Sql.strings(connection, "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() "
                + "AND schema_name = ? AND starts_with(lower(table_name), lower(?))", TableName.VIEWS_SCHEMA, "state$" + view + "$")) {
            Sql.update(connection, "DROP TABLE IF EXISTS " + TableName.VIEWS_SCHEMA + "." + SqlText.identifier(table));
        }
    }

    private List<AggregateSlot> distinctSlots() {
        return slots.stream().filter(AggregateSlot::distinct).toList();
    }

    /** A DISTINCT slot's values: per group and non-NULL value, how many rows carry it. */
    private String valuesTable(AggregateSlot slot) {
        return TableName.VIEWS_SCHEMA + "." + SqlText.identifier("state$" + view + "$distinct" + slot.index());
    }

    private String keysThen() {
        return keyCount == 0 ? "" : String.join(", ", keyColumns()) + ", ";
    }

    /**
     * Moves a DISTINCT slot: the values' copy counts move by the delta; a value whose count rises from 0
     * enters the group's distinct sum and count, one whose count falls to 0 leaves them. The group delta's
     * columns for the slot are set to those entries and exits, so the state's MERGE adds them as for any slot.
     */
    private void moveDistinct(Connection connection, AggregateSlot slot) {
        String a = slot.argumentColumn();
        String w = FilteredJoin.WEIGHT;
        String values = valuesTable(slot);
        Sql.update(connection, "CREATE OR REPLACE TEMP TABLE " + VALUES + " AS SELECT " + keysThen() + a + " AS v, sum(" + w
                + ") AS dc FROM " + ROWS + " WHERE " + a + " IS NOT NULL GROUP BY " + keysThen() + a + " HAVING sum(" + w + ") <> 0");
        String flips = "SELECT " + keyColumns().stream().map(k -> "x." + k + ", ").collect(Collectors.joining())
                + "x.v, CAST(coalesce(s.c, 0) + x.dc > 0 AS INTEGER) - CAST(coalesce(s.c, 0) > 0 AS INTEGER) AS flip FROM "
                + VALUES + " AS x LEFT JOIN " + values + " AS s ON " + match("s", "x") + " AND s.v = x.v";
        String sum = slot.keepsSum()
                ? ", coalesce(sum(v) FILTER (WHERE flip > 0), 0) - coalesce(sum(v) FILTER (WHERE flip < 0), 0) AS ds" : "";
        String moved = "SELECT " + keysThen() + "coalesce(sum(flip), 0) AS dn" + sum + " FROM (" + flips + ") AS f" + (keyCount == 0 ? "" : " GROUP BY " + String.join(", ", keyColumns()));
        String sets = slot.count() + " = f.dn" + (slot.keepsSum() ? ", " + slot.sum() + " = f.ds" : "");
        Sql.update(connection, "UPDATE " + DELTA + " AS d SET " + sets + " FROM (" + moved + ") AS f WHERE " + match("d", "f"));
        Sql.update(connection, "MERGE INTO " + values + " AS s USING " + VALUES + " AS x ON (" + match("s", "x") + " AND s.v = x.v) "
                + "WHEN MATCHED AND s.c + x.dc = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET c = s.c + x.dc "
                + "WHEN NOT MATCHED THEN INSERT VALUES (" + keyColumns().stream().map(k -> "x." + k + ", ").collect(Collectors.joining())
                + "x.v, x.dc)");
    }

    private List<String> keyColumns() {
        List<String> columns = new ArrayList<>();
        for (int j = 0; j < keyCount; j++) {
            columns.add("k" + j);
        }
        return columns;
    }

    /** The keys, the row count, then each slot's state columns, once each (slots of one argument share theirs). */
    private List<String> stateColumns() {
        Set<String> columns = new LinkedHashSet<>(keyColumns());
        columns.add(COUNT);
        for (AggregateSlot slot : slots) {
            if (slot.keepsSum()) {
                columns.add(slot.sum());
            }
            if (slot.keepsCount()) {
                columns.add(slot.count());
            }
            if (slot.isExtreme()) {
                columns.add(slot.extreme());
            }
        }
        return List.copyOf(columns);
    }

    /**
     * Groups weighted rows into per-group changes. Every weight is +1 or -1 (a trigger writes one of those
     * and a join term multiplies them), so a sum splits into the added and the removed arguments, which keeps
     * DuckDB's own result type for SUM (HUGEINT for integers, DECIMAL(38,s), DOUBLE).
     */
    private String grouped(String weightedRows, boolean initial) {
        String w = FilteredJoin.WEIGHT;
        List<String> columns = new ArrayList<>(keyColumns());
        columns.add("coalesce(sum(" + w + "), 0) AS " + COUNT);
        Set<String> shared = new HashSet<>();
        for (AggregateSlot slot : slots) {
            String a = slot.argumentColumn();
            if (!slot.distinct() && slot.keepsCount() && !shared.add(slot.count())) {
                // An earlier slot of the same argument keeps the count, and the sum if this one keeps a sum.
                if (slot.keepsSum() && shared.add(slot.sum())) {
                    columns.add("coalesce(sum(" + a + ") FILTER (WHERE " + w + " > 0), 0) - coalesce(sum(" + a
                            + ") FILTER (WHERE " + w + " < 0), 0) AS " + slot.sum());
                }
                continue;
            }
            if (slot.keepsSum()) {
                shared.add(slot.sum());
            }
            if (slot.distinct()) {
                // Built whole from the current rows (all weights +1); a delta's share is set by moveDistinct.
                if (slot.keepsSum()) {
                    columns.add((initial ? "coalesce(sum(DISTINCT " + a + "), 0)" : "coalesce(sum(" + a + ") FILTER (WHERE false), 0)")
                            + " AS " + slot.sum());
                }
                columns.add((initial ? "count(DISTINCT " + a + ")" : "CAST(0 AS BIGINT)") + " AS " + slot.count());
                continue;
            }
            if (slot.keepsSum()) {
                columns.add("coalesce(sum(" + a + ") FILTER (WHERE " + w + " > 0), 0) - coalesce(sum(" + a
                        + ") FILTER (WHERE " + w + " < 0), 0) AS " + slot.sum());
            }
            if (slot.keepsCount()) {
                columns.add("coalesce(sum(CASE WHEN " + a + " IS NOT NULL THEN " + w + " ELSE 0 END), 0) AS " + slot.count());
            }
            if (slot.isExtreme()) {
                columns.add(slot.extremeFunction() + "(" + a + ") FILTER (WHERE " + w + " > 0) AS " + slot.extreme());
                if (!initial) {
                    columns.add(slot.extremeFunction() + "(" + a + ") FILTER (WHERE " + w + " < 0) AS " + removed(slot));
                }
            }
        }
        String sql = "SELECT " + String.join(", ", columns) + " FROM (" + weightedRows + ") AS src";
        return keyCount == 0 ? sql : sql + " GROUP BY " + String.join(", ", keyColumns());
    }

    /** The extreme among a slot's removed values (MIN: the smallest), in the group delta. */
    private static String removed(AggregateSlot slot) {
        return "r" + slot.index();
    }

    /**
     * The touched groups' table: keys; each state column's new value (old + delta, or the delta's for a new group);
     * the old values; whether the group existed; whether an extreme must be recomputed. A MIN (MAX) moves by the
     * delta while every removed value lies above (below) the old extreme: a row holding the old extreme is then
     * still there, and the inserted values can only lower (raise) it. Otherwise its new value is NULL until
     * {@link #recomputeExtremes} reads it from the base tables.
     */
    private String touchedColumns() {
        List<String> columns = new ArrayList<>();
        keyColumns().forEach(k -> columns.add("d." + k));
        List<String> recompute = new ArrayList<>();
        String matched = "g." + COUNT + " IS NOT NULL";
        for (String column : stateColumns().subList(keyCount, stateColumns().size())) {
            Optional<AggregateSlot> extreme = slots.stream().filter(s -> s.isExtreme() && s.extreme().equals(column)).findFirst();
            if (extreme.isPresent()) {
                AggregateSlot slot = extreme.get();
                String reaches = "d." + removed(slot) + " IS NOT NULL AND (g." + column + " IS NULL OR d." + removed(slot)
                        + (slot.extremeFunction().equals("min") ? " <= " : " >= ") + "g." + column + ")";
                recompute.add(reaches);
                columns.add("CASE WHEN NOT (" + reaches + ") THEN " + slot.extremeCombiner() + "(g." + column + ", d." + column
                        + ") END AS " + column);
            } else {
                columns.add("CASE WHEN " + matched + " THEN g." + column + " + d." + column + " ELSE d." + column + " END AS " + column);
            }
        }
        for (String column : stateColumns().subList(keyCount, stateColumns().size())) {
            columns.add("g." + column + " AS " + OLD + column);
        }
        columns.add(matched + " AS " + MATCHED);
        columns.add((recompute.isEmpty() ? "false" : "coalesce(" + String.join(" OR ", recompute) + ", false)") + " AS " + RECOMPUTE);
        return String.join(", ", columns);
    }

    /** The touched groups' old state under the state's own column names. */
    private String oldState() {
        List<String> columns = new ArrayList<>(keyColumns());
        for (String column : stateColumns().subList(keyCount, stateColumns().size())) {
            columns.add(OLD + column + " AS " + column);
        }
        return String.join(", ", columns);
    }

    /** Sets the state's columns to the touched groups' new values ({@code t}). */
    private String assigned() {
        return stateColumns().subList(keyCount, stateColumns().size()).stream().map(c -> c + " = t." + c)
                .collect(Collectors.joining(", "));
    }

    /**
     * Recomputes, from the base tables, the extremes of the touched groups that need it; groups are only read
     * when some need it, and the base tables are then scanned once for those groups (there is no index to use).
     * The count of the groups that need it also counts those with a NULL key (one statement instead of two): returns
     * whether there are any, or empty when nothing was read.
     */
    private Optional<Boolean> recomputeExtremes(ScratchTables scratch) {
        List<AggregateSlot> extremes = slots.stream().filter(AggregateSlot::isExtreme).toList();
        if (extremes.isEmpty()) {
            return Optional.empty();
        }
        String[] counts = scratch.first("SELECT count(*) FILTER (WHERE t." + RECOMPUTE + ") || ',' || "
                + (keyCount == 0 ? "0" : "count(*) FILTER (WHERE " + someKeyNull("t") + ")") + " FROM " + touched() + " AS t")
                .split(",");
        Optional<Boolean> nullKey = keyCount == 0 ? Optional.empty() : Optional.of(Long.parseLong(counts[1]) > 0);
        if (Long.parseLong(counts[0]) == 0) {
            return nullKey;
        }
        List<String> columns = new ArrayList<>(keyColumns());
        extremes.forEach(s -> columns.add(s.extremeFunction() + "(" + s.argumentColumn() + ") AS " + s.extreme()));
        String needed = "EXISTS (SELECT 1 FROM " + touched() + " AS t WHERE t." + RECOMPUTE + " AND " + match("src", "t") + ")";
        String recomputed = "SELECT " + String.join(", ", columns) + " FROM (" + Branch.current(inputs)
                + ") AS src WHERE " + needed + (keyCount == 0 ? "" : " GROUP BY " + String.join(", ", keyColumns()));
        String sets = extremes.stream().map(s -> s.extreme() + " = r." + s.extreme()).collect(Collectors.joining(", "));
        scratch.update("UPDATE " + touched() + " AS t SET " + sets + " FROM (" + recomputed + ") AS r WHERE "
                + match("t", "r") + " AND t." + RECOMPUTE);
        return nullKey;
    }

    /** Whether a group's row is in the view, in terms of the state columns (EXCEPT ALL copies aside). */
    private String visible() {
        String visible = keyCount == 0 ? "TRUE" : COUNT + " > 0";
        return having.isPresent() ? visible + " AND (" + having.get() + ")" : visible;
    }

    /** The output rows of the groups in {@code from} that are visible, with a weight. */
    private String outputRows(String from, String weight) {
        String visible = visible();
        String weighted = weight;
        if (copies.isPresent()) {
            visible = visible + " AND (" + copies.get() + ") > 0";
            weighted = "CAST(" + weight + " * (" + copies.get() + ") AS INTEGER)";
        }
        return "SELECT " + String.join(", ", outputs) + ", " + weighted + " FROM " + from + " WHERE " + visible;
    }

    /** The keys of {@code left} and {@code right} are equal, none NULL (a condition DuckDB pushes into a scan). */
    private String equal(String left, String right) {
        List<String> terms = new ArrayList<>();
        for (String key : keyColumns()) {
            terms.add(left + "." + key + " = " + right + "." + key);
        }
        return String.join(" AND ", terms);
    }

    /** Some key of {@code alias} is NULL. */
    private String someKeyNull(String alias) {
        return keyColumns().stream().map(k -> alias + "." + k + " IS NULL").collect(Collectors.joining(" OR "));
    }

    private String match(String left, String right) {
        if (keyCount == 0) {
            return "TRUE";
        }
        List<String> terms = new ArrayList<>();
        for (String key : keyColumns()) {
            terms.add(left + "." + key + " IS NOT DISTINCT FROM " + right + "." + key);
        }
        return String.join(" AND ", terms);
    }
}
