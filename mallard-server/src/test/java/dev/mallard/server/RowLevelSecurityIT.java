// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.server.auth.PasswordHash;
import dev.mallard.server.config.AccessMode;
import dev.mallard.server.config.ServerConfig;
import dev.mallard.server.config.UserAccount;
import dev.mallard.server.rls.RlsClaims;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * DazzleDuck's row-level security examples on RESTRICTED and RESTRICT_READ_ONLY servers, each through the HTTP API
 * (claims in the login body) and the Flight SQL JDBC driver (claims as connection properties).
 */
class RowLevelSecurityIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final String ORDERS_ABC = "[[\"table\",\"orders\",\"*\",\"tenant_id = 'abc'\"]]";

    @TempDir
    static Path warehouse;

    static MallardServer restricted;
    static MallardServer restrictReadOnly;
    static Path tenant1;

    @BeforeAll
    static void start() throws Exception {
        tenant1 = warehouse.resolve("tenant1");
        Files.createDirectories(tenant1);
        Files.createDirectories(warehouse.resolve("tenant2"));
        Path script = warehouse.resolve("startup.sql");
        Files.writeString(script, """
                CREATE TABLE orders (id INTEGER, tenant_id VARCHAR, owner_id VARCHAR, amount INTEGER);
                INSERT INTO orders VALUES (1, 'abc', 'alice', 10), (2, 'xyz', 'bob', 20), (3, 'abc', 'bob', 30), (4, 'xyz', 'alice', 40);
                CREATE TABLE items (id INTEGER, order_id INTEGER, region VARCHAR);
                INSERT INTO items VALUES (10, 1, 'us'), (11, 2, 'eu'), (12, 3, 'us'), (13, 4, 'us');
                CREATE TABLE secrets (id INTEGER, tenant_id VARCHAR);
                INSERT INTO secrets VALUES (1, 'abc');
                CREATE VIEW big_orders AS SELECT id, amount FROM orders WHERE amount >= 20;
                COPY (SELECT * FROM orders WHERE tenant_id = 'abc') TO '%s/orders.parquet' (FORMAT parquet);
                COPY (SELECT * FROM orders) TO '%s/tenant2/orders.parquet' (FORMAT parquet);
                """.formatted(tenant1, warehouse));
        List<UserAccount> users = List.of(
                new UserAccount(TestServers.USER, PasswordHash.of(TestServers.PASSWORD), Map.of(), List.copyOf(RlsClaims.NAMES)),
                new UserAccount("fixed", PasswordHash.of("fixed-password"), Map.of(RlsClaims.TABLE, "orders", RlsClaims.FILTER, "tenant_id = 'xyz'"), List.of()),
                new UserAccount("files", PasswordHash.of("files-password"),
                        Map.of(RlsClaims.ACCESS, "[[\"path\",\"" + tenant1 + "/\",\"*\",\"true\"]]"), List.of()),
                new UserAccount("granted", PasswordHash.of("granted-password"), Map.of(), List.of(RlsClaims.ACCESS, RlsClaims.PATH), List.of(),
                        List.of(warehouse.resolve("tenant2") + "/")));
        restricted = MallardServer.start(config(warehouse.resolve("restricted"), AccessMode.RESTRICTED, script, users));
        restrictReadOnly = MallardServer.start(config(warehouse.resolve("rro"), AccessMode.RESTRICT_READ_ONLY, script, users.subList(0, 2)));
    }

    private static ServerConfig config(Path dir, AccessMode mode, Path script, List<UserAccount> users) {
        return new ServerConfig(dir, Optional.empty(), "127.0.0.1", 0, ServerConfig.DEFAULT_HTTP_MAX_BODY_BYTES, 0, Optional.empty(), users, mode,
                Optional.empty(), ServerConfig.DEFAULT_TOKEN_EXPIRY_MINUTES, ServerConfig.SessionLimits.DEFAULT, 1000, 0, Optional.of(script));
    }

    @AfterAll
    static void stop() {
        restrictReadOnly.close();
        restricted.close();
    }

    // ---- RESTRICTED ----

    @Test
    void restrictedTableAccessReadsTheFilteredTableOverBothListeners() throws Exception {
        Map<String, Object> claims = Map.of(RlsClaims.ACCESS, ORDERS_ABC);
        assertThat(both(restricted, claims, "SELECT id FROM orders ORDER BY id")).containsExactly("1", "3");
        assertThat(both(restricted, claims, "SELECT sum(amount) FROM memory.main.orders")).containsExactly("40");
    }

    @Test
    void restrictedRefusesEveryOtherTableWithNoAccess() throws Exception {
        Map<String, Object> claims = Map.of(RlsClaims.ACCESS, ORDERS_ABC);
        for (String sql : List.of("SELECT * FROM secrets", "SELECT o.id FROM orders o JOIN items i ON i.order_id = o.id",
                "SELECT id FROM orders WHERE id IN (SELECT id FROM secrets)", "SELECT * FROM big_orders")) {
            assertRefusedOverBoth(restricted, claims, sql, 403, "user.access.denied", "No access to");
        }
        assertRefusedOverBoth(restricted, claims, "SELECT * FROM read_csv('/etc/passwd')", 403, "user.access.denied", "No access to read_csv");
    }

    @Test
    void restrictedLegacyTableAndFilterClaimsWithDatabaseAndSchema() throws Exception {
        Map<String, Object> claims = Map.of(RlsClaims.TABLE, "orders", RlsClaims.FILTER, "tenant_id = 'abc'", RlsClaims.DATABASE, "memory",
                RlsClaims.SCHEMA, "main");
        assertThat(both(restricted, claims, "SELECT id FROM orders ORDER BY id")).containsExactly("1", "3");
        assertRefusedOverBoth(restricted, claims, "SELECT * FROM items", 403, "user.access.denied", "No access to memory.main.items");
    }

    @Test
    void restrictedPathAccessReadsFilesUnderThePrefixOnly() throws Exception {
        String mine = "SELECT count(*) FROM read_parquet('" + tenant1.resolve("orders.parquet") + "')";
        assertThat(httpRows(restricted, "files", "files-password", Map.of(), mine)).containsExactly("2");
        assertThat(jdbcRows(restricted, "files", "files-password", Map.of(), mine)).containsExactly("2");
        String theirs = "SELECT count(*) FROM read_parquet('" + warehouse.resolve("tenant2/orders.parquet") + "')";
        assertThat(http(restricted, "files", "files-password", Map.of(), theirs).statusCode()).isEqualTo(403);
    }

    @Test
    void aPathGrantedOnlyAtLoginIsReadableThroughDuckDbsAllowListAndNothingOutsideIt() throws Exception {
        String tenant2 = warehouse.resolve("tenant2") + "/";
        Map<String, Object> grant = Map.of(RlsClaims.ACCESS, "[[\"path\",\"" + tenant2 + "\",\"*\",\"amount >= 20\"]]");
        String mine = "SELECT count(*) FROM read_parquet('" + tenant2 + "orders.parquet')";
        assertThat(httpRows(restricted, "granted", "granted-password", grant, mine)).containsExactly("3");
        assertThat(jdbcRows(restricted, "granted", "granted-password", grant, mine)).containsExactly("3");
        // Outside the grant: the rewriter refuses it before DuckDB sees it.
        String theirs = "SELECT count(*) FROM read_parquet('" + tenant1.resolve("orders.parquet") + "')";
        assertThat(http(restricted, "granted", "granted-password", grant, theirs).statusCode()).isEqualTo(403);
        // A login may not grant a path outside the user's login_paths, even one another user's fixed grant admits.
        Map<String, Object> wider = Map.of(RlsClaims.ACCESS, "[[\"path\",\"" + tenant1 + "/\",\"*\",\"true\"]]");
        HttpResponse<String> refused = login(restricted, "granted", "granted-password", wider);
        assertThat(refused.statusCode()).as(refused.body()).isEqualTo(400);
        assertThat(refused.body()).contains("user.access.claims_invalid").contains("login_paths");
        Properties properties = new Properties();
        properties.put("user", "granted");
        properties.put("password", "granted-password");
        properties.put(RlsClaims.ACCESS, wider.get(RlsClaims.ACCESS).toString());
        assertThatThrownBy(() -> DriverManager.getConnection(TestServers.jdbcUrl(restricted), properties).close())
                .hasStackTraceContaining("login_paths");
    }

    @Test
    void aProjectionExposesOnlyItsColumnsAndRefusesAnyOtherWithNoAccessInBothModesOverBothListeners() throws Exception {
        Map<String, Object> claims = Map.of(RlsClaims.ACCESS, "[[\"table\",\"orders\",\"id, tenant_id\",\"amount >= 20\"]]");
        for (MallardServer server : List.of(restricted, restrictReadOnly)) {
            assertThat(both(server, claims, "SELECT * FROM orders ORDER BY id")).containsExactly("2|xyz", "3|abc", "4|xyz");
            assertThat(both(server, claims, "SELECT count(*) FROM orders WHERE tenant_id = 'xyz'")).containsExactly("2");
            for (String sql : List.of("SELECT amount FROM orders", "SELECT id FROM orders ORDER BY owner_id",
                    "SELECT id FROM orders WHERE id IN (SELECT id FROM orders WHERE amount > 0)")) {
                assertRefusedOverBoth(server, claims, sql, 403, "user.access.denied", "No access to column");
            }
        }
    }

    @Test
    void restrictedFunctionAccessFiltersTheFunctionsRows() throws Exception {
        Map<String, Object> claims = Map.of(RlsClaims.ACCESS, "[[\"function\",\"read_parquet\",\"*\",\"tenant_id = 'abc'\"]]");
        String sql = "SELECT id FROM read_parquet('" + tenant1.resolve("orders.parquet") + "') ORDER BY id";
        assertThat(both(restricted, claims, sql)).containsExactly("1", "3");
        assertRefusedOverBoth(restricted, claims, "SELECT * FROM orders", 403, "user.access.denied", "No access to memory.main.orders");
    }

    @Test
    void restrictedTakesExactlyOneAccessEntry() throws Exception {
        Map<String, Object> claims = Map.of(RlsClaims.ACCESS, "[[\"table\",\"orders\",\"*\",\"true\"],[\"table\",\"items\",\"*\",\"true\"]]");
        HttpResponse<String> login = login(restricted, TestServers.USER, TestServers.PASSWORD, claims);
        assertThat(login.statusCode()).isEqualTo(400);
        assertThat(login.body()).contains("user.access.claims_invalid").contains("exactly one entry");
    }

    // ---- RESTRICT_READ_ONLY ----

    @Test
    void restrictReadOnlyFiltersASingleTableAndReadsOthersAsEmpty() throws Exception {
        Map<String, Object> claims = Map.of(RlsClaims.ACCESS, ORDERS_ABC);
        assertThat(both(restrictReadOnly, claims, "SELECT id FROM orders ORDER BY id")).containsExactly("1", "3");
        assertThat(both(restrictReadOnly, claims, "SELECT count(*) FROM items")).containsExactly("0");
        assertThat(both(restrictReadOnly, claims, "SELECT id FROM big_orders ORDER BY id")).containsExactly("3");
        assertThat(both(restrictReadOnly, claims, "SELECT count(*) FROM orders o WHERE EXISTS (SELECT 1 FROM orders p WHERE p.id = o.id + 1)"))
                .containsExactly("0");
    }

    @Test
    void restrictReadOnlyFiltersEachTableOfAJoinWithItsOwnFilter() throws Exception {
        Map<String, Object> claims = Map.of(RlsClaims.ACCESS,
                "[[\"table\",\"orders\",\"*\",\"owner_id = 'alice'\"],[\"table\",\"items\",\"*\",\"region = 'us'\"]]");
        assertThat(both(restrictReadOnly, claims, "SELECT o.id, i.id FROM orders o JOIN items i ON i.order_id = o.id ORDER BY 1"))
                .containsExactly("1|10", "4|13");
        assertThat(both(restrictReadOnly, claims, "SELECT count(*) FROM orders CROSS JOIN items")).containsExactly("6");
    }

    @Test
    void restrictReadOnlyLegacyTableAndFilterClaims() throws Exception {
        Map<String, Object> claims = Map.of(RlsClaims.TABLE, "orders", RlsClaims.FILTER, "tenant_id = 'abc'");
        assertThat(both(restrictReadOnly, claims, "SELECT id FROM orders ORDER BY id")).containsExactly("1", "3");
    }

    @Test
    void restrictReadOnlyNeedsAFilter() throws Exception {
        HttpResponse<String> login = login(restrictReadOnly, TestServers.USER, TestServers.PASSWORD, Map.of(RlsClaims.TABLE, "orders"));
        assertThat(login.statusCode()).isEqualTo(400);
        assertThat(login.body()).contains("user.access.claims_invalid");
    }

    @Test
    void restrictReadOnlyRefusesTableFunctionsMultipleStatementsWritesAndUnknownNodes() throws Exception {
        Map<String, Object> claims = Map.of(RlsClaims.ACCESS, ORDERS_ABC);
        assertRefusedOverBoth(restrictReadOnly, claims, "SELECT * FROM read_csv('/etc/passwd')", 403, "user.access.denied", "No access to read_csv");
        assertRefusedOverBoth(restrictReadOnly, claims, "SELECT * FROM query('SELECT * FROM secrets')", 403, "user.access.denied", "No access to query");
        assertRefusedOverBoth(restrictReadOnly, claims, "SELECT 1; SELECT 2", 403, "user.access.denied", "");
        assertRefusedOverBoth(restrictReadOnly, claims, "DELETE FROM orders", 403, "user.access.denied", "");
        assertRefusedOverBoth(restrictReadOnly, claims, "WITH x AS (DELETE FROM orders RETURNING *) SELECT count(*) FROM x", 400,
                "user.access.statement_unsupported", "DELETE_QUERY_NODE");
        assertThat(both(restrictReadOnly, Map.of(RlsClaims.ACCESS, "[[\"table\",\"orders\",\"*\",\"true\"]]"), "SELECT count(*) FROM orders"))
                .containsExactly("4");
    }

    @Test
    void variablesFromTheClaimAreReadableInSqlAndInFilters() throws Exception {
        Map<String, Object> claims = Map.of(RlsClaims.ACCESS, "[[\"table\",\"orders\",\"*\",\"tenant_id = getvariable('tenant')\"]]",
                RlsClaims.VARIABLES, "{\"tenant\":\"xyz\"}");
        assertThat(both(restrictReadOnly, claims, "SELECT id, getvariable('tenant') FROM orders ORDER BY id")).containsExactly("2|xyz", "4|xyz");
        HttpResponse<String> login = login(restrictReadOnly, TestServers.USER, TestServers.PASSWORD,
                Map.of(RlsClaims.ACCESS, ORDERS_ABC, RlsClaims.VARIABLES, "{\"tenant\":\"a\\u0001b\"}"));
        assertThat(login.statusCode()).isEqualTo(400);
        assertThat(login.body()).contains("user.access.claims_invalid").contains("control characters");
    }

    @Test
    void aUsersFixedClaimsApplyAndALoginCannotWidenThem() throws Exception {
        assertThat(httpRows(restrictReadOnly, "fixed", "fixed-password", Map.of(), "SELECT id FROM orders ORDER BY id")).containsExactly("2", "4");
        assertThat(jdbcRows(restrictReadOnly, "fixed", "fixed-password", Map.of(), "SELECT id FROM orders ORDER BY id")).containsExactly("2", "4");
        HttpResponse<String> basic = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + restrictReadOnly.httpPort() + "/v1/query?q="
                        + URLEncoder.encode("SELECT count(*) FROM orders", StandardCharsets.UTF_8)))
                .header("Authorization", "Basic " + java.util.Base64.getEncoder().encodeToString("fixed:fixed-password".getBytes(StandardCharsets.UTF_8)))
                .header("Accept", "text/tab-separated-values").GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(basic.body().lines().skip(1).toList()).as(basic.body()).containsExactly("2");
        HttpResponse<String> widened = login(restrictReadOnly, "fixed", "fixed-password", Map.of(RlsClaims.FILTER, "true"));
        assertThat(widened.statusCode()).isEqualTo(400);
        assertThat(widened.body()).contains("fixed by the server's configuration");
        assertThatThrownBy(() -> jdbcRows(restrictReadOnly, "fixed", "fixed-password", Map.of(RlsClaims.ACCESS, "[[\"table\",\"secrets\",\"*\",\"true\"]]"),
                "SELECT 1")).isInstanceOf(SQLException.class);
    }

    @Test
    void externalAccessIsOffForRestrictedSessions() throws Exception {
        HttpResponse<String> answer = http(restrictReadOnly, TestServers.USER, TestServers.PASSWORD, Map.of(RlsClaims.ACCESS, ORDERS_ABC),
                "SELECT current_setting('enable_external_access')");
        assertThat(answer.body()).contains("false");
    }

    @Test
    void aPreparedStatementWithParametersIsFilteredToo() throws Exception {
        Properties properties = TestServers.credentials();
        properties.put(RlsClaims.ACCESS, ORDERS_ABC);
        try (Connection connection = DriverManager.getConnection(TestServers.jdbcUrl(restrictReadOnly), properties);
                java.sql.PreparedStatement statement = connection.prepareStatement("SELECT id FROM orders WHERE amount > ? ORDER BY id")) {
            statement.setInt(1, 5);
            List<Integer> ids = new ArrayList<>();
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    ids.add(rs.getInt(1));
                }
            }
            assertThat(ids).containsExactly(1, 3);
            assertThatThrownBy(() -> connection.prepareStatement("SELECT * FROM read_text('/etc/passwd')")).isInstanceOf(SQLException.class)
                    .hasStackTraceContaining("No access to read_text");
        }
    }

    @Test
    void concurrentSessionsWithDifferentFiltersEachReadTheirOwnRowsOnly() throws Exception {
        List<String> tenants = List.of("abc", "xyz", "abc", "xyz", "none", "abc");
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(tenants.size());
        try {
            List<java.util.concurrent.Future<List<String>>> answers = new ArrayList<>();
            for (int i = 0; i < tenants.size(); i++) {
                String tenant = tenants.get(i);
                boolean overHttp = i % 2 == 0;
                answers.add(pool.submit(() -> {
                    Map<String, Object> claims = Map.of(RlsClaims.ACCESS, "[[\"table\",\"orders\",\"*\",\"tenant_id = getvariable('t')\"]]",
                            RlsClaims.VARIABLES, "{\"t\":\"" + tenant + "\"}");
                    List<String> seen = new ArrayList<>();
                    for (int round = 0; round < 10; round++) {
                        String sql = "SELECT DISTINCT tenant_id FROM orders o WHERE o.id IN (SELECT id FROM orders)";
                        seen.addAll(overHttp ? httpRows(restrictReadOnly, TestServers.USER, TestServers.PASSWORD, claims, sql)
                                : jdbcRows(restrictReadOnly, TestServers.USER, TestServers.PASSWORD, claims, sql));
                    }
                    return seen;
                }));
            }
            for (int i = 0; i < tenants.size(); i++) {
                List<String> seen = answers.get(i).get(2, java.util.concurrent.TimeUnit.MINUTES);
                if (tenants.get(i).equals("none")) {
                    assertThat(seen).isEmpty();
                } else {
                    assertThat(seen).hasSize(10).containsOnly(tenants.get(i));
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {
        "COPY orders TO '/tmp/mallard-rls-leak.csv'",
        "EXPORT DATABASE '/tmp/mallard-rls-export'",
        "ATTACH ':memory:' AS other",
        "INSTALL httpfs",
        "LOAD httpfs",
        "SET threads = 1",
        "RESET threads",
        "PRAGMA enable_profiling",
        "CALL checkpoint()",
        "SELECT * FROM checkpoint()",
        "WITH x AS (DELETE FROM orders RETURNING *) SELECT count(*) FROM x",
        "WITH x AS (UPDATE orders SET amount = 0 RETURNING *) SELECT count(*) FROM x",
        "SELECT id FROM orders; DELETE FROM orders",
        "SELECT * FROM query('DELETE FROM orders')",
        "SELECT * FROM query_table('secrets')",
        "SELECT * FROM read_text('/etc/passwd')",
        "SELECT * FROM glob('/etc/*')",
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM read_text('" + "/proc/self/environ" + "')",
        "SELECT dbsp_create_view('v2', 'SELECT 1')",
        "SELECT * FROM dbsp_stats()",
        "DELETE FROM orders",
        "INSERT INTO orders VALUES (9, 'abc', 'eve', 1)"
    })
    void everyEscapeIsRefusedWithACodedErrorInBothModesOverBothListeners(String sql) throws Exception {
        Map<String, Object> claims = Map.of(RlsClaims.ACCESS, ORDERS_ABC);
        for (MallardServer server : List.of(restricted, restrictReadOnly)) {
            HttpResponse<String> answer = http(server, TestServers.USER, TestServers.PASSWORD, claims, sql);
            assertThat(answer.statusCode()).as(sql).isIn(400, 403);
            assertThat(answer.body()).as(sql).containsAnyOf("user.access.denied", "user.access.statement_unsupported");
            assertThatThrownBy(() -> jdbcRows(server, TestServers.USER, TestServers.PASSWORD, claims, sql)).as(sql).isInstanceOf(SQLException.class);
            Properties properties = TestServers.credentials();
            properties.put(RlsClaims.ACCESS, ORDERS_ABC);
            try (Connection connection = DriverManager.getConnection(TestServers.jdbcUrl(server), properties); Statement statement = connection.createStatement()) {
                assertThatThrownBy(() -> statement.executeUpdate(sql)).as(sql).isInstanceOf(SQLException.class);
            }
            assertThat(both(server, Map.of(RlsClaims.ACCESS, "[[\"table\",\"orders\",\"*\",\"true\"]]"), "SELECT count(*), sum(amount) FROM orders"))
                    .containsExactly("4|100");
        }
        assertThat(Files.exists(Path.of("/tmp/mallard-rls-leak.csv"))).isFalse();
    }

    // ---- helpers ----

    /** The rows of a query over HTTP and over JDBC, required equal. */
    private static List<String> both(MallardServer server, Map<String, Object> claims, String sql) throws Exception {
        List<String> http = httpRows(server, TestServers.USER, TestServers.PASSWORD, claims, sql);
        List<String> jdbc = jdbcRows(server, TestServers.USER, TestServers.PASSWORD, claims, sql);
        assertThat(jdbc).as("JDBC answers what HTTP answers for " + sql).isEqualTo(http);
        return http;
    }

    private static void assertRefusedOverBoth(MallardServer server, Map<String, Object> claims, String sql, int status, String code, String message)
            throws Exception {
        HttpResponse<String> answer = http(server, TestServers.USER, TestServers.PASSWORD, claims, sql);
        assertThat(answer.statusCode()).as(sql).isEqualTo(status);
        assertThat(answer.body()).as(sql).contains(code).contains(message);
        assertThatThrownBy(() -> jdbcRows(server, TestServers.USER, TestServers.PASSWORD, claims, sql)).as(sql)
                .isInstanceOf(SQLException.class).hasStackTraceContaining(message);
    }

    private static HttpResponse<String> login(MallardServer server, String user, String password, Map<String, Object> claims) throws Exception {
        ObjectNode body = JSON.createObjectNode().put("username", user).put("password", password);
        body.set("claims", JSON.valueToTree(claims));
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/v1/login"))
                .POST(HttpRequest.BodyPublishers.ofString(body.toString())).build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * One token (one session) per server, user, claims and client thread: a login per query would hold a session per query
     * until idle, and two threads sharing one session would race each other's streamed results (user.server.session_busy).
     */
    private static final Map<String, String> TOKENS = new java.util.concurrent.ConcurrentHashMap<>();

    private static HttpResponse<String> http(MallardServer server, String user, String password, Map<String, Object> claims, String sql) throws Exception {
        String key = server.httpPort() + "|" + user + "|" + new java.util.TreeMap<>(claims) + "|" + Thread.currentThread().threadId();
        String token = TOKENS.get(key);
        if (token == null) {
            HttpResponse<String> login = login(server, user, password, claims);
            assertThat(login.statusCode()).as(login.body()).isEqualTo(200);
            token = JSON.readTree(login.body()).path("accessToken").asText();
            TOKENS.put(key, token);
        }
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/v1/query?q="
                        + URLEncoder.encode(sql, StandardCharsets.UTF_8))).header("Authorization", "Bearer " + token)
                .header("Accept", "text/tab-separated-values").GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    private static List<String> httpRows(MallardServer server, String user, String password, Map<String, Object> claims, String sql) throws Exception {
        HttpResponse<String> answer = http(server, user, password, claims, sql);
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
        List<String> lines = new ArrayList<>(answer.body().lines().toList());
        lines.remove(0);
        return lines.stream().map(line -> line.replace('\t', '|')).toList();
    }

    private static List<String> jdbcRows(MallardServer server, String user, String password, Map<String, Object> claims, String sql) throws SQLException {
        Properties properties = new Properties();
        properties.put("user", user);
        properties.put("password", password);
        claims.forEach((name, value) -> properties.put(name, value.toString()));
        List<String> rows = new ArrayList<>();
        try (Connection connection = DriverManager.getConnection(TestServers.jdbcUrl(server), properties);
                Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery(sql)) {
            int columns = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                List<String> values = new ArrayList<>();
                for (int i = 1; i <= columns; i++) {
                    values.add(rs.getString(i));
                }
                rows.add(String.join("|", values));
            }
        }
        return rows;
    }
}
