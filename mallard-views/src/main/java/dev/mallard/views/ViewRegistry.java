// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import dev.mallard.core.sql.SqlText;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The persistent catalog in the database itself: which views exist (name, query, creation order) and which
 * base tables carry capture triggers, whether {@code dbsp_track} asked for them, and each one's fingerprint as
 * its applied deltas explain it. Reopening the database file restores all of it.
 */
final class ViewRegistry {
    private static final String VIEWS = TableName.VIEWS_SCHEMA + ".views";
    private static final String TRACKED = TableName.VIEWS_SCHEMA + ".tracked_tables";
    private static final String GENERATION = TableName.VIEWS_SCHEMA + ".generation";

    /**
     * The state layout views are built with now. 1: each aggregate call keeps state columns of its own; 2 (session 7):
     * SUM, AVG and COUNT of one argument share theirs. A view keeps the layout it was built with (its catalog row).
     */
    static final int LAYOUT = 2;

    record Entry(String name, String sql, int layout) {}

    private final Connection connection;

    ViewRegistry(Connection connection) {
        this.connection = connection;
    }

    void ensure() {
        Sql.update(connection, "CREATE SCHEMA IF NOT EXISTS " + TableName.VIEWS_SCHEMA);
        Sql.update(connection, "CREATE TABLE IF NOT EXISTS " + VIEWS
                + " (name VARCHAR NOT NULL, sql VARCHAR NOT NULL, position BIGINT NOT NULL, created_at TIMESTAMP)");
        Sql.update(connection, "ALTER TABLE " + VIEWS + " ADD COLUMN IF NOT EXISTS layout INTEGER DEFAULT 1");
        Sql.update(connection, "CREATE TABLE IF NOT EXISTS " + TRACKED + " (schema_name VARCHAR NOT NULL, table_name VARCHAR NOT NULL)");
        // Columns added since the first catalog: a file from before gets them on attach.
        Sql.update(connection, "ALTER TABLE " + TRACKED + " ADD COLUMN IF NOT EXISTS database_name VARCHAR DEFAULT ''");
        Sql.update(connection, "ALTER TABLE " + TRACKED + " ADD COLUMN IF NOT EXISTS explicit BOOLEAN DEFAULT false");
        Sql.update(connection, "ALTER TABLE " + TRACKED + " ADD COLUMN IF NOT EXISTS row_count BIGINT");
        Sql.update(connection, "ALTER TABLE " + TRACKED + " ADD COLUMN IF NOT EXISTS row_hash HUGEINT");
        Sql.update(connection, "CREATE TABLE IF NOT EXISTS " + GENERATION + " (value BIGINT NOT NULL)");
        Sql.update(connection, "INSERT INTO " + GENERATION + " (value) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM " + GENERATION + ")");
        Sql.update(connection, "ALTER TABLE " + GENERATION + " ADD COLUMN IF NOT EXISTS instance VARCHAR");
        Sql.update(connection, "UPDATE " + GENERATION + " SET instance = CAST(uuid() AS VARCHAR) WHERE instance IS NULL");
    }

    /** The catalog's instance id, made once per database: what its attachments in one JVM share a signal by. */
    String instance() {
        return Sql.strings(connection, "SELECT min(instance) FROM " + GENERATION).get(0);
    }

    /**
     * A number that changes with every create, replace and drop, so a {@link MaterializedViews} attached
     * elsewhere on the same database notices at its next sync that its compiled views are out of date.
     */
    long generation() {
        return Sql.count(connection, generationQuery());
    }

    /** The query behind {@link #generation()}, for a sync to read it together with the pending counts. */
    static String generationQuery() {
        return "SELECT value FROM " + GENERATION;
    }

    long bump() {
        Sql.update(connection, "UPDATE " + GENERATION + " SET value = value + 1");
        return generation();
    }

    List<Entry> views() {
        List<Entry> entries = new ArrayList<>();
        for (String row : Sql.strings(connection, "SELECT coalesce(layout, 1) || chr(0) || name || chr(0) || sql FROM " + VIEWS
                + " ORDER BY position")) {
            String[] parts = row.split("\u0000", 3);
            entries.add(new Entry(parts[1], parts[2], Integer.parseInt(parts[0])));
        }
        return entries;
    }

