// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.error.MallardException;
import java.util.List;
import org.junit.jupiter.api.Test;

class PostgresTableTest {
    private static PostgresTable parse(String text) {
        return PostgresTable.parse(text, "pipeline.sink.postgres.table");
    }

    @Test
    void anUnquotedNameFoldsToLowerCaseAsPostgresReadsIt() {
        assertThat(parse("Analytics.City_Counts").parts()).containsExactly("analytics", "city_counts");
        assertThat(parse("Analytics.City_Counts").sql()).isEqualTo("\"analytics\".\"city_counts\"");
    }

    @Test
    void aQuotedPartKeepsItsCaseDotsAndDoubledQuotes() {
        assertThat(parse("\"Sales\".\"Q1.totals \"\"final\"\"\"").parts()).isEqualTo(List.of("Sales", "Q1.totals \"final\""));
        assertThat(parse("\"Sales\".\"Q1.totals \"\"final\"\"\"").sql()).isEqualTo("\"Sales\".\"Q1.totals \"\"final\"\"\"");
    }

    @Test
    void anEmptyPartOrAnUnterminatedQuoteIsRefusedNamingTheKey() {
        for (String bad : new String[] {"", "public.", ".t", "\"open", "a.b.c.d"}) {
            assertThatThrownBy(() -> parse(bad)).as(bad).isInstanceOf(MallardException.class).hasMessageContaining("pipeline.sink.postgres.table");
        }
    }
}
