package dev.mallard.views;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/** What the compiler asks DuckDB's catalog: which tables exist, their columns, which functions aggregate or vary. */
final class Catalog {
    private final Connection connection;
    private Set<String> aggregates;
    private Set<String> unstable;

    Catalog(Connection connection) {
        this.connection = connection;
    }

    String currentSchema() {
        return Sql.strings(connection, "SELECT current_schema()").get(0);
    }

    String currentDatabase() {
        return Sql.strings(connection, "SELECT current_database()").get(0);
    }

    /** The table as the catalog spells it, if a base table of that name exists in the current database. */
    Optional<TableName> table(String schema, String table) {
        List<String> found = Sql.strings(connection, "SELECT schema_name || chr(0) || table_name FROM duckdb_tables() "
                + "WHERE database_name = current_database() AND lower(schema_name) = lower(?) AND lower(table_name) = lower(?) "
                + "AND NOT temporary", schema, table);
        if (found.isEmpty()) {
            return Optional.empty();
        }
        String[] parts = found.get(0).split("\u0000", 2);
        return Optional.of(new TableName(parts[0], parts[1]));
    }

    boolean isView(String schema, String table) {
        return !Sql.strings(connection, "SELECT 1 FROM duckdb_views() WHERE lower(schema_name) = lower(?) "
                + "AND lower(view_name) = lower(?)", schema, table).isEmpty();
    }

    /** Any relation of that name in the current schema: table, view or temporary table. */
    boolean relationExists(String name) {
        return !Sql.strings(connection, "SELECT 1 FROM duckdb_tables() WHERE lower(table_name) = lower(?) "
                + "AND (schema_name = current_schema() OR temporary) UNION ALL SELECT 1 FROM duckdb_views() "
                + "WHERE lower(view_name) = lower(?) AND schema_name = current_schema()", name, name).isEmpty();
    }

    List<String> columns(TableName table) {
        return Sql.strings(connection, "SELECT column_name FROM duckdb_columns() WHERE database_name = current_database() "
                + "AND schema_name = ? AND table_name = ? ORDER BY column_index", table.schema(), table.table());
    }

    /** Whether a query binds on its own (a subquery that refers to an enclosing query's columns does not). */
    boolean binds(String query) {
        try (Statement statement = connection.createStatement()) {
            statement.execute("DESCRIBE " + query);
            return true;
        } catch (SQLException e) {
            return false;
        }
    }

    boolean isAggregate(String function) {
        if (aggregates == null) {
            aggregates = lowered(Sql.strings(connection,
                    "SELECT DISTINCT function_name FROM duckdb_functions() WHERE function_type = 'aggregate'"));
        }
        return aggregates.contains(function.toLowerCase(Locale.ROOT));
    }

    /** Functions whose result may change between two calls with the same arguments (random, now, nextval). */
    boolean isUnstable(String function) {
        if (unstable == null) {
            unstable = lowered(Sql.strings(connection, "SELECT DISTINCT function_name FROM duckdb_functions() "
                    + "WHERE stability IN ('VOLATILE', 'CONSISTENT_WITHIN_QUERY')"));
        }
        return unstable.contains(function.toLowerCase(Locale.ROOT));
    }

    private static Set<String> lowered(List<String> names) {
        Set<String> set = new HashSet<>();
        names.forEach(name -> set.add(name.toLowerCase(Locale.ROOT)));
        return set;
    }
}
