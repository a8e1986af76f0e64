// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.rls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.server.config.AccessMode;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.duckdb.DuckDBConnection;
import org.junit.jupiter.api.Test;

class RewriteCacheTest {
    private static final CatalogSnapshot.SessionDefaults DEFAULTS = new CatalogSnapshot.SessionDefaults("memory", "main", false);
    private static final RlsClaims CLAIMS = new RlsClaims(List.of(new AccessGrant(AccessGrant.Kind.TABLE, "t", Optional.of("k = 1"))),
            Optional.empty(), Optional.empty(), Map.of(), true);

    @Test
    void theLeastRecentlyUsedRewriteGoesFirstOnceTheCharactersAreSpent() {
        RewriteCache cache = new RewriteCache(40);
        RewriteCache.Key a = key("SELECT 1");
        RewriteCache.Key b = key("SELECT 2");
        RewriteCache.Key c = key("SELECT 3");
        cache.put(a, "a-rewrite");
        cache.put(b, "b-rewrite");
        assertThat(cache.find(a)).contains("a-rewrite");
        cache.put(c, "c-rewrite");

        assertThat(cache.find(b)).isEmpty();
        assertThat(cache.find(a)).contains("a-rewrite");
        assertThat(cache.find(c)).contains("c-rewrite");
        assertThat(cache.size()).isEqualTo(2);
    }

    @Test
    void aKeyDiffersByModeClaimsDefaultsAndText() {
        RewriteCache cache = new RewriteCache(RewriteCache.DEFAULT_MAX_CHARS);
        cache.put(key("SELECT 1"), "kept");
        RlsClaims otherFilter = new RlsClaims(List.of(new AccessGrant(AccessGrant.Kind.TABLE, "t", Optional.of("k = 2"))),
                Optional.empty(), Optional.empty(), Map.of(), true);

        assertThat(cache.find(new RewriteCache.Key(RowFilterRewriter.Mode.RESTRICTED, CLAIMS, DEFAULTS, "SELECT 1"))).isEmpty();
        assertThat(cache.find(new RewriteCache.Key(RowFilterRewriter.Mode.RESTRICT_READ_ONLY, otherFilter, DEFAULTS, "SELECT 1"))).isEmpty();
        assertThat(cache.find(new RewriteCache.Key(RowFilterRewriter.Mode.RESTRICT_READ_ONLY, CLAIMS,
                new CatalogSnapshot.SessionDefaults("memory", "other", false), "SELECT 1"))).isEmpty();
        assertThat(cache.find(key("SELECT  1"))).isEmpty();
        assertThat(cache.find(key("SELECT 1"))).contains("kept");
    }

    @Test
    void aCacheSmallerThanAnEntryKeepsNothing() {
        RewriteCache cache = new RewriteCache(1);
        cache.put(key("SELECT 1"), "rewrite");

        assertThat(cache.find(key("SELECT 1"))).isEmpty();
    }

    @Test
    void aTextLongerThanTheLimitIsNotKept() {
        RewriteCache cache = new RewriteCache(RewriteCache.DEFAULT_MAX_CHARS);
        RewriteCache.Key longText = key("SELECT " + "1 + ".repeat(RewriteCache.MAX_TEXT_CHARS) + "1");
        cache.put(longText, "rewrite");

        assertThat(cache.find(longText)).isEmpty();
    }

    @Test
    void concurrentSessionsOfDifferentTenantsSharingTheCacheEachReadOnlyTheirOwnRows() throws Exception {
        try (Connection database = DriverManager.getConnection("jdbc:duckdb:"); Statement setup = database.createStatement()) {
            setup.execute("CREATE TABLE t AS SELECT range AS id, range % 4 AS tenant FROM range(400)");
            CatalogCache shared = new CatalogCache();
            CatalogCache none = new CatalogCache(new RewriteCache(1, false));
            int clients = 8;
            List<String> texts = new ArrayList<>();
            for (int i = 0; i < 25; i++) {
                texts.add("SELECT count(*), count(DISTINCT tenant), min(tenant) FROM t WHERE id >= " + i);
            }
            try (ExecutorService pool = Executors.newFixedThreadPool(clients)) {
                List<Future<Integer>> checked = new ArrayList<>();
                for (int client = 0; client < clients; client++) {
                    int tenant = client % 4;
                    checked.add(pool.submit(() -> {
                        Map<String, Object> claims = Map.of(RlsClaims.TABLE, "t", RlsClaims.FILTER, "tenant = " + tenant);
                        RowLevelSecurity session = RowLevelSecurity.of(AccessMode.RESTRICT_READ_ONLY, claims, shared).orElseThrow();
                        RowLevelSecurity uncached = RowLevelSecurity.of(AccessMode.RESTRICT_READ_ONLY, claims, none).orElseThrow();
                        int runs = 0;
                        try (Connection connection = ((DuckDBConnection) database).duplicate(); Statement statement = connection.createStatement()) {
                            for (int round = 0; round < 4; round++) {
                                for (String text : texts) {
                                    String rewritten = session.admit(connection, text);
                                    assertThat(rewritten).isEqualTo(uncached.admit(connection, text));
                                    try (ResultSet rs = statement.executeQuery(rewritten)) {
                                        rs.next();
                                        assertThat(rs.getLong(2)).as(text).isEqualTo(1);
                                        assertThat(rs.getLong(3)).as(text).isEqualTo(tenant);
                                    }
                                    runs++;
                                }
                            }
                        }
                        return runs;
                    }));
                }
                for (Future<Integer> result : checked) {
                    assertThat(result.get(120, TimeUnit.SECONDS)).isEqualTo(4 * texts.size());
                }
            }
        }
    }

