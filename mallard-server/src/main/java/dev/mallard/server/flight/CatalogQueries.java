// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.flight;

import dev.mallard.core.arrow.ArrowExport;
import dev.mallard.core.sql.SqlText;
import dev.mallard.server.session.Session;
import java.io.IOException;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandGetDbSchemas;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandGetPrimaryKeys;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandGetTables;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The rows of the Flight SQL catalog RPCs, read from DuckDB's information_schema and duckdb_constraints(). The views
 * catalog's own schema ({@value #INTERNAL_SCHEMA}: capture logs, state tables) is Mallard's bookkeeping, not data, so
 * browsing tools do not list it; the materialized views themselves are listed where they were created.
 */
final class CatalogQueries {
    static final String INTERNAL_SCHEMA = "mallard_views";
    static final List<String> TABLE_TYPES = List.of("BASE TABLE", "LOCAL TEMPORARY", "VIEW");

    private CatalogQueries() {}

    static List<List<Object>> catalogs(Session session) {
        return rows(session, "SELECT DISTINCT catalog_name FROM information_schema.schemata ORDER BY 1", List.of());
    }

    static List<List<Object>> schemas(Session session, CommandGetDbSchemas command) {
        List<Object> args = new ArrayList<>();
        StringBuilder sql = new StringBuilder("SELECT catalog_name, schema_name FROM information_schema.schemata WHERE schema_name <> '" + INTERNAL_SCHEMA + "'");
        if (command.hasCatalog()) {
            sql.append(" AND catalog_name = ?");
            args.add(command.getCatalog());
        }
        if (command.hasDbSchemaFilterPattern()) {
            sql.append(" AND schema_name LIKE ? ESCAPE '\\'");
            args.add(command.getDbSchemaFilterPattern());
        }
        sql.append(" ORDER BY 1, 2");
        return rows(session, sql.toString(), args);
    }

    static List<List<Object>> tables(Session session, CommandGetTables command) {
        List<Object> args = new ArrayList<>();
        StringBuilder sql = new StringBuilder(
                "SELECT table_catalog, table_schema, table_name, table_type FROM information_schema.tables WHERE table_schema <> '"
                        + INTERNAL_SCHEMA + "'");
        if (command.hasCatalog()) {
            sql.append(" AND table_catalog = ?");
            args.add(command.getCatalog());
        }
        if (command.hasDbSchemaFilterPattern()) {
            sql.append(" AND table_schema LIKE ? ESCAPE '\\'");
            args.add(command.getDbSchemaFilterPattern());
        }
        if (command.hasTableNameFilterPattern()) {
            sql.append(" AND table_name LIKE ? ESCAPE '\\'");
            args.add(command.getTableNameFilterPattern());
        }
        if (command.getTableTypesCount() > 0) {
            sql.append(" AND table_type IN (").append(String.join(", ", java.util.Collections.nCopies(command.getTableTypesCount(), "?"))).append(')');
            args.addAll(command.getTableTypesList());
        }
        sql.append(" ORDER BY 1, 2, 3");
        List<List<Object>> tables = rows(session, sql.toString(), args);
        if (!command.getIncludeSchema()) {
            return tables;
        }
        List<List<Object>> withSchemas = new ArrayList<>();
        for (List<Object> table : tables) {
            List<Object> row = new ArrayList<>(table);
            row.add(MallardFlightSqlProducer.serialize(tableSchema(session, (String) table.get(0), (String) table.get(1), (String) table.get(2))));
            withSchemas.add(row);
        }
        return withSchemas;
    }

    static List<List<Object>> primaryKeys(Session session, CommandGetPrimaryKeys command) {
        List<Object> args = new ArrayList<>();
        StringBuilder sql = new StringBuilder("""
                SELECT database_name, schema_name, table_name, column_name, CAST(key_sequence AS INTEGER), constraint_name
                FROM (SELECT database_name, schema_name, table_name, constraint_name,
                             unnest(constraint_column_names) AS column_name,
                             unnest(range(1, len(constraint_column_names) + 1)) AS key_sequence
                      FROM duckdb_constraints() WHERE constraint_type = 'PRIMARY KEY')
                WHERE table_name = ? AND schema_name <> '""" + INTERNAL_SCHEMA + "'");
        args.add(command.getTable());
        if (command.hasCatalog()) {
            sql.append(" AND database_name = ?");
            args.add(command.getCatalog());
        }
        if (command.hasDbSchema()) {
            sql.append(" AND schema_name = ?");
            args.add(command.getDbSchema());
        }
        sql.append(" ORDER BY 1, 2, 3, 5");
        return rows(session, sql.toString(), args);
    }

    private static Schema tableSchema(Session session, String catalog, String schema, String table) {
        String sql = "SELECT * FROM " + SqlText.qualified(catalog, schema, table) + " LIMIT 0";
        return session.sql(connection -> {
            try (Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery(sql);
                    ArrowReader reader = ArrowExport.export(rs, session.allocator(), 1)) {
                return reader.getVectorSchemaRoot().getSchema();
            } catch (IOException e) {
                throw new SQLException("cannot read the Arrow schema of " + table, e);
            }
        });
    }

    private static List<List<Object>> rows(Session session, String sql, List<Object> args) {
        return session.sql(connection -> {
            try (PreparedStatement statement = connection.prepareStatement(sql)) {
                for (int i = 0; i < args.size(); i++) {
                    statement.setObject(i + 1, args.get(i));
                }
                List<List<Object>> rows = new ArrayList<>();
                try (ResultSet rs = statement.executeQuery()) {
                    int columns = rs.getMetaData().getColumnCount();
                    while (rs.next()) {
                        List<Object> row = new ArrayList<>(columns);
                        for (int c = 1; c <= columns; c++) {
                            row.add(rs.getObject(c));
                        }
                        rows.add(row);
                    }
                }
                return rows;
            }
        });
    }
}
