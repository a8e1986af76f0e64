// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.rls;

import static org.assertj.core.api.Assertions.assertThat;

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
            CatalogCache none = new CatalogCache(new RewriteCache(1));
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

    private static RewriteCache.Key key(String sql) {
        return new RewriteCache.Key(RowFilterRewriter.Mode.RESTRICT_READ_ONLY, CLAIMS, DEFAULTS, sql);
    }
}