    /** When each view was created, in milliseconds since the epoch (0 when the catalog has no time), by name. */
    java.util.Map<String, Long> createdAt() {
        java.util.Map<String, Long> times = new java.util.HashMap<>();
        for (String row : Sql.strings(connection, "SELECT name || chr(0) || coalesce(epoch_ms(created_at), 0) FROM " + VIEWS)) {
            String[] parts = row.split("\u0000", 2);
            times.put(parts[0], Long.parseLong(parts[1]));
        }
        return times;
    }

    void add(String name, String sql) {
        Sql.update(connection, "INSERT INTO " + VIEWS + " (name, sql, position, created_at, layout) SELECT " + SqlText.literal(name) + ", "
                + SqlText.literal(sql) + ", coalesce(max(position), 0) + 1, current_timestamp, " + LAYOUT + " FROM " + VIEWS);
    }

    void remove(String name) {
        Sql.update(connection, "DELETE FROM " + VIEWS + " WHERE lower(name) = lower(" + SqlText.literal(name) + ")");
    }

    /** Tracked tables, explicitly ({@code dbsp_track}) or because a view reads them. */
    Set<TableName> tracked() {
        return tables("true");
    }

    /** Tables tracked by {@code dbsp_track}: they stay tracked when no view reads them. */
    Set<TableName> explicitlyTracked() {
        return tables("explicit");
    }

    private Set<TableName> tables(String condition) {
        Set<TableName> tables = new LinkedHashSet<>();
        for (String row : Sql.strings(connection, "SELECT database_name || chr(0) || schema_name || chr(0) || table_name FROM "
                + TRACKED + " WHERE " + condition)) {
            String[] parts = row.split("\u0000", 3);
            tables.add(new TableName(parts[0], parts[1], parts[2]));
        }
        return tables;
    }

    void track(TableName table, boolean explicit, Fingerprint fingerprint) {
        Sql.update(connection, "INSERT INTO " + TRACKED + " (database_name, schema_name, table_name, explicit, row_count, row_hash) "
                + "VALUES (" + SqlText.literal(table.database()) + ", " + SqlText.literal(table.schema()) + ", " + SqlText.literal(table.table())
                + ", " + explicit + ", " + fingerprint.rows() + ", " + hugeint(fingerprint) + ")");
    }

    /** Sets or clears the {@code dbsp_track} mark; without it the table stays tracked while a view reads it. */
    void explicit(TableName table, boolean explicit) {
        Sql.update(connection, "UPDATE " + TRACKED + " SET explicit = " + explicit + " WHERE " + matches(table));
    }

    void untrack(TableName table) {
        Sql.update(connection, "DELETE FROM " + TRACKED + " WHERE " + matches(table));
    }

    /** The table's fingerprint as its applied deltas explain it; empty if not known (a catalog from before). */
    Optional<Fingerprint> fingerprint(TableName table) {
        List<String> found = Sql.strings(connection, "SELECT row_count || ',' || row_hash FROM " + TRACKED + " WHERE "
                + matches(table) + " AND row_count IS NOT NULL AND row_hash IS NOT NULL");
        return found.isEmpty() ? Optional.empty() : Optional.of(Fingerprint.parse(found.get(0)));
    }

    void fingerprint(TableName table, Fingerprint fingerprint) {
        Sql.update(connection, "UPDATE " + TRACKED + " SET row_count = " + fingerprint.rows() + ", row_hash = "
                + hugeint(fingerprint) + " WHERE " + matches(table));
    }

    /** Adds a delta log's fingerprint, read before in this transaction, to the table's: the captured changes were applied. */
    static void advance(StatementCache statements, TableName table, Fingerprint delta) {
        statements.update("UPDATE " + TRACKED + " SET row_count = row_count + ?, row_hash = row_hash + CAST(? AS HUGEINT) WHERE "
                + matches(table), delta.rows(), delta.hash().toString());
    }

    /** Adds the delta log's fingerprint to the table's: the captured changes were applied. */
    static void advance(StatementCache statements, TableName table) {
        statements.update("UPDATE " + TRACKED + " SET row_count = row_count + d.delta_rows, row_hash = row_hash + d.delta_hash "
                + "FROM (" + Fingerprint.ofDeltaQuery(table) + ") AS d WHERE " + matches(table));
    }

    private static String hugeint(Fingerprint fingerprint) {
        return "CAST('" + fingerprint.hash() + "' AS HUGEINT)";
    }

    private static String matches(TableName table) {
        return TRACKED + ".database_name = " + SqlText.literal(table.database()) + " AND " + TRACKED + ".schema_name = "
                + SqlText.literal(table.schema()) + " AND " + TRACKED + ".table_name = " + SqlText.literal(table.table());
    }
}
