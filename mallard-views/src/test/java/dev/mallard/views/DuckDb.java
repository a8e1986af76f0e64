// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.duckdb.DuckDBConnection;

/** A real in-memory (or file) DuckDB for tests, and the two ways they read it back. */
final class DuckDb {
    private DuckDb() {}

    static DuckDBConnection open(String url) {
        try {
            return (DuckDBConnection) DriverManager.getConnection(url);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    static void run(java.sql.Connection connection, String... statements) {
        try (Statement statement = connection.createStatement()) {
            for (String sql : statements) {
                statement.execute(sql);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    /** Runs the statements; returns the sum of their update counts (what a writer tells its sync). */
    static long runCounting(java.sql.Connection connection, String... statements) {
        long rows = 0;
        try (Statement statement = connection.createStatement()) {
            for (String sql : statements) {
                statement.execute(sql);
                rows += Math.max(statement.getUpdateCount(), 0);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
        return rows;
    }

    /** Rows as strings "a|b|c", sorted, so two bags compare with equals. */
    static List<String> rows(java.sql.Connection connection, String sql) {
        try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery(sql)) {
            return rows(rows);
        } catch (SQLException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    /** The rows of a result as strings "a|b|c", sorted (the caller closes it). */
    static List<String> rows(ResultSet rows) throws SQLException {
        List<String> out = new ArrayList<>();
        int n = rows.getMetaData().getColumnCount();
        while (rows.next()) {
            StringBuilder row = new StringBuilder();
            for (int i = 1; i <= n; i++) {
                row.append(i > 1 ? "|" : "").append(rows.getString(i));
            }
            out.add(row.toString());
        }
        out.sort(null);
        return out;
    }

    /** How many rows differ between the view and its query, both ways, as bags (EXCEPT ALL). */
    static long difference(java.sql.Connection connection, String view, String query) {
        List<String> count = rows(connection, "SELECT (SELECT count(*) FROM (SELECT * FROM " + view + " EXCEPT ALL ("
                + query + "))) + (SELECT count(*) FROM ((" + query + ") EXCEPT ALL SELECT * FROM " + view + "))");
        return Long.parseLong(count.get(0));
    }
}
