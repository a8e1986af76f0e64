// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.plan;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Hive-partitioned Parquet layouts written with DuckDB, and rows read back as sortable text for multiset comparison. */
public final class HiveTables {
    private HiveTables() {}

    /**
     * DazzleDuck's example table: {@code dt=2024-01-01/p=x}, {@code dt=2025-01-01/p=1}, {@code dt=2025-01-01/p=a%20b},
     * one file each of columns key and value.
     */
    public static Path example(Connection connection, Path root) throws Exception {
        Path table = root.resolve("hive_table");
        write(connection, table.resolve("dt=2024-01-01/p=x/result-snappy.parquet"), "SELECT 'k1' AS key, 'v1' AS value");
        write(connection, table.resolve("dt=2025-01-01/p=1/result-snappy.parquet"), "SELECT 'k2' AS key, 'v2' AS value");
        write(connection, table.resolve("dt=2025-01-01/p=a%20b/result-snappy.parquet"), "SELECT 'k3' AS key, 'v3' AS value");
        return table;
    }

    /** DazzleDuck's example query over the table (its TestConstants' shape, the path ours). */
    public static String exampleQuery(Path table) {
        return "FROM (FROM (VALUES(NULL::DATE, NULL::VARCHAR, NULL::VARCHAR, NULL::VARCHAR)) t( dt, p, key, value) \n"
                + "WHERE false\nUNION ALL BY NAME\nFROM read_parquet('" + table + "/*/*/*.parquet', hive_partitioning = true, "
                + "hive_types = {'dt': DATE, 'p': VARCHAR}))";
    }

    public static void write(Connection connection, Path file, String select) throws Exception {
        Files.createDirectories(file.getParent());
        try (Statement statement = connection.createStatement()) {
            statement.execute("COPY (" + select + ") TO '" + file.toString().replace("'", "''") + "' (FORMAT parquet)");
        }
    }

    /** Every row of a query, each as its columns' text joined by tabs, sorted: a multiset. */
    public static List<String> rows(Connection connection, String sql) throws SQLException {
        List<String> rows = new ArrayList<>();
        try (Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery(sql)) {
            int columns = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                StringBuilder row = new StringBuilder();
                for (int i = 1; i <= columns; i++) {
                    row.append(i == 1 ? "" : "\t").append(rs.getString(i));
                }
                rows.add(row.toString());
            }
        }
        Collections.sort(rows);
        return rows;
    }
}