    @Test
    void textsDifferingOnlyInTheirLiteralsShareOneShapedRewriteAndEachRunsWithItsOwnLiterals() throws SQLException {
        try (Connection connection = DriverManager.getConnection("jdbc:duckdb:"); Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE t AS SELECT range AS id, range % 4 AS tenant FROM range(400)");
            CatalogCache shared = new CatalogCache();
            Map<String, Object> claims = Map.of(RlsClaims.TABLE, "t", RlsClaims.FILTER, "tenant = 1");
            RowLevelSecurity session = RowLevelSecurity.of(AccessMode.RESTRICT_READ_ONLY, claims, shared).orElseThrow();
            RowLevelSecurity unshaped = RowLevelSecurity.of(AccessMode.RESTRICT_READ_ONLY, claims,
                    new CatalogCache(new RewriteCache(1, false))).orElseThrow();
            String first = "SELECT id, 'first' AS tag FROM t WHERE id = 5";
            String second = "SELECT id, 'second, with '' a quote' AS tag FROM t WHERE id = 9";

            String firstRewrite = session.admit(connection, first);
            assertThat(shared.rewrites().size()).as("the text and its shape").isEqualTo(2);
            String secondRewrite = session.admit(connection, second);

            assertThat(shared.rewrites().size()).as("one more text, no new shape").isEqualTo(3);
            assertThat(firstRewrite).isEqualTo(unshaped.admit(connection, first));
            assertThat(secondRewrite).isEqualTo(unshaped.admit(connection, second));
            assertThat(rows(statement, firstRewrite)).containsExactly("5 first");
            assertThat(rows(statement, secondRewrite)).containsExactly("9 second, with ' a quote");
        }
    }

    @Test
    void aLiteralInThePlaceTheRowFilterDecidesOnKeepsItsOwnValueUnderASharedShape() throws SQLException {
        try (Connection connection = DriverManager.getConnection("jdbc:duckdb:"); Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE t AS SELECT range AS id, range % 4 AS tenant FROM range(400)");
            CatalogCache shared = new CatalogCache();
            RowLevelSecurity session = RowLevelSecurity.of(AccessMode.RESTRICT_READ_ONLY, Map.of(RlsClaims.TABLE, "t", RlsClaims.FILTER,
                    "tenant = 1"), shared).orElseThrow();

            String own = session.admit(connection, "SELECT count(*) FROM t WHERE tenant = 1");
            String other = session.admit(connection, "SELECT count(*) FROM t WHERE tenant = 2");
            String either = session.admit(connection, "SELECT count(*) FROM t WHERE tenant = 2 OR tenant = 1");

            assertThat(shared.rewrites().size()).as("three texts, two shapes").isEqualTo(5);
            assertThat(rows(statement, own)).containsExactly("100");
            assertThat(rows(statement, other)).containsExactly("0");
            assertThat(rows(statement, either)).containsExactly("100");
        }
    }

    @Test
    void aFileReadersPathStaysInTheShapeSoAGrantedPathNeverAdmitsAnother() throws Exception {
        java.nio.file.Path granted = java.nio.file.Files.createTempDirectory("rls-granted");
        java.nio.file.Path other = java.nio.file.Files.createTempDirectory("rls-other");
        java.nio.file.Files.writeString(granted.resolve("a.csv"), "key,value\nk1,v1\n");
        java.nio.file.Files.writeString(other.resolve("a.csv"), "key,value\nk1,secret\n");
        String access = "[[\"path\",\"" + granted + "/\",\"*\",\"true\"]]";
        String admitted = "SELECT value FROM read_csv('" + granted.resolve("a.csv") + "')";
        String refused = "SELECT value FROM read_csv('" + other.resolve("a.csv") + "')";
        try (Connection connection = DriverManager.getConnection("jdbc:duckdb:"); Statement statement = connection.createStatement()) {
            for (List<String> order : List.of(List.of(admitted, refused), List.of(refused, admitted))) {
                RowLevelSecurity session = RowLevelSecurity.of(AccessMode.RESTRICTED, Map.of(RlsClaims.ACCESS, access), new CatalogCache())
                        .orElseThrow();
                for (String text : order) {
                    if (text.equals(admitted)) {
                        assertThat(rows(statement, session.admit(connection, text))).containsExactly("v1");
                    } else {
                        assertThatThrownBy(() -> session.admit(connection, text)).isInstanceOf(dev.mallard.core.error.MallardException.class)
                                .hasMessageContaining("No access to read_csv('" + other.resolve("a.csv") + "')");
                    }
                }
            }
        }
    }

    /** The rows of a query, each its columns joined by a space. */
    private static List<String> rows(Statement statement, String sql) throws SQLException {
        List<String> rows = new ArrayList<>();
        try (ResultSet rs = statement.executeQuery(sql)) {
            int columns = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                List<String> values = new ArrayList<>();
                for (int i = 1; i <= columns; i++) {
                    values.add(rs.getString(i));
                }
                rows.add(String.join(" ", values));
            }
        }
        return rows;
    }

    private static RewriteCache.Key key(String sql) {
        return new RewriteCache.Key(RowFilterRewriter.Mode.RESTRICT_READ_ONLY, CLAIMS, DEFAULTS, sql);
    }
}
