// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.rls;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.server.config.AccessMode;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * A row filter never leaks a row: a generated query over four tables and three views (joins of every kind,
 * subqueries in FROM, WHERE and SELECT, EXISTS, CTEs, set operations, aggregates, window functions), run as a
 * RESTRICT_READ_ONLY user through the rewriter, answers exactly what the same query answers as an admin over copies
 * of the tables that hold only the rows the filters let through (and nothing for the table no grant names). With
 * grants projecting only {@code k, v} the same holds, and a query naming a hidden column anywhere is refused.
 */
class RowFilterLeakProperties {
    private static Connection restricted;
    private static Connection reference;
    private static RowLevelSecurity rls;
    /** The same grants exposing only k and v; their filters read the hidden tenant column. */
    private static RowLevelSecurity projected;

    @BeforeContainer
    static void open() throws SQLException {
        restricted = DriverManager.getConnection("jdbc:duckdb:");
        reference = DriverManager.getConnection("jdbc:duckdb:");
        for (String sql : LeakFixture.restrictedSetup()) {
            run(restricted, sql);
        }
        for (String sql : LeakFixture.referenceSetup()) {
            run(reference, sql);
        }
        rls = RowLevelSecurity.of(AccessMode.RESTRICT_READ_ONLY, Map.of(RlsClaims.ACCESS, LeakFixture.access())).orElseThrow();
        projected = RowLevelSecurity.of(AccessMode.RESTRICT_READ_ONLY, Map.of(RlsClaims.ACCESS, LeakFixture.access("k, v"))).orElseThrow();
    }

    @AfterContainer
    static void close() throws SQLException {
        restricted.close();
        reference.close();
    }

    @Property
    void aRestrictedQueryAnswersWhatTheQueryAnswersOverPrefilteredTables(@ForAll("queries") String sql) throws SQLException {
        List<String> expected;
        try {
            expected = LeakFixture.rows(reference, sql);
        } catch (SQLException e) {
            throw new AssertionError("the generator made a query DuckDB refuses: " + sql, e);
        }
        assertThat(LeakFixture.rows(restricted, rls.admit(restricted, sql))).as(sql).isEqualTo(expected);
    }

    @Property
    void aProjectedGrantAnswersWhatTheQueryAnswersOverPrefilteredTables(@ForAll("queries") String sql) throws SQLException {
        assertThat(LeakFixture.rows(restricted, projected.admit(restricted, sql))).as(sql).isEqualTo(LeakFixture.rows(reference, sql));
    }

    @Property
    void aColumnTheProjectionHidesIsNeverAnsweredWhereverTheQueryNamesIt(@ForAll("queries") String sql,
            @ForAll("grantedTables") String table, @ForAll("hiddenColumns") String column) {
        String probe = "SELECT x.k AS k, x.v AS v FROM (" + sql + ") x WHERE EXISTS (SELECT 1 FROM " + table + " y WHERE y.k = x.k AND y."
                + column + " IS NOT NULL)";
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> projected.admit(restricted, probe)).as(probe)
                .isInstanceOf(dev.mallard.core.error.MallardException.class).hasMessageContaining("No access to column")
                .extracting(e -> ((dev.mallard.core.error.MallardException) e).errorCode())
                .isEqualTo(dev.mallard.core.error.ErrorCode.USER_ACCESS_DENIED);
    }

    @Provide
    Arbitrary<String> grantedTables() {
        return LeakFixture.grantedTables();
    }

    @Provide
    Arbitrary<String> hiddenColumns() {
        return LeakFixture.hiddenColumns();
    }

    @Provide
    Arbitrary<String> queries() {
        return LeakFixture.queries();
    }

    private static void run(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }
}
