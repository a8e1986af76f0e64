// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class TableNameTest {
    private Connection connection;

    @BeforeEach
    void open() throws Exception {
        connection = DriverManager.getConnection("jdbc:duckdb:");
    }

    @AfterEach
    void close() throws Exception {
        connection.close();
    }

    @Test
    void qualifiedNamesAreSplitByDuckDbsOwnRules() {
        assertThat(TableName.parse(connection, "source", "k")).isEqualTo(TableName.of("source"));
        assertThat(TableName.parse(connection, "main.source", "k")).isEqualTo(new TableName(Optional.empty(), Optional.of("main"), "source"));
        assertThat(TableName.parse(connection, "test_db.s.source", "k").quoted()).isEqualTo("\"test_db\".\"s\".\"source\"");
        assertThat(TableName.parse(connection, "\"odd.name\"", "k")).isEqualTo(TableName.of("odd.name"));
        assertThat(TableName.parse(connection, "\"My \"\"T\"\"\"", "k").quoted()).isEqualTo("\"My \"\"T\"\"\"");
    }

    @Test
    void anythingButATableReferenceIsRefusedNamingTheKey() {
        for (String text : new String[] {"a, b", "(SELECT 1)", "a x", "a WHERE true", "read_csv('f')", "a; DROP TABLE a", ""}) {
            assertThatThrownBy(() -> TableName.parse(connection, text, "pipeline.handler.table"))
                    .as(text)
                    .isInstanceOf(MallardException.class)
                    .hasMessageContaining("pipeline.handler.table")
                    .satisfies(e -> assertThat(((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_CONFIG_INVALID));
        }
    }
}
