// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.arrow;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;

/**
 * An in-memory DuckDB and an allocator for one test. Closing it closes the allocator last, which throws if any
 * Arrow buffer leaked, so a leak fails the test.
 */
final class DuckDbJson implements AutoCloseable {
    final BufferAllocator allocator = new RootAllocator();
    final Connection connection;

    DuckDbJson() throws SQLException {
        connection = DriverManager.getConnection("jdbc:duckdb:");
    }

    void execute(String... statements) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            for (String sql : statements) {
                statement.execute(sql);
            }
        }
    }

    /** The query's result as JSON lines, exported in batches of 1024 rows. */
    String json(String sql) throws SQLException, IOException {
        return json(sql, 1024);
    }

    String json(String sql, int batchRows) throws SQLException, IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery(sql);
                ArrowReader reader = ArrowExport.export(rs, allocator, batchRows)) {
            new JsonLinesWriter(out).writeAll(reader);
        }
        return out.toString(UTF_8);
    }

    @Override
    public void close() throws SQLException {
        try {
            connection.close();
        } finally {
            allocator.close();
        }
    }
}
