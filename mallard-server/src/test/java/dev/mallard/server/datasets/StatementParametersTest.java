// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.datasets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.DriverManager;
import org.junit.jupiter.api.Test;

class StatementParametersTest {
    @Test
    void namedParametersBecomeDuckDbsPositionsAndNothingElseOfTheTextMoves() throws Exception {
        try (Connection connection = DriverManager.getConnection("jdbc:duckdb:")) {
            StatementParameters parameters = StatementParameters.of(connection,
                    "SELECT '$city' AS literal, $b::INT AS b, 'é' AS accent, $a AS a WHERE $b > 0");
            assertThat(parameters.names()).containsExactly("b", "a");
            assertThat(parameters.positionalSql()).isEqualTo("SELECT '$city' AS literal, $1::INT AS b, 'é' AS accent, $2 AS a WHERE $1 > 0");
        }
    }

    @Test
    void questionMarkParametersSeveralStatementsAndWritesAreRefused() throws Exception {
        try (Connection connection = DriverManager.getConnection("jdbc:duckdb:")) {
            assertThatThrownBy(() -> StatementParameters.of(connection, "SELECT ?")).hasMessageContaining("$name");
            assertThat(StatementParameters.of(connection, "SELECT $1").names()).as("a param named 1, which no dataset can declare").containsExactly("1");
            assertThatThrownBy(() -> StatementParameters.of(connection, "SELECT 1; SELECT 2")).hasMessageContaining("one query");
            assertThatThrownBy(() -> StatementParameters.of(connection, "DELETE FROM t")).hasMessageContaining("does not parse as a query");
        }
    }
}
