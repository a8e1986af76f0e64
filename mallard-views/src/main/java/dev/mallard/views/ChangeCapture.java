// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import dev.mallard.core.sql.SqlText;
import java.sql.Connection;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Statement-level AFTER triggers that copy a base table's transition rows, with weight +1 (new) or -1 (old),
 * into the table's capture log. They run in the writer's transaction, so a rollback leaves no delta behind and
 * writers on any connection to the database (Mallard's or not) are captured. TRUNCATE fires the DELETE trigger.
 *
 * <p>For a table of the database the views live in, the capture log is the delta log the syncs read. A table
 * of an ATTACHed database is captured into a log in that database (a trigger writes only into its own
 * database), each row with an id; since a transaction writes into one database only, a sync copies the rows
 * it has not yet taken into the delta log and records their ids ({@link #collect}), and after it commits
 * {@link #collectGarbage} deletes the taken rows from the capture log in a transaction of that database.
 */
final class ChangeCapture {
    private static final String[] EVENTS = {"insert", "update", "delete"};
    /** What every capture trigger's name starts with. */
    static final String TRIGGER_PREFIX = "mallard_capture$";
    private static final String ID = "mallard_id";

    private ChangeCapture() {}

    /**
     * Creates the capture log and the triggers. The columns are named, not {@code *}, so a column added to the
     * table later does not break its writers (DuckDB refuses to rename or drop a column a trigger reads). For
     * an attached table this writes into its database, so it runs outside the views' transactions.
     */
    static void track(Connection connection, TableName table, List<String> columns) {
        String log = table.captureLog();
        String w = FilteredJoin.WEIGHT;
        String list = columns.stream().map(SqlText::identifier).collect(Collectors.joining(", "));
        String into = log;
        if (table.isHome()) {
            Sql.createEmpty(connection, "CREATE TABLE IF NOT EXISTS " + log, "SELECT " + list + " FROM " + table.sql(),
                    w + " INTEGER");
        } else {
            String sequence = table.viewsSchema() + ".capture_id";
            Sql.update(connection, "CREATE SCHEMA IF NOT EXISTS " + table.viewsSchema());
            Sql.update(connection, "CREATE SEQUENCE IF NOT EXISTS " + sequence);
            Sql.createEmpty(connection, "CREATE TABLE IF NOT EXISTS " + log, "SELECT " + list + " FROM " + table.sql(),
                    w + " INTEGER, " + ID + " BIGINT DEFAULT nextval(" + SqlText.literal(sequence) + ")");
            into = log + " (" + list + ", " + w + ")";
        }
        Sql.update(connection, "CREATE TRIGGER " + table.triggerName("insert") + " AFTER INSERT ON " + table.sql()
                + " REFERENCING NEW TABLE AS mallard_new FOR EACH STATEMENT INSERT INTO " + into
                + " SELECT " + list + ", 1 FROM mallard_new");
        Sql.update(connection, "CREATE TRIGGER " + table.triggerName("update") + " AFTER UPDATE ON " + table.sql()
                + " REFERENCING NEW TABLE AS mallard_new OLD TABLE AS mallard_old FOR EACH STATEMENT INSERT INTO " + into
                + " SELECT " + list + ", -1 FROM mallard_old UNION ALL SELECT " + list + ", 1 FROM mallard_new");
        Sql.update(connection, "CREATE TRIGGER " + table.triggerName("delete") + " AFTER DELETE ON " + table.sql()
                + " REFERENCING OLD TABLE AS mallard_old FOR EACH STATEMENT INSERT INTO " + into
                + " SELECT " + list + ", -1 FROM mallard_old");
    }

    /**
     * For an attached table, in the views' transaction: the delta log and the ids taken, where every row its
     * capture log holds now counts as taken (the view being built reads the table as of this transaction).
     */
    static void stage(Connection connection, TableName table) {
        Sql.createEmpty(connection, "CREATE TABLE IF NOT EXISTS " + table.deltaTable(), "SELECT * EXCLUDE (" + ID + ") FROM "
                + table.captureLog(), "");
        Sql.update(connection, "CREATE TABLE IF NOT EXISTS " + table.consumedTable() + " (id BIGINT)");
        Sql.update(connection, "INSERT INTO " + table.consumedTable() + " SELECT " + ID + " FROM " + table.captureLog());
    }

    /** For an attached table, in the views' transaction: drops its delta log and ids taken. */
    static void unstage(Connection connection, TableName table) {
        Sql.update(connection, "DROP TABLE IF EXISTS " + table.deltaTable());
        Sql.update(connection, "DROP TABLE IF EXISTS " + table.consumedTable());
    }

    /**
     * Drops the triggers (if the table still exists: dropping a table drops its triggers) and the capture log.
     * For an attached table this writes into its database, so it runs outside the views' transactions.
     */
    static void untrack(Connection connection, TableName table, boolean tableExists) {
        for (String event : tableExists ? EVENTS : new String[0]) {
            Sql.update(connection, "DROP TRIGGER IF EXISTS " + table.triggerName(event) + " ON " + table.sql());
        }
        Sql.update(connection, "DROP TABLE IF EXISTS " + table.captureLog());
    }

    /** An attached table's capture-log rows not yet taken, copied into its delta log and their ids recorded. */
    static void collect(Connection connection, TableName table) {
        String fresh = " FROM " + table.captureLog() + " WHERE " + ID + " NOT IN (SELECT id FROM " + table.consumedTable() + ")";
        Sql.update(connection, "INSERT INTO " + table.deltaTable() + " SELECT * EXCLUDE (" + ID + ")" + fresh);
        Sql.update(connection, "INSERT INTO " + table.consumedTable() + " SELECT " + ID + fresh);
    }

    /**
     * After the transaction that took them committed: deletes the taken rows from an attached table's capture
     * log (a transaction of its database), then forgets the ids that are gone (one of the views' database).
     */
    static void collectGarbage(Connection connection, TableName table) {
        Sql.update(connection, "DELETE FROM " + table.captureLog() + " WHERE " + ID + " IN (SELECT id FROM "
                + table.consumedTable() + ")");
        Sql.update(connection, "DELETE FROM " + table.consumedTable() + " WHERE id NOT IN (SELECT " + ID + " FROM "
                + table.captureLog() + ")");
    }

    /**
     * Creates the triggers again if any of them is missing (dropped by a raw connection); returns whether it did.
     * The changes written while they were missing are not in the log: the caller reconciles the table's views.
     */
    static boolean repair(Connection connection, TableName table) {
        long present = Sql.count(connection, "SELECT count(*) FROM duckdb_triggers() WHERE database_name = "
                + (table.isHome() ? "current_database()" : SqlText.literal(table.database())) + " AND schema_name = "
                + SqlText.literal(table.schema()) + " AND table_name = " + SqlText.literal(table.table()) + " AND trigger_name LIKE "
                + SqlText.literal("mallard_capture$%"));
        if (present == EVENTS.length) {
            return false;
        }
        for (String event : EVENTS) {
            Sql.update(connection, "DROP TRIGGER IF EXISTS " + table.triggerName(event) + " ON " + table.sql());
        }
        track(connection, table, capturedColumns(connection, table));
        return true;
    }

    /** Captured rows not yet applied (for an attached table, also those not yet copied into its delta log). */
    static long pending(Connection connection, TableName table) {
        long pending = Sql.count(connection, "SELECT count(*) FROM " + table.deltaTable());
        if (!table.isHome()) {
            pending += Sql.count(connection, "SELECT count(*) FROM " + table.captureLog() + " WHERE " + ID
                    + " NOT IN (SELECT id FROM " + table.consumedTable() + ")");
        }
        return pending;
    }

    /**
     * The captured changes were applied: adds them to the table's fingerprint and empties the log. {@code delta} is
     * the log's fingerprint when read earlier in this transaction with nothing written to the log since, else empty.
     */
    static void clear(StatementCache statements, TableName table, Optional<Fingerprint> delta) {
        if (delta.isPresent()) {
            ViewRegistry.advance(statements, table, delta.get());
        } else {
            ViewRegistry.advance(statements, table);
        }
        statements.update("DELETE FROM " + table.deltaTable());
    }

    /** The columns the triggers capture (the table's columns when it was tracked). */
    static List<String> capturedColumns(Connection connection, TableName table) {
        return Sql.strings(connection, "SELECT column_name FROM (DESCRIBE SELECT * EXCLUDE (" + FilteredJoin.WEIGHT + ") FROM "
                + table.deltaTable() + ")");
    }
}
