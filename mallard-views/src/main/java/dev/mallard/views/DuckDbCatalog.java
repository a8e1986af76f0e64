// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import dev.mallard.core.sql.SqlText;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/** What the compiler asks DuckDB's catalog: which tables exist, their columns, which functions aggregate or vary. */
final class DuckDbCatalog {
    private final Connection connection;
    private Set<String> aggregates;
    private Set<String> unstable;

    DuckDbCatalog(Connection connection) {
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
        return table("", schema, table);
    }

    /**
     * The table as the catalog spells it, if a base table of that name exists in the database (empty or the
     * current database's name: the current database; otherwise an ATTACH alias).
     */
    Optional<TableName> table(String database, String schema, String table) {
        boolean home = database.isEmpty() || database.equalsIgnoreCase(currentDatabase());
        List<String> found = Sql.strings(connection, "SELECT database_name || chr(0) || schema_name || chr(0) || table_name "
                + "FROM duckdb_tables() WHERE lower(database_name) = lower(" + (home ? "current_database()" : "?") + ") "
                + "AND lower(schema_name) = lower(?) AND lower(table_name) = lower(?) AND NOT temporary",
                home ? new Object[] {schema, table} : new Object[] {database, schema, table});
        if (found.isEmpty()) {
            return Optional.empty();
        }
        String[] parts = found.get(0).split("\u0000", 3);
        return Optional.of(new TableName(home ? "" : parts[0], parts[1], parts[2]));
    }

    /**
     * The base table a written name means, as DuckDB resolves it: {@code t} in the current schema,
     * {@code s.t} (or, without a schema s, {@code db.t} in db's main schema), {@code db.s.t}; parts may be
     * double-quoted.
     */
    Optional<TableName> resolve(String written) {
        List<String> parts = new ArrayList<>();
        StringBuilder part = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < written.length(); i++) {
            char c = written.charAt(i);
            if (c == '"' && quoted && i + 1 < written.length() && written.charAt(i + 1) == '"') {
                part.append('"');
                i++;
            } else if (c == '"') {
                quoted = !quoted;
            } else if (c == '.' && !quoted) {
                parts.add(part.toString().strip());
                part.setLength(0);
            } else {
                part.append(c);
            }
        }
        parts.add(part.toString().strip());
        return switch (parts.size()) {
            case 1 -> table(currentSchema(), parts.get(0));
            case 2 -> table(parts.get(0), parts.get(1)).or(() -> databaseExists(parts.get(0))
                    ? table(parts.get(0), "main", parts.get(1)) : Optional.empty());
            case 3 -> databaseExists(parts.get(0)) ? table(parts.get(0), parts.get(1), parts.get(2)) : Optional.empty();
            default -> Optional.empty();
        };
    }

    /** Whether a database of that name is attached (the current one included). */
    boolean databaseExists(String database) {
        return !Sql.strings(connection, "SELECT 1 FROM duckdb_databases() WHERE lower(database_name) = lower(?)", database)
                .isEmpty();
    }

    /** The file an attached database was opened from, if it is a file; an empty {@code database} is the views' own. */
    Optional<String> path(String database) {
        List<String> found = Sql.strings(connection, "SELECT path FROM duckdb_databases() WHERE lower(database_name) = "
                + (database.isEmpty() ? "lower(current_database())" : "lower(?)") + " AND path IS NOT NULL",
                database.isEmpty() ? new Object[0] : new Object[] {database});
        return found.isEmpty() ? Optional.empty() : Optional.of(found.get(0));
    }

    /**
     * The DuckDB storage version a database's file is in ({@code v1.0.0+}: readable from DuckDB 1.0 on); empty for a
     * database in memory. An empty {@code database} is the views' own.
     */
    Optional<String> storageVersion(String database) {
        List<String> found = Sql.strings(connection, "SELECT tags['storage_version'] FROM duckdb_databases() WHERE lower(database_name) = "
                + (database.isEmpty() ? "lower(current_database())" : "lower(?)") + " AND tags['storage_version'] IS NOT NULL",
                database.isEmpty() ? new Object[0] : new Object[] {database});
        return found.isEmpty() ? Optional.empty() : Optional.of(found.get(0));
    }

    /** Whether the database (an ATTACH alias) was attached read-only: no triggers can be created in it. */
    boolean readOnly(String database) {
        return !Sql.strings(connection, "SELECT 1 FROM duckdb_databases() WHERE lower(database_name) = lower(?) AND readonly",
                database).isEmpty();
    }

    /** Whether a (non-temporary) DuckDB view of that name exists; an empty {@code database} is this one. */
    boolean isView(String database, String schema, String table) {
        return !Sql.strings(connection, "SELECT 1 FROM duckdb_views() WHERE lower(database_name) = lower("
                + (database.isEmpty() ? "current_database()" : "?") + ") AND lower(schema_name) = lower(?) "
                + "AND lower(view_name) = lower(?)", database.isEmpty() ? new Object[] {schema, table}
                        : new Object[] {database, schema, table}).isEmpty();
    }

    /** Any relation of that name in the current schema: table, view or temporary table. */
    boolean relationExists(String name) {
        return !Sql.strings(connection, "SELECT 1 FROM duckdb_tables() WHERE lower(table_name) = lower(?) "
                + "AND (schema_name = current_schema() OR temporary) UNION ALL SELECT 1 FROM duckdb_views() "
                + "WHERE lower(view_name) = lower(?) AND schema_name = current_schema()", name, name).isEmpty();
    }

    List<String> columns(TableName table) {
        return Sql.strings(connection, "SELECT column_name FROM duckdb_columns() WHERE database_name = "
                + (table.isHome() ? "current_database()" : SqlText.literal(table.database()))
                + " AND schema_name = ? AND table_name = ? ORDER BY column_index", table.schema(), table.table());
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
