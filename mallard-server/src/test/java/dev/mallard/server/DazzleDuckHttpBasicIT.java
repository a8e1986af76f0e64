// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import static dev.mallard.server.DazzleDuckHttpClient.JSON;
import static dev.mallard.server.DazzleDuckHttpClient.JSONL;
import static dev.mallard.server.DazzleDuckHttpClient.TSV;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mallard.server.config.AccessMode;
import java.io.ByteArrayInputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * DazzleDuck's basic HTTP API cases (its query, timeout, compression and limit tests) and the wire details its
 * clients depend on (JSON bodies, statement ids, cancel, HEAD, health, CORS), written anew against a Mallard server
 * whose maximum query timeout is 10 s.
 */
class DazzleDuckHttpBasicIT {
    /** DazzleDuck's long query: seconds of work on one core before its single row. */
    static final String LONG_QUERY = "WITH t AS (SELECT len(split(concat('abcdefghijklmnopqrstuvwxyz:', generate_series), ':')) AS len"
            + " FROM generate_series(1, 1000000000)) SELECT count(*) FROM t WHERE len = 10";
    static final String ORIGIN = "https://ui.example.test";

    @TempDir
    static Path warehouse;

    static MallardServer server;
    static MallardServer readOnly;
    static DazzleDuckHttpClient client;

    @BeforeAll
    static void start() throws Exception {
        // Started as DazzleDuck's tests start theirs: from --conf dazzleduck_server.* overrides.
        server = MallardServer.start(new dev.mallard.server.config.ServerConfigReader(dev.mallard.core.config.ConfigEnvironment.from(java.util.Map.of()),
                java.util.Map.of("DD_TEST_PASSWORD", TestServers.PASSWORD)).read(Optional.empty(), List.of(
                "dazzleduck_server.http.host=127.0.0.1", "dazzleduck_server.http.port=0", "dazzleduck_server.flight_sql.port=0",
                "dazzleduck_server.flight_sql.use_encryption=false", "dazzleduck_server.warehouse=\"" + warehouse + "\"",
                "dazzleduck_server.users=[{username=" + TestServers.USER + ", password=${DD_TEST_PASSWORD}, groups=[admin]}]",
                "dazzleduck_server.max_query_timeout_ms=10000", "dazzleduck_server.http.allow-origin=[\"" + ORIGIN + "\"]",
                "dazzleduck_server.startup_script_provider.content=\"CREATE TABLE dd_basic_started (n INTEGER); INSERT INTO dd_basic_started VALUES (7);\"")));
        client = new DazzleDuckHttpClient(server.httpPort());
        Path other = Files.createDirectories(warehouse.resolve("read-only"));
        readOnly = MallardServer.start(TestServers.config(other, AccessMode.READ_ONLY, Optional.empty()));
    }

    @AfterAll
    static void stop() {
        readOnly.close();
        server.close();
    }

    private static List<Long> arrowLongs(byte[] body) throws Exception {
        List<Long> values = new ArrayList<>();
        try (RootAllocator allocator = new RootAllocator(); ArrowStreamReader reader = new ArrowStreamReader(new ByteArrayInputStream(body), allocator)) {
            while (reader.loadNextBatch()) {
                VectorSchemaRoot root = reader.getVectorSchemaRoot();
                BigIntVector vector = (BigIntVector) root.getVector(0);
                for (int i = 0; i < root.getRowCount(); i++) {
                    values.add(vector.get(i));
                }
            }
        }
        return values;
    }

    private static List<Long> zeroToTen() {
        List<Long> values = new ArrayList<>();
        for (long i = 0; i <= 10; i++) {
            values.add(i);
        }
        return values;
    }

    // ---- DazzleDuck's basic cases

    @Test
    void aJsonBodyPostAcceptingJsonAnswersTheRowsAsArrow() throws Exception {
        HttpResponse<byte[]> response = client.bytes(client.postJson("select * from generate_series(10) order by 1").header("Accept", "application/json"));
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(arrowLongs(response.body())).isEqualTo(zeroToTen());
    }

    @Test
    void aGetAcceptingJsonAnswersTheRowsAsArrow() throws Exception {
        HttpResponse<byte[]> response = client.bytes(client.get("select * from generate_series(10) order by 1").header("Accept", "application/json"));
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(arrowLongs(response.body())).isEqualTo(zeroToTen());
    }

