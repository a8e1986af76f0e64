// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.error.MallardException;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import org.duckdb.DuckDBConnection;
import org.junit.jupiter.api.Test;

class StatementCacheTest {
    private static final String FOLD = "MERGE INTO state AS s USING (SELECT k, sum(v) AS v FROM pending GROUP BY k) AS p ON s.k = p.k "
            + "WHEN MATCHED THEN UPDATE SET v = s.v + p.v WHEN NOT MATCHED THEN INSERT VALUES (p.k, p.v)";

    @Test
    void aKeptStatementWritesIntoTheTableThatReplacedTheOneItWasPreparedOn() throws Exception {
        try (DuckDBConnection connection = DuckDb.open("jdbc:duckdb:");
                Connection other = connection.duplicate();
                StatementCache statements = new StatementCache(connection)) {
            DuckDb.run(connection, "CREATE TABLE state (k INTEGER, v BIGINT)", "CREATE TABLE pending (k INTEGER, v BIGINT)",
                    "INSERT INTO pending VALUES (1, 1), (2, 5)");
            assertThat(statements.update(FOLD)).isEqualTo(2);

            // As a REFRESH does, from another connection: the state is rebuilt under the same name.
            DuckDb.run(other, "CREATE OR REPLACE TABLE state (k INTEGER, v BIGINT)", "INSERT INTO state VALUES (1, 100)");
            assertThat(statements.update(FOLD)).isEqualTo(2);
            assertThat(DuckDb.rows(connection, "SELECT * FROM state ORDER BY k")).containsExactly("1|101", "2|5");
            List<String> read = new ArrayList<>();
            statements.query("SELECT k || '=' || v FROM state ORDER BY k", row -> read.add(row.getString(1)));
            assertThat(read).containsExactly("1=101", "2=5");
        }
    }

    @Test
    void aStatementWhoseExecutionFailedIsPreparedAgainAtItsNextUse() throws Exception {
        try (DuckDBConnection connection = DuckDb.open("jdbc:duckdb:");
                StatementCache statements = new StatementCache(connection)) {
            DuckDb.run(connection, "CREATE TABLE state (k INTEGER, v BIGINT)", "CREATE TABLE pending (k INTEGER, v BIGINT)",
                    "INSERT INTO pending VALUES (1, 1)");
            assertThat(statements.update(FOLD)).isEqualTo(1);
            DuckDb.run(connection, "DROP TABLE state");
            assertThatThrownBy(() -> statements.update(FOLD)).isInstanceOf(MallardException.class)
                    .hasMessageContaining("state").hasMessageContaining("view maintenance SQL");

            DuckDb.run(connection, "CREATE TABLE state (k INTEGER, v BIGINT)");
            assertThat(statements.update(FOLD)).isEqualTo(1);
            assertThat(DuckDb.rows(connection, "SELECT * FROM state")).containsExactly("1|1");
        }
    }

    @Test
    void parametersTakeTheValuesThatChangeBetweenRuns() throws Exception {
        try (DuckDBConnection connection = DuckDb.open("jdbc:duckdb:");
                StatementCache statements = new StatementCache(connection)) {
            DuckDb.run(connection, "CREATE TABLE totals (n BIGINT, h HUGEINT)", "INSERT INTO totals VALUES (0, 0)");
            String add = "UPDATE totals SET n = n + ?, h = h + CAST(? AS HUGEINT)";
            statements.update(add, 3L, "170141183460469231731687303715884105000");
            statements.update(add, -1L, "-5000");
            assertThat(DuckDb.rows(connection, "SELECT n, h FROM totals")).containsExactly("2|170141183460469231731687303715884100000");
        }
    }
}
