// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.sql;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Assume;
import net.jqwik.api.constraints.StringLength;
import org.junit.jupiter.api.Test;

class SqlTextTest {
    @Test
    void identifiersAndLiteralsDoubleTheirQuotes() {
        assertThat(SqlText.identifier("my \"t\"")).isEqualTo("\"my \"\"t\"\"\"");
        assertThat(SqlText.qualified("main", "a.b")).isEqualTo("\"main\".\"a.b\"");
        assertThat(SqlText.literal("it's")).isEqualTo("'it''s'");
    }

    @Test
    void firstLineCutsAtTheFirstNewline() {
        assertThat(SqlText.firstLine("Binder Error: x\nLINE 1: ...")).isEqualTo("Binder Error: x");
        assertThat(SqlText.firstLine((String) null)).isEmpty();
        assertThat(SqlText.firstLine(new SQLException("one line"))).isEqualTo("one line");
    }

    /** Whatever the text, DuckDB reads the quoted forms back as exactly that name and that value. */
    @Property(tries = 200)
    void duckDbReadsTheQuotedFormsBackUnchanged(@ForAll @StringLength(min = 1, max = 20) String text) throws SQLException {
        String name = text.replace("\u0000", "");
        Assume.that(!name.isEmpty());
        try (Connection connection = DriverManager.getConnection("jdbc:duckdb:"); Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery("SELECT " + SqlText.literal(name) + " AS " + SqlText.identifier(name))) {
            rs.next();
            assertThat(rs.getString(1)).isEqualTo(name);
            assertThat(rs.getMetaData().getColumnLabel(1)).isEqualTo(name);
        }
    }
}
