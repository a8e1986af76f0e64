package dev.mallard.views;

import java.sql.Connection;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The persistent catalog in the database itself: which views exist (name, query, creation order) and which
 * base tables carry capture triggers. Reopening the database file restores both.
 */
final class ViewRegistry {
    private static final String VIEWS = TableName.VIEWS_SCHEMA + ".views";
    private static final String TRACKED = TableName.VIEWS_SCHEMA + ".tracked_tables";
    private static final String GENERATION = TableName.VIEWS_SCHEMA + ".generation";

    record Entry(String name, String sql) {}

    private final Connection connection;

    ViewRegistry(Connection connection) {
        this.connection = connection;
    }

    void ensure() {
        Sql.update(connection, "CREATE SCHEMA IF NOT EXISTS " + TableName.VIEWS_SCHEMA);
        Sql.update(connection, "CREATE TABLE IF NOT EXISTS " + VIEWS
                + " (name VARCHAR NOT NULL, sql VARCHAR NOT NULL, position BIGINT NOT NULL, created_at TIMESTAMP)");
        Sql.update(connection, "CREATE TABLE IF NOT EXISTS " + TRACKED + " (schema_name VARCHAR NOT NULL, table_name VARCHAR NOT NULL)");
        Sql.update(connection, "CREATE TABLE IF NOT EXISTS " + GENERATION + " (value BIGINT NOT NULL)");
        Sql.update(connection, "INSERT INTO " + GENERATION + " SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM " + GENERATION + ")");
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
        for (String row : Sql.strings(connection, "SELECT name || chr(0) || sql FROM " + VIEWS + " ORDER BY position")) {
            String[] parts = row.split("\u0000", 2);
            entries.add(new Entry(parts[0], parts[1]));
        }
        return entries;
    }

    void add(String name, String sql) {
        Sql.update(connection, "INSERT INTO " + VIEWS + " SELECT " + Sql.literal(name) + ", " + Sql.literal(sql)
                + ", coalesce(max(position), 0) + 1, current_timestamp FROM " + VIEWS);
    }

    void remove(String name) {
        Sql.update(connection, "DELETE FROM " + VIEWS + " WHERE lower(name) = lower(" + Sql.literal(name) + ")");
    }

    Set<TableName> tracked() {
        Set<TableName> tables = new LinkedHashSet<>();
        for (String row : Sql.strings(connection, "SELECT schema_name || chr(0) || table_name FROM " + TRACKED)) {
            String[] parts = row.split("\u0000", 2);
            tables.add(new TableName(parts[0], parts[1]));
        }
        return tables;
    }

    void track(TableName table) {
        Sql.update(connection, "INSERT INTO " + TRACKED + " VALUES (" + Sql.literal(table.schema()) + ", "
                + Sql.literal(table.table()) + ")");
    }

    void untrack(TableName table) {
        Sql.update(connection, "DELETE FROM " + TRACKED + " WHERE schema_name = " + Sql.literal(table.schema())
                + " AND table_name = " + Sql.literal(table.table()));
    }
}
