// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.window;

import dev.mallard.core.sql.SqlText;
import dev.mallard.flow.config.PipelineConfig.WindowConfig;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.Optional;

/**
 * What a window needs of its table and its emit_sql, checked at start by {@link TumblingWindow} and by
 * {@code mallard validate} in its sandbox. Each check answers the problem to report, or empty when sound.
 */
public final class WindowChecks {
    private WindowChecks() {}

    /**
     * The time column exists and is TIMESTAMPTZ, and the table has no PRIMARY KEY, UNIQUE constraint or index:
     * DuckDB never frees the rows deleted from an indexed table, so a window's memory would grow without bound.
     */
    public static Optional<String> table(Connection connection, String table, String timeColumn, long sizeSeconds) {
        try {
            String type = null;
            try (PreparedStatement columns = connection.prepareStatement(
                    "SELECT data_type FROM duckdb_columns() WHERE table_name = ? AND column_name = ? AND NOT internal")) {
                columns.setString(1, table);
                columns.setString(2, timeColumn);
                try (ResultSet rows = columns.executeQuery()) {
                    if (rows.next()) {
                        type = rows.getString(1);
                    }
                }
            }
            if (count(connection, "SELECT count(*) FROM duckdb_constraints() WHERE table_name = ? "
                    + "AND constraint_type IN ('PRIMARY KEY', 'UNIQUE')", table) > 0) {
                return Optional.of("table " + table + " has a PRIMARY KEY or UNIQUE constraint; DuckDB never frees the rows "
                        + "deleted from an indexed table, so a window's memory would grow without bound: drop the constraint");
            }
            if (count(connection, "SELECT count(*) FROM duckdb_indexes() WHERE table_name = ?", table) > 0) {
                return Optional.of("table " + table + " has an index; DuckDB never frees the rows deleted from an indexed "
                        + "table, so a window's memory would grow without bound: drop the index");
            }
            if (type == null) {
                return Optional.of("table " + table + " has no column " + timeColumn + "; declare it as " + timeColumn
                        + " TIMESTAMPTZ and fill it with time_bucket(INTERVAL '" + sizeSeconds + " seconds', event_time)");
            }
            if (!type.toUpperCase(Locale.ROOT).equals("TIMESTAMP WITH TIME ZONE")) {
                return Optional.of("column " + table + "." + timeColumn + " is " + type + "; a window's time column must be TIMESTAMPTZ");
            }
            return Optional.empty();
        } catch (SQLException e) {
            return Optional.of("cannot read the columns of " + table + ": " + TumblingWindow.firstLine(e));
        }
    }

    /** emit_sql binds against a stand-in `closed` with the table's columns, and reads it. */
    public static Optional<String> emitSql(Connection connection, String table, String emitSql) {
        try (Statement statement = connection.createStatement()) {
            statement.execute("CREATE OR REPLACE TEMP TABLE closed AS SELECT * FROM " + SqlText.identifier(table) + " LIMIT 0");
            try {
                try (PreparedStatement prepared = connection.prepareStatement(emitSql)) {
                    // Binding is the check; nothing runs.
                }
                try (PreparedStatement tree = connection.prepareStatement("SELECT json_serialize_sql(?)")) {
                    tree.setString(1, emitSql);
                    try (ResultSet rows = tree.executeQuery()) {
                        rows.next();
                        if (!rows.getString(1).contains("\"table_name\":\"closed\"")) {
                            return Optional.of("emit_sql does not read `closed`, the rows of the buckets that closed: write it as a "
                                    + "query over closed, e.g. " + WindowConfig.DEFAULT_EMIT_SQL);
                        }
                    }
                }
            } finally {
                statement.execute("DROP TABLE IF EXISTS temp.closed");
            }
            return Optional.empty();
        } catch (SQLException e) {
            return Optional.of("emit_sql: " + TumblingWindow.firstLine(e) + "; it reads the relation closed, which has the columns of table " + table);
        }
    }

    private static long count(Connection connection, String sql, String table) throws SQLException {
        try (PreparedStatement count = connection.prepareStatement(sql)) {
            count.setString(1, table);
            try (ResultSet rows = count.executeQuery()) {
                rows.next();
                return rows.getLong(1);
            }
        }
    }
}
