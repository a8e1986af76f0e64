// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlText;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Small JDBC steps the maintainer repeats: quoting, running a statement, reading one column. At TRACE level
 * ({@code MALLARD_LOG_LEVEL=TRACE}) each statement is logged with its duration, which shows where a sync's time goes.
 */
final class Sql {
    private static final Logger LOG = LoggerFactory.getLogger(Sql.class);

    private Sql() {}

    /** Logs a statement the maintainer ran, with its duration, at TRACE level. */
    static void traced(long startNanos, String sql) {
        if (LOG.isTraceEnabled()) {
            LOG.trace("views statement took_ms={} sql=\"{}\"", String.format(java.util.Locale.ROOT, "%.3f",
                    (System.nanoTime() - startNanos) / 1e6), abbreviate(sql.replace('\n', ' ')));
        }
    }

    static long update(Connection connection, String sql) {
        long start = System.nanoTime();
        try (Statement statement = connection.createStatement()) {
            statement.execute(sql);
            traced(start, sql);
            return Math.max(statement.getUpdateCount(), 0);
        } catch (SQLException e) {
            throw maintenanceFailed(sql, e);
        }
    }

    /** The error of a maintenance statement DuckDB failed on, naming the statement (abbreviated). */
    static MallardException maintenanceFailed(String sql, SQLException e) {
        return new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "DuckDB failed on view maintenance SQL: "
                + e.getMessage() + " (statement: " + abbreviate(sql) + ")", e);
    }

    static List<String> strings(Connection connection, String sql, Object... parameters) {
        long start = System.nanoTime();
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) {
                statement.setObject(i + 1, parameters[i]);
            }
            List<String> values = new ArrayList<>();
            try (ResultSet rows = statement.executeQuery()) {
                while (rows.next()) {
                    values.add(rows.getString(1));
                }
            }
            traced(start, sql);
            return values;
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "DuckDB failed reading the view catalog: "
                    + e.getMessage() + " (statement: " + abbreviate(sql) + ")", e);
        }
    }

    /**
     * Creates an empty table with the columns (names and types) of a query, plus extra column definitions.
     * Never {@code CREATE TABLE ... AS <query> LIMIT 0}: in DuckDB 2.0.0 a table created that way inside a
     * transaction loses the rows a large parallel INSERT adds to it in the same transaction (scans see none),
     * while a table created with column definitions keeps them.
     *
     * @param create the statement's head, e.g. {@code CREATE OR REPLACE TEMP TABLE x}
     * @param extra further column definitions, e.g. {@code mallard_w INTEGER}, or empty
     */
    static void createEmpty(Connection connection, String create, String query, String extra) {
        String columns = columnDefinitions(connection, query);
        update(connection, create + " (" + columns + (extra.isEmpty() ? "" : ", " + extra) + ")");
    }

    /** {@code "name" TYPE, ...} for the columns of a query, from DESCRIBE. */
    static String columnDefinitions(Connection connection, String query) {
        List<String> columns = new ArrayList<>();
        for (String row : strings(connection, "SELECT column_name || chr(0) || column_type FROM (DESCRIBE " + query + "\n)")) {
            String[] parts = row.split("\u0000", 2);
            columns.add(SqlText.identifier(parts[0]) + " " + parts[1]);
        }
        return String.join(", ", columns);
    }

    /** Whether this connection has a temporary table of that (unquoted) name. */
    static boolean temporaryTableExists(Connection connection, String name) {
        return !strings(connection, "SELECT 1 FROM duckdb_tables() WHERE temporary AND table_name = ?", name).isEmpty();
    }

    static long count(Connection connection, String sql) {
        List<String> values = strings(connection, sql);
        return values.isEmpty() || values.get(0) == null ? 0 : Long.parseLong(values.get(0));
    }

    private static String abbreviate(String sql) {
        return sql.length() <= 300 ? sql : sql.substring(0, 300) + "...";
    }
}
