// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.rls;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.core.error.MallardException;
import dev.mallard.server.config.AccessMode;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * A rewrite served from the cache the sessions of a server share is always the rewrite the session would make
 * itself: for generated queries over the leak fixture's tables and views, two users with different filters (and
 * one with the other's filters under another database default), in any order on one shared cache, each get
 * exactly what a rewriter with no cache gives them, refusals included.
 */
class RewriteCacheProperties {
    private static final String OTHER_ACCESS = "[[\"table\",\"t1\",\"*\",\"tenant = 'b'\"],[\"table\",\"t3\",\"*\",\"v < 5\"]]";
    private static Connection connection;
    private static final CatalogCache SHARED = new CatalogCache();
    /** The same catalog with a rewrite cache too small to keep anything: every rewrite made anew. */
    private static final CatalogCache UNCACHED = new CatalogCache(new RewriteCache(1, false));

    @BeforeContainer
    static void open() throws SQLException {
        connection = DriverManager.getConnection("jdbc:duckdb:");
        try (Statement statement = connection.createStatement()) {
            for (String sql : LeakFixture.restrictedSetup()) {
                statement.execute(sql);
            }
        }
    }

    @AfterContainer
    static void close() throws SQLException {
        connection.close();
    }

    @Property(tries = 100)
    void aCachedRewriteEqualsTheRewriteWithoutTheCache(@ForAll("queries") String sql, @ForAll("orders") int order) throws SQLException {
        Map<String, Object> first = Map.of(RlsClaims.ACCESS, LeakFixture.access());
        Map<String, Object> second = Map.of(RlsClaims.ACCESS, OTHER_ACCESS);
        Map<String, Object> third = Map.of(RlsClaims.ACCESS, LeakFixture.access(), RlsClaims.SCHEMA, "main");
        @SuppressWarnings("unchecked")
        Map<String, Object>[] users = new Map[] {first, second, third};
        for (int i = 0; i < users.length; i++) {
            Map<String, Object> claims = users[(i + order) % users.length];
            String cached = outcome(RowLevelSecurity.of(AccessMode.RESTRICT_READ_ONLY, claims, SHARED).orElseThrow(), sql);
            String uncached = outcome(RowLevelSecurity.of(AccessMode.RESTRICT_READ_ONLY, claims, UNCACHED).orElseThrow(), sql);
            assertThat(cached).as("%s as %s", sql, claims).isEqualTo(uncached);
        }
    }

    /** The rewritten text, or the code of the refusal. */
    private static String outcome(RowLevelSecurity security, String sql) throws SQLException {
        try {
            return "rewritten: " + security.admit(connection, sql);
        } catch (MallardException e) {
            return "refused: " + e.errorCode();
        }
    }

    @Provide
    Arbitrary<String> queries() {
        return LeakFixture.queries();
    }

    @Provide
    Arbitrary<Integer> orders() {
        return Arbitraries.integers().between(0, 2);
    }
}
