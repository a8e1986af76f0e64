// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import dev.mallard.core.sql.SqlText;

import static java.util.Objects.requireNonNull;

/**
 * A base table a view reads, keyed by database, schema and table as DuckDB's catalog spells them, and the names
 * of what tracks it. The database is empty for the database the views live in (so a renamed file keeps its
 * views) and the ATTACH alias otherwise. A trigger can only write into its own database, and a transaction
 * can only write into one database, so an attached table's triggers append to a capture log in that database,
 * which each sync copies (reading it) into the delta log beside the views.
 */
record TableName(String database, String schema, String table) {
    static final String VIEWS_SCHEMA = "mallard_views";

    TableName {
        requireNonNull(database, "database is null");
        requireNonNull(schema, "schema is null");
        requireNonNull(table, "table is null");
    }

    /** A table of the database the views live in. */
    TableName(String schema, String table) {
        this("", schema, table);
    }

    boolean isHome() {
        return database.isEmpty();
    }

    String sql() {
        return prefix() + SqlText.identifier(schema) + "." + SqlText.identifier(table);
    }

    /**
     * The weighted delta log the syncs read and clear, in the database the views live in. For a table of that
     * database the triggers append to it; for an attached table it is filled from {@link #captureLog()}.
     */
    String deltaTable() {
        return VIEWS_SCHEMA + "." + SqlText.identifier("delta$" + (isHome() ? "" : database + "$") + schema + "$" + table);
    }

    /** Where the triggers append: the delta log, or for an attached table a log in its own database. */
    String captureLog() {
        return isHome() ? deltaTable() : viewsSchema() + "." + SqlText.identifier("capture$" + schema + "$" + table);
    }

    /** An attached table's capture-log rows already copied into the delta log, by id, until they are deleted there. */
    String consumedTable() {
        return VIEWS_SCHEMA + "." + SqlText.identifier("consumed$" + database + "$" + schema + "$" + table);
    }

    /** The {@code mallard_views} schema of the table's own database. */
    String viewsSchema() {
        return prefix() + VIEWS_SCHEMA;
    }

    String triggerName(String event) {
        return SqlText.identifier("mallard_capture$" + schema + "$" + table + "$" + event);
    }

    private String prefix() {
        return isHome() ? "" : SqlText.identifier(database) + ".";
    }

    @Override
    public String toString() {
        return (isHome() ? "" : database + ".") + schema + "." + table;
    }
}
