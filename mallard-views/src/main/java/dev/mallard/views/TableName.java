package dev.mallard.views;

import static java.util.Objects.requireNonNull;

/** A base table a view reads, as DuckDB's catalog spells it, and the names of what tracks it. */
record TableName(String schema, String table) {
    static final String VIEWS_SCHEMA = "mallard_views";

    TableName {
        requireNonNull(schema, "schema is null");
        requireNonNull(table, "table is null");
    }

    String sql() {
        return Sql.quote(schema) + "." + Sql.quote(table);
    }

    /** The weighted delta log the triggers append to. */
    String deltaTable() {
        return VIEWS_SCHEMA + "." + Sql.quote("delta$" + schema + "$" + table);
    }

    String triggerName(String event) {
        return Sql.quote("mallard_capture$" + schema + "$" + table + "$" + event);
    }

    @Override
    public String toString() {
        return schema + "." + table;
    }
}