    @Test
    void aSetStatementAnswersAnArrowStreamWithoutRows() throws Exception {
        HttpResponse<byte[]> response = client.bytes(client.get("SET enable_progress_bar = true").header("Accept", "application/json"));
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type")).contains("application/vnd.apache.arrow.stream");
        try (RootAllocator allocator = new RootAllocator();
                ArrowStreamReader reader = new ArrowStreamReader(new ByteArrayInputStream(response.body()), allocator)) {
            assertThat(reader.loadNextBatch()).isFalse();
        }
    }

    @Test
    void aLoginWithClaimsAnswersABearerToken() throws Exception {
        String body = JSON.createObjectNode().put("username", TestServers.USER).put("password", TestServers.PASSWORD)
                .set("claims", JSON.createObjectNode().put("org", "123")).toString();
        HttpResponse<String> response = client.text(HttpRequest.newBuilder(client.uri("/v1/login")).header("Accept", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)));
        assertThat(response.statusCode()).isEqualTo(200);
        JsonNode answer = JSON.readTree(response.body());
        assertThat(answer.path("accessToken").asText()).isNotBlank();
        assertThat(answer.path("tokenType").asText()).isEqualTo("Bearer");
    }

    @Test
    void aOneSecondTimeoutStopsTheLongQueryWithA504() throws Exception {
        HttpResponse<String> response = client.text(client.get(LONG_QUERY).header("x-dd-query-timeout", "1"));
        assertThat(response.statusCode()).isEqualTo(504);
        assertThat(JSON.readTree(response.body()).path("error").path("code").asText()).isEqualTo("user.sql.timeout");
    }

    @Test
    void aNegativeTimeoutIsRefusedWith400() throws Exception {
        HttpResponse<String> response = client.text(client.get(LONG_QUERY).header("x-dd-query-timeout", "-1"));
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.body()).contains("non-negative");
    }

    @Test
    void aTimeoutAboveTheServersMaximumIsRefusedWith400() throws Exception {
        HttpResponse<String> response = client.text(client.get(LONG_QUERY).header("x-dd-query-timeout", "15"));
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.body()).contains("exceeds server maximum");
    }

    @Test
    void aSqlErrorIs400WithDuckDbsError() throws Exception {
        HttpResponse<String> response = client.text(client.get("select fr").header("Accept", "application/json"));
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.body()).contains("Error");
    }

    @Test
    void anUnknownArrowCompressionIs400NamingIt() throws Exception {
        HttpResponse<String> response = client.text(client.get("SELECT 1").header("x-dd-arrow-compression", "invalid_codec"));
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.body()).contains("Invalid Arrow compression codec specified").contains("invalid_codec");
    }

    @ParameterizedTest
    @ValueSource(strings = {"zstd", "ZSTD", "zstandard", "ZSTANDARD", "ZsTd", "none", "NONE", "NoNe"})
    void everySpellingOfZstdAndNoneAnswersAReadableArrowStream(String compression) throws Exception {
        HttpResponse<byte[]> response = client.bytes(client.get("SELECT 1::BIGINT").header("x-dd-arrow-compression", compression));
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(arrowLongs(response.body())).containsExactly(1L);
    }

    @Test
    void aLimitHeaderIsRefusedWith400OnACompleteServer() throws Exception {
        HttpResponse<String> response = client.text(client.get("SELECT 1").header("x-dd-limit", "5"));
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.body()).contains("is not supported by this producer");
    }

    @Test
    void aServerStartedFromDazzleDucksConfRanItsStartupScript() throws Exception {
        HttpResponse<String> response = client.text(client.get("SELECT n FROM dd_basic_started").header("Accept", JSONL));
        assertThat(response.body()).isEqualTo("{\"n\":7}\n");
    }

    // ---- the wire details

    @Test
    void limitAndOffsetCutTheRowsOnAReadOnlyServer() throws Exception {
        DazzleDuckHttpClient reader = new DazzleDuckHttpClient(readOnly.httpPort());
        HttpResponse<String> response = reader.text(reader.get("SELECT range AS n FROM range(100000) ORDER BY n").header("Accept", TSV)
                .header("x-dd-limit", "3").header("x-dd-offset", "20000").header("x-dd-fetch-size", "7000"));
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        assertThat(response.body()).isEqualTo("n\n20000\n20001\n20002\n");
        HttpResponse<String> spanning = reader.text(reader.get("SELECT range AS n FROM range(10) ORDER BY n").header("Accept", JSONL)
                .header("x-dd-offset", "8").header("x-dd-fetch-size", "3"));
        assertThat(spanning.body()).isEqualTo("{\"n\":8}\n{\"n\":9}\n");
    }

    @Test
    void rawSqlInAPostBodyStillRuns() throws Exception {
        HttpResponse<String> response = client.text(client.authorized("/v1/query").header("Accept", JSONL).POST(HttpRequest.BodyPublishers.ofString("SELECT 5 AS five")));
        assertThat(response.body()).isEqualTo("{\"five\":5}\n");
    }

    @Test
    void aStatementIdThatIsNoNumberIs400() throws Exception {
        HttpResponse<String> param = client.text(client.authorized("/v1/query?q=SELECT+1&id=abc").GET());
        assertThat(param.statusCode()).isEqualTo(400);
        assertThat(param.body()).contains("Invalid id parameter");
        HttpResponse<String> body = client.text(client.authorized("/v1/query").POST(HttpRequest.BodyPublishers.ofString("{\"query\": \"SELECT 1\", \"id\": 1.5}")));
        assertThat(body.statusCode()).isEqualTo(400);
        assertThat(body.body()).contains("Invalid id parameter");
    }

    @Test
    void aJsonBodyWithoutAQueryOrWithAnUnknownFieldIs400() throws Exception {
        HttpResponse<String> empty = client.text(client.authorized("/v1/query").POST(HttpRequest.BodyPublishers.ofString("{\"id\": 3}")));
        assertThat(empty.statusCode()).isEqualTo(400);
        HttpResponse<String> unknown = client.text(client.authorized("/v1/query").POST(HttpRequest.BodyPublishers.ofString("{\"query\": \"SELECT 1\", \"qery\": 1}")));
        assertThat(unknown.statusCode()).isEqualTo(400);
        assertThat(unknown.body()).contains("qery");
        HttpResponse<String> missing = client.text(client.authorized("/v1/query").GET());
        assertThat(missing.statusCode()).isEqualTo(400);
        assertThat(missing.body()).contains("Missing required parameter: q");
    }

    @Test
    void aStatementWithoutRowsAnswersEmptyJsonLinesAndTsvWithItsCount() throws Exception {
        client.text(client.get("CREATE TABLE dd_basic_written (n INTEGER)"));
        HttpResponse<String> jsonl = client.text(client.get("INSERT INTO dd_basic_written VALUES (1), (2)").header("Accept", JSONL));
        assertThat(jsonl.statusCode()).isEqualTo(200);
        assertThat(jsonl.body()).isEmpty();
        assertThat(jsonl.headers().firstValue("x-dd-update-count")).contains("2");
        HttpResponse<String> tsv = client.text(client.get("DELETE FROM dd_basic_written").header("Accept", TSV));
        assertThat(tsv.body()).isEmpty();
        assertThat(tsv.headers().firstValue("Content-Type")).contains("text/tab-separated-values; charset=utf-8");
    }

    @Test
    void cancelByIdStopsThatStatementOnlyAndAnUnknownIdIs404() throws Exception {
        // Two logins of one user (two sessions) on the server without a timeout; a cancel looks among the user's sessions.
        // The other statement is a result being sent (its client reads slowly), so that only one long computation runs.
        DazzleDuckHttpClient first = new DazzleDuckHttpClient(readOnly.httpPort());
        DazzleDuckHttpClient second = new DazzleDuckHttpClient(readOnly.httpPort());
        HttpResponse<java.io.InputStream> other = first.http().send(first.authorized("/v1/query?id=99003&q="
                + java.net.URLEncoder.encode("SELECT range AS n FROM range(100000000)", java.nio.charset.StandardCharsets.UTF_8))
                .header("Accept", JSONL).GET().build(), HttpResponse.BodyHandlers.ofInputStream());
        assertThat(other.statusCode()).isEqualTo(200);
        CompletableFuture<HttpResponse<String>> named = second.http().sendAsync(second.authorized("/v1/query").POST(HttpRequest.BodyPublishers.ofString(
                JSON.createObjectNode().put("query", LONG_QUERY).put("id", 99_001).toString())).build(), HttpResponse.BodyHandlers.ofString());
        TestServers.awaitUntil(() -> readOnly.sessions().runningStatements() >= 2, "the long query runs beside the result being sent");
        HttpResponse<String> unknown = first.text(first.authorized("/v1/cancel").POST(HttpRequest.BodyPublishers.ofString("{\"id\": 99002}")));
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(unknown.body()).contains("query not found");
        HttpResponse<String> answer = first.text(first.authorized("/v1/cancel").POST(HttpRequest.BodyPublishers.ofString("{\"id\": 99001}")));
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
        HttpResponse<String> stopped = named.get(60, TimeUnit.SECONDS);
        assertThat(stopped.statusCode()).isEqualTo(409);
        try (java.io.BufferedReader lines = new java.io.BufferedReader(new java.io.InputStreamReader(other.body(), java.nio.charset.StandardCharsets.UTF_8))) {
            for (int i = 0; i < 100_000; i++) {
                assertThat(lines.readLine()).as("the other statement's rows still flow").isEqualTo("{\"n\":" + i + "}");
            }
            HttpResponse<String> rest = first.text(first.authorized("/v1/cancel?id=99003").POST(HttpRequest.BodyPublishers.noBody()));
            assertThat(rest.statusCode()).isEqualTo(200);
        }
        TestServers.awaitUntil(() -> readOnly.sessions().runningStatements() == 0, "both statements ended");
    }

    @Test
    void oneHundredThirtyLoginsOfOneUserAreAllServedPastTheSessionCap() throws Exception {
        // max_sessions_per_user is 128: the sessions least recently used are reclaimed, not the 129th client refused.
        List<DazzleDuckHttpClient> clients = new ArrayList<>();
        for (int i = 0; i < 130; i++) {
            DazzleDuckHttpClient login = new DazzleDuckHttpClient(server.httpPort());
            clients.add(login);
            HttpResponse<String> response = login.text(login.get("SELECT " + i + " AS i").header("Accept", JSONL));
            assertThat(response.statusCode()).as("login %d: %s", i, response.body()).isEqualTo(200);
            assertThat(response.body()).isEqualTo("{\"i\":" + i + "}\n");
        }
        assertThat(server.sessions().ofUser(TestServers.USER).size()).isLessThanOrEqualTo(128);
        HttpResponse<String> first = clients.get(0).text(clients.get(0).get("SELECT 'again' AS a").header("Accept", JSONL));
        assertThat(first.body()).as("a reclaimed session's token gets a fresh one").isEqualTo("{\"a\":\"again\"}\n");
    }

    @Test
    void healthAndCancelAnswerWhileAsManyStatementsComputeAsTheMachineHasCores() throws Exception {
        int cores = Runtime.getRuntime().availableProcessors();
        List<DazzleDuckHttpClient> clients = new ArrayList<>();
        List<CompletableFuture<HttpResponse<String>>> running = new ArrayList<>();
        for (int i = 0; i < cores; i++) {
            DazzleDuckHttpClient login = new DazzleDuckHttpClient(readOnly.httpPort());
            clients.add(login);
            running.add(login.http().sendAsync(login.authorized("/v1/query").POST(HttpRequest.BodyPublishers.ofString(
                    JSON.createObjectNode().put("query", LONG_QUERY).put("id", 77_000 + i).toString())).build(), HttpResponse.BodyHandlers.ofString()));
        }
        TestServers.awaitUntil(() -> readOnly.sessions().runningStatements() >= cores, "a long statement per core computes");
        // A bound against hanging (the statements compute for minutes), not a timing check.
        HttpResponse<String> health = clients.get(0).http().send(HttpRequest.newBuilder(clients.get(0).uri("/health"))
                .timeout(java.time.Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(health.statusCode()).isEqualTo(200);
        for (int i = 0; i < cores; i++) {
            HttpResponse<String> cancel = clients.get(i).text(clients.get(i).authorized("/v1/cancel?id=" + (77_000 + i))
                    .timeout(java.time.Duration.ofSeconds(60)).POST(HttpRequest.BodyPublishers.noBody()));
            assertThat(cancel.statusCode()).isEqualTo(200);
        }
        for (CompletableFuture<HttpResponse<String>> statement : running) {
            assertThat(statement.get(60, TimeUnit.SECONDS).statusCode()).isEqualTo(409);
        }
    }

    @Test
    void headOnTheQueryRouteAnswers200() throws Exception {
        HttpResponse<Void> response = client.http().send(HttpRequest.newBuilder(client.uri("/v1/query")).method("HEAD", HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.discarding());
        assertThat(response.statusCode()).isEqualTo(200);
    }

    @Test
    void healthAnswersDazzleDucksFields() throws Exception {
        client.text(client.get("SELECT 1"));
        HttpResponse<String> response = client.text(java.net.http.HttpRequest.newBuilder(client.uri("/health")).GET());
        assertThat(response.statusCode()).isEqualTo(200);
        JsonNode health = JSON.readTree(response.body());
        assertThat(health.path("status").asText()).isEqualTo("UP");
        assertThat(health.path("uptime_seconds").isIntegralNumber()).isTrue();
        assertThat(health.path("database").path("status").asText()).isEqualTo("UP");
        assertThat(health.path("database").path("check").asText()).isEqualTo("SELECT 1");
        assertThat(health.path("metrics").path("bytes_in").asDouble()).isPositive();
        assertThat(health.path("metrics").path("bytes_out").asDouble()).isPositive();
        assertThat(java.time.Instant.parse(health.path("timestamp").asText())).isNotNull();
    }

    @Test
    void healthIs503WhenTheDatabaseCheckFails() throws Exception {
        dev.mallard.core.engine.Engine engine = dev.mallard.core.engine.Engine.inMemory();
        java.time.Clock clock = java.time.Clock.systemUTC();
        dev.mallard.server.auth.UserDirectory users = new dev.mallard.server.auth.UserDirectory(List.of(
                new dev.mallard.server.config.UserAccount(TestServers.USER, dev.mallard.server.auth.PasswordHash.of(TestServers.PASSWORD))));
        dev.mallard.server.auth.TokenService tokens = new dev.mallard.server.auth.TokenService(new byte[64], dev.mallard.server.auth.TokenAlgorithm.HS256,
                java.time.Duration.ofMinutes(5), clock, users);
        dev.mallard.server.session.SessionRegistry sessions = new dev.mallard.server.session.SessionRegistry(engine,
                dev.mallard.server.config.ServerConfig.SessionLimits.DEFAULT, clock);
        try (sessions; dev.mallard.server.http.HttpApi api = dev.mallard.server.http.HttpApi.start("127.0.0.1", 0, users, tokens, sessions,
                new dev.mallard.server.sql.AccessPolicy(AccessMode.COMPLETE), 1000, 0, 1 << 20, Optional.empty(), List.of(),
                dev.mallard.server.http.ServerHealth.of(engine, clock),
                new dev.mallard.server.ops.ServerMetrics(new dev.mallard.core.metrics.MetricsRegistry(), sessions::size))) {
            java.net.URI health = java.net.URI.create("http://127.0.0.1:" + api.port() + "/health");
            assertThat(client.http().send(HttpRequest.newBuilder(health).build(), HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
            engine.close();
            HttpResponse<String> response = client.http().send(HttpRequest.newBuilder(health).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).isEqualTo(503);
            JsonNode answer = JSON.readTree(response.body());
            assertThat(answer.path("status").asText()).isEqualTo("DEGRADED");
            assertThat(answer.path("database").path("status").asText()).isEqualTo("DOWN");
            assertThat(answer.path("database").path("error").asText()).isNotBlank();
        }
    }

    @Test
    void anAllowedOriginGetsCorsHeadersAndItsPreflightAnswered() throws Exception {
        HttpResponse<String> preflight = client.text(HttpRequest.newBuilder(client.uri("/v1/query")).header("Origin", ORIGIN)
                .header("Access-Control-Request-Method", "POST").header("Access-Control-Request-Headers", "authorization, x-dd-limit")
                .method("OPTIONS", HttpRequest.BodyPublishers.noBody()));
        assertThat(preflight.statusCode()).isEqualTo(200);
        assertThat(preflight.headers().firstValue("Access-Control-Allow-Origin")).contains(ORIGIN);
        assertThat(preflight.headers().firstValue("Access-Control-Allow-Methods").orElseThrow()).contains("POST");
        assertThat(preflight.headers().firstValue("Access-Control-Allow-Headers").orElseThrow()).contains("x-dd-limit");
        HttpResponse<String> query = client.text(client.get("SELECT 1 AS one").header("Origin", ORIGIN).header("Accept", JSONL));
        assertThat(query.headers().firstValue("Access-Control-Allow-Origin")).contains(ORIGIN);
    }

    @Test
    void anotherOriginGetsNoCorsHeadersAndItsPreflightIs403() throws Exception {
        HttpResponse<String> preflight = client.text(HttpRequest.newBuilder(client.uri("/v1/query")).header("Origin", "https://elsewhere.test")
                .header("Access-Control-Request-Method", "POST").method("OPTIONS", HttpRequest.BodyPublishers.noBody()));
        assertThat(preflight.statusCode()).isEqualTo(403);
        HttpResponse<String> query = client.text(client.get("SELECT 1 AS one").header("Origin", "https://elsewhere.test").header("Accept", JSONL));
        assertThat(query.statusCode()).isEqualTo(200);
        assertThat(query.headers().firstValue("Access-Control-Allow-Origin")).isEmpty();
    }
}
