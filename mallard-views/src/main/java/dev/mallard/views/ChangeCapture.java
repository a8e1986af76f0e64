package dev.mallard.views;

import java.sql.Connection;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Statement-level AFTER triggers that copy a base table's transition rows, with weight +1 (new) or -1 (old),
 * into the table's delta log. They run in the writer's transaction, so a rollback leaves no delta behind and
 * writers on any connection to the database (Mallard's or not) are captured. TRUNCATE fires the DELETE trigger.
 */
final class ChangeCapture {
    private static final String[] EVENTS = {"insert", "update", "delete"};

    private ChangeCapture() {}

    /**
     * Creates the delta log and the triggers. The columns are named, not {@code *}, so a column added to the
     * table later does not break its writers (DuckDB refuses to rename or drop a column a trigger reads).
     */
    static void track(Connection connection, TableName table, List<String> columns) {
        String delta = table.deltaTable();
        String w = Source.WEIGHT;
        String list = columns.stream().map(Sql::quote).collect(Collectors.joining(", "));
        Sql.createEmpty(connection, "CREATE TABLE IF NOT EXISTS " + delta, "SELECT " + list + " FROM " + table.sql(),
                w + " INTEGER");
        Sql.update(connection, "CREATE TRIGGER " + table.triggerName("insert") + " AFTER INSERT ON " + table.sql()
                + " REFERENCING NEW TABLE AS mallard_new FOR EACH STATEMENT INSERT INTO " + delta
                + " SELECT " + list + ", 1 FROM mallard_new");
        Sql.update(connection, "CREATE TRIGGER " + table.triggerName("update") + " AFTER UPDATE ON " + table.sql()
                + " REFERENCING NEW TABLE AS mallard_new OLD TABLE AS mallard_old FOR EACH STATEMENT INSERT INTO " + delta
                + " SELECT " + list + ", -1 FROM mallard_old UNION ALL SELECT " + list + ", 1 FROM mallard_new");
        Sql.update(connection, "CREATE TRIGGER " + table.triggerName("delete") + " AFTER DELETE ON " + table.sql()
                + " REFERENCING OLD TABLE AS mallard_old FOR EACH STATEMENT INSERT INTO " + delta
                + " SELECT " + list + ", -1 FROM mallard_old");
    }

    /** Drops the triggers (if the table still exists: dropping a table drops its triggers) and the delta log. */
    static void untrack(Connection connection, TableName table, boolean tableExists) {
        for (String event : tableExists ? EVENTS : new String[0]) {
            Sql.update(connection, "DROP TRIGGER IF EXISTS " + table.triggerName(event) + " ON " + table.sql());
        }
        Sql.update(connection, "DROP TABLE IF EXISTS " + table.deltaTable());
    }

    static long pending(Connection connection, TableName table) {
        return Sql.count(connection, pendingQuery(table));
    }

    /** The query behind {@link #pending}, for a sync to read every table's count in one statement. */
    static String pendingQuery(TableName table) {
        return "SELECT count(*) FROM " + table.deltaTable();
    }

    static void clear(Connection connection, TableName table) {
        Sql.update(connection, "DELETE FROM " + table.deltaTable());
    }
}
