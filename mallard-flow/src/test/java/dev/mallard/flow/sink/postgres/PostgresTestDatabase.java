// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink.postgres;

import static org.assertj.core.api.Assertions.fail;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Assumptions;

/**
 * The Postgres the tests write to: MALLARD_TEST_POSTGRES_DSN, by default the local trust-auth server of these
 * machines. When it cannot be reached a test is skipped, unless CI is set, when it fails.
 */
public final class PostgresTestDatabase {
    public static final String ENV = "MALLARD_TEST_POSTGRES_DSN";
    public static final String DEFAULT_DSN = "postgres://postgres@127.0.0.1:5432/test";

    private final String dsn;

    private PostgresTestDatabase(String dsn) {
        this.dsn = dsn;
    }

    /** The database, or the test skipped (failed under CI) when it does not answer. */
    public static PostgresTestDatabase require() {
        String dsn = System.getenv().getOrDefault(ENV, DEFAULT_DSN);
        PostgresTestDatabase database = new PostgresTestDatabase(dsn);
        try (Connection ignored = database.connect()) {
            return database;
        } catch (SQLException e) {
            String message = "Postgres is not reachable at " + PostgresDsn.parse(dsn, ENV).description() + " (" + e.getMessage()
                    + "); start one or set " + ENV + " to a reachable postgres:// DSN";
            if (System.getenv("CI") != null) {
                fail(message);
            }
            Assumptions.abort(message);
            throw new AssertionError("unreachable");
        }
    }

    public String dsn() {
        return dsn;
    }

    public Connection connect() throws SQLException {
        PostgresDsn parsed = PostgresDsn.parse(dsn, ENV);
        Connection connection = new org.postgresql.Driver().connect(parsed.jdbcUrl(), parsed.properties());
        if (connection == null) {
            throw new SQLException("the driver does not accept " + parsed.description());
        }
        return connection;
    }

    /** A table name no other test uses. */
    public static String uniqueTable(String prefix) {
        return prefix + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    }

    public void execute(String sql) throws SQLException {
        try (Connection connection = connect(); Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    /** Every row of a query, its columns as Postgres's text joined by '|', NULL as "null". */
    public List<String> rows(String sql) throws SQLException {
        List<String> rows = new ArrayList<>();
        try (Connection connection = connect(); Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(sql)) {
            int columns = result.getMetaData().getColumnCount();
            while (result.next()) {
                StringBuilder row = new StringBuilder();
                for (int i = 1; i <= columns; i++) {
                    row.append(i > 1 ? "|" : "").append(result.getString(i));
                }
                rows.add(row.toString());
            }
        }
        return rows;
    }
}
