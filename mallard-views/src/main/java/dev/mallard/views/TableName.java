package dev.mallard.views;

import static java.util.Objects.requireNonNull;

/**
 * A base table a view reads, keyed by database, schema and table as DuckDB's catalog spells them, and the names
 * of what tracks it. The database is empty for the database the views live in (so a renamed file keeps its
 * views) and the ATTACH alias otherwise. A trigger can only write into its own database, so an attached table's
 * delta log lives in that database's {@code mallard_views} schema.
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
        return prefix() + Sql.quote(schema) + "." + Sql.quote(table);
    }

    /** The weighted delta log the triggers append to, in the table's own database. */
    String deltaTable() {
        return prefix() + VIEWS_SCHEMA + "." + Sql.quote("delta$" + schema + "$" + table);
    }

    /** The schema holding the delta log. */
    String viewsSchema() {
        return prefix() + VIEWS_SCHEMA;
    }

    String triggerName(String event) {
        return Sql.quote("mallard_capture$" + schema + "$" + table + "$" + event);
    }

    private String prefix() {
        return isHome() ? "" : Sql.quote(database) + ".";
    }

    @Override
    public String toString() {
        return (isHome() ? "" : database + ".") + schema + "." + table;
    }
}
