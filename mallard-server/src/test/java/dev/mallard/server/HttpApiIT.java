// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mallard.server.config.AccessMode;
import java.io.ByteArrayInputStream;
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
import java.sql.Statement;
import java.util.Base64;
import java.util.Optional;
import java.util.Properties;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The HTTP API through java.net.http. */
class HttpApiIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path warehouse;

    static MallardServer server;
    static HttpClient http = HttpClient.newHttpClient();
    static String token;

    @BeforeAll
    static void start() throws Exception {
        Path script = warehouse.resolve("startup.sql");
        Files.writeString(script, """
                CREATE TABLE people (id INTEGER, name VARCHAR, born DATE, score DOUBLE);
                INSERT INTO people VALUES (1, 'Ada', DATE '1815-12-10', 9.5), (2, 'Tab\tbed', NULL, NULL);
                CREATE TYPE parity AS ENUM ('even', 'odd');
                """);
        server = MallardServer.start(TestServers.config(warehouse, AccessMode.COMPLETE, Optional.of(script)));
        token = login(TestServers.USER, TestServers.PASSWORD).body();
        token = JSON.readTree(token).path("accessToken").asText();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    static URI uri(String path) {
        return URI.create("http://127.0.0.1:" + server.httpPort() + path);
    }

    static HttpResponse<String> login(String user, String password) throws Exception {
        String body = JSON.createObjectNode().put("username", user).put("password", password).toString();
        return http.send(HttpRequest.newBuilder(uri("/v1/login")).POST(HttpRequest.BodyPublishers.ofString(body))
                .header("Content-Type", "application/json").build(), HttpResponse.BodyHandlers.ofString());
    }

    static HttpResponse<byte[]> query(String sql, String accept, String authorization) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri("/v1/query?q=" + URLEncoder.encode(sql, StandardCharsets.UTF_8)));
        if (accept != null) {
            request.header("Accept", accept);
        }
        if (authorization != null) {
            request.header("Authorization", authorization);
        }
        return http.send(request.GET().build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    @Test
    void healthAnswersWithoutAuth() throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(uri("/health")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).contains("UP");
    }

    @Test
    void theV1RoutesAnswerOverHttp2() throws Exception {
        // A fresh client, so its first request opens the connection and upgrades it (h2c) rather than reusing one.
        HttpClient h2 = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).build();
        HttpResponse<String> get = h2.send(HttpRequest.newBuilder(uri("/v1/query?q=" + URLEncoder.encode("SELECT 42 AS answer", StandardCharsets.UTF_8)))
                .header("Authorization", "Bearer " + token).header("Accept", "application/jsonl").GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(get.version()).isEqualTo(HttpClient.Version.HTTP_2);
        assertThat(get.statusCode()).isEqualTo(200);
        assertThat(get.body()).isEqualTo("{\"answer\":42}\n");
        HttpResponse<byte[]> post = h2.send(HttpRequest.newBuilder(uri("/v1/query")).header("Authorization", "Bearer " + token)
                .header("Accept", "text/tab-separated-values").header("Accept-Encoding", "gzip")
                .POST(HttpRequest.BodyPublishers.ofString("SELECT range AS n FROM range(100000)")).build(), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(post.version()).isEqualTo(HttpClient.Version.HTTP_2);
        assertThat(post.statusCode()).isEqualTo(200);
        String tsv = new String(new java.util.zip.GZIPInputStream(new java.io.ByteArrayInputStream(post.body())).readAllBytes(), StandardCharsets.UTF_8);
        assertThat(tsv.split("\n")).hasSize(100_001).startsWith("n", "0", "1");
        HttpResponse<String> refused = h2.send(HttpRequest.newBuilder(uri("/v1/query?q=SELECT%201")).GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(refused.version()).isEqualTo(HttpClient.Version.HTTP_2);
        assertThat(refused.statusCode()).isEqualTo(401);
    }

    @Test
    void loginAnswersABearerToken() throws Exception {
        HttpResponse<String> response = login(TestServers.USER, TestServers.PASSWORD);
        assertThat(response.statusCode()).isEqualTo(200);
        JsonNode body = JSON.readTree(response.body());
        assertThat(body.path("username").asText()).isEqualTo(TestServers.USER);
        assertThat(body.path("tokenType").asText()).isEqualTo("Bearer");
        assertThat(body.path("accessToken").asText()).matches("[\\w-]+\\.[\\w-]+\\.[\\w-]+");
    }

    @Test
    void aWrongPasswordIs401WithAnErrorBody() throws Exception {
        HttpResponse<String> response = login(TestServers.USER, "nope");
        assertThat(response.statusCode()).isEqualTo(401);
        JsonNode error = JSON.readTree(response.body()).path("error");
        assertThat(error.path("code").asText()).isEqualTo("user.auth.failed");
        assertThat(response.body()).doesNotContain("nope");
    }

    @Test
    void jsonLinesKeepJsonTypes() throws Exception {
        for (String accept : new String[] {"application/jsonl", "application/x-ndjson"}) {
            HttpResponse<byte[]> response = query("SELECT id, name, born, score FROM people ORDER BY id", accept, "Bearer " + token);
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.headers().firstValue("Content-Type")).hasValue("application/jsonl; charset=utf-8");
            assertThat(new String(response.body(), StandardCharsets.UTF_8)).isEqualTo("""
                    {"id":1,"name":"Ada","born":"1815-12-10","score":9.5}
                    {"id":2,"name":"Tab\\tbed","born":null,"score":null}
                    """);
        }
    }

    @Test
    void tsvHasAHeaderAndEscapesTabs() throws Exception {
        HttpResponse<byte[]> response = query("SELECT id, name, born FROM people ORDER BY id", "text/tab-separated-values", "Bearer " + token);
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(new String(response.body(), StandardCharsets.UTF_8)).isEqualTo("id\tname\tborn\n1\tAda\t1815-12-10\n2\tTab\\tbed\t\n");
    }

    @Test
    void arrowIsTheDefaultZstdCompressedAndStreamsEveryRow() throws Exception {
        HttpResponse<byte[]> compressed = query("SELECT range AS n FROM range(100000) ORDER BY n", null, "Bearer " + token);
        assertThat(compressed.statusCode()).isEqualTo(200);
        assertThat(compressed.headers().firstValue("Content-Type")).hasValue("application/vnd.apache.arrow.stream");
        assertThat(readArrow(compressed.body())).isEqualTo(100_000 * 99_999L / 2);
        HttpRequest plainRequest = HttpRequest.newBuilder(uri("/v1/query?q=" + URLEncoder.encode("SELECT range AS n FROM range(100000) ORDER BY n", StandardCharsets.UTF_8)))
                .header("Authorization", "Bearer " + token).header("x-dd-arrow-compression", "none").build();
        HttpResponse<byte[]> plain = http.send(plainRequest, HttpResponse.BodyHandlers.ofByteArray());
        assertThat(readArrow(plain.body())).isEqualTo(100_000 * 99_999L / 2);
        assertThat(compressed.body().length).isLessThan(plain.body().length);
        HttpResponse<byte[]> wrong = http.send(HttpRequest.newBuilder(uri("/v1/query?q=SELECT%201&x-dd-arrow-compression=lz5"))
                .header("Authorization", "Bearer " + token).build(), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(wrong.statusCode()).isEqualTo(400);
    }

    @Test
    void anEnumColumnOverArrowStaysDictionaryEncodedInEveryBatch() throws Exception {
        HttpResponse<byte[]> response = query("SELECT (CASE WHEN range % 2 = 0 THEN 'even' ELSE 'odd' END)::parity AS parity"
                + " FROM range(5000) ORDER BY range", null, "Bearer " + token);
        assertThat(response.statusCode()).isEqualTo(200);
        java.util.List<String> labels = new java.util.ArrayList<>();
        try (RootAllocator allocator = new RootAllocator();
                ArrowStreamReader reader = new ArrowStreamReader(new ByteArrayInputStream(response.body()), allocator,
                        org.apache.arrow.compression.CommonsCompressionFactory.INSTANCE)) {
            VectorSchemaRoot root = reader.getVectorSchemaRoot();
            org.apache.arrow.vector.types.pojo.DictionaryEncoding encoding = root.getSchema().getFields().get(0).getDictionary();
            assertThat(encoding).isNotNull();
            while (reader.loadNextBatch()) {
                org.apache.arrow.vector.dictionary.Dictionary dictionary = reader.getDictionaryVectors().get(encoding.getId());
                try (org.apache.arrow.vector.ValueVector decoded = org.apache.arrow.vector.dictionary.DictionaryEncoder.decode(root.getVector(0),
                        dictionary)) {
                    for (int i = 0; i < decoded.getValueCount(); i++) {
                        labels.add(String.valueOf(decoded.getObject(i)));
                    }
                }
            }
        }
        assertThat(labels).hasSize(5000);
        assertThat(labels.subList(0, 3)).containsExactly("even", "odd", "even");
        assertThat(labels.get(4999)).isEqualTo("odd");
    }

    /**
     * The sum of the first column over every batch, decompressing as needed; more than one batch is required, and the
     * values must come in the order 0, 1, 2, ... (batches compressed in parallel are still written in order).
     */
    private static long readArrow(byte[] body) throws Exception {
        long sum = 0;
        long expected = 0;
        int batches = 0;
        try (RootAllocator allocator = new RootAllocator();
                ArrowStreamReader reader = new ArrowStreamReader(new ByteArrayInputStream(body), allocator,
                        org.apache.arrow.compression.CommonsCompressionFactory.INSTANCE)) {
            VectorSchemaRoot root = reader.getVectorSchemaRoot();
            while (reader.loadNextBatch()) {
                org.apache.arrow.vector.BigIntVector n = (org.apache.arrow.vector.BigIntVector) root.getVector(0);
                for (int i = 0; i < root.getRowCount(); i++) {
                    assertThat(n.get(i)).isEqualTo(expected++);
                    sum += n.get(i);
                }
                batches++;
            }
        }
        assertThat(batches).isGreaterThan(1);
        return sum;
    }

    @Test
    void aPostedQueryRunsAndBasicCredentialsWorkWithoutLogin() throws Exception {
        String basic = "Basic " + Base64.getEncoder().encodeToString((TestServers.USER + ":" + TestServers.PASSWORD).getBytes(StandardCharsets.UTF_8));
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(uri("/v1/query"))
                .header("Authorization", basic).header("Accept", "application/jsonl")
                .POST(HttpRequest.BodyPublishers.ofString("SELECT count(*) AS n FROM people")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).isEqualTo("{\"n\":2}\n");
    }

    @Test
    void aSqlErrorIs400WithDuckDbsMessage() throws Exception {
        HttpResponse<byte[]> response = query("SELECT * FROM missing_table", "application/jsonl", "Bearer " + token);
        assertThat(response.statusCode()).isEqualTo(400);
        JsonNode error = JSON.readTree(response.body()).path("error");
        assertThat(error.path("code").asText()).isEqualTo("user.sql.invalid");
        assertThat(error.path("message").asText()).contains("missing_table");
    }

    @Test
    void aMissingOrTamperedTokenIs401() throws Exception {
        HttpResponse<byte[]> missing = query("SELECT 1", null, null);
        assertThat(missing.statusCode()).isEqualTo(401);
        assertThat(new String(missing.body(), StandardCharsets.UTF_8)).contains("no access token; get one from POST /v1/login");
        String tampered = token.substring(0, token.length() - 4) + (token.endsWith("AAAA") ? "BBBB" : "AAAA");
        HttpResponse<byte[]> response = query("SELECT 1", null, "Bearer " + tampered);
        assertThat(response.statusCode()).isEqualTo(401);
        assertThat(JSON.readTree(response.body()).path("error").path("code").asText()).isEqualTo("user.auth.failed");
    }

    @Test
    void acceptEncodingGzipCompressesTheResult() throws Exception {
        HttpResponse<byte[]> response = http.send(HttpRequest.newBuilder(uri("/v1/query?q=" + URLEncoder.encode(
                        "SELECT range AS n FROM range(1000)", StandardCharsets.UTF_8)))
                .header("Authorization", "Bearer " + token).header("Accept", "application/jsonl").header("Accept-Encoding", "gzip").build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Encoding")).hasValue("gzip");
        String body;
        try (var in = new java.util.zip.GZIPInputStream(new ByteArrayInputStream(response.body()))) {
            body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertThat(body.lines()).hasSize(1000).startsWith("{\"n\":0}");
    }

    @Test
    void aQueryPastItsTimeoutIs504() throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(uri("/v1/query?x-dd-query-timeout=1"))
                .header("Authorization", "Bearer " + token).header("Accept", "application/jsonl")
                .POST(HttpRequest.BodyPublishers.ofString("SELECT sum(hash(a.range + b.range)) FROM range(1000000) a, range(1000000) b")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(504);
        assertThat(JSON.readTree(response.body()).path("error").path("code").asText()).isEqualTo("user.sql.timeout");
    }

    @Test
    void aBodyOverTheLimitIs413() throws Exception {
        Path own = Files.createDirectories(warehouse.resolve("small-bodies"));
        try (MallardServer small = MallardServer.start(TestServers.withMaxBody(TestServers.config(own, AccessMode.COMPLETE, Optional.empty()), 64))) {
            String basic = "Basic " + Base64.getEncoder().encodeToString((TestServers.USER + ":" + TestServers.PASSWORD).getBytes(StandardCharsets.UTF_8));
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + small.httpPort() + "/v1/query"))
                    .header("Authorization", basic).POST(HttpRequest.BodyPublishers.ofString("SELECT 1 AS " + "x".repeat(100))).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).isEqualTo(413);
            assertThat(JSON.readTree(response.body()).path("error").path("code").asText()).isEqualTo("user.http.body_too_large");
            HttpResponse<String> fits = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + small.httpPort() + "/v1/query"))
                    .header("Authorization", basic).header("Accept", "application/jsonl").POST(HttpRequest.BodyPublishers.ofString("SELECT 1 AS x")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(fits.body()).isEqualTo("{\"x\":1}\n");
        }
    }

    @Test
    void cancelInterruptsTheStatementOfTheSameToken() throws Exception {
        String own = JSON.readTree(login(TestServers.USER, TestServers.PASSWORD).body()).path("accessToken").asText();
        java.util.concurrent.CompletableFuture<HttpResponse<String>> running = http.sendAsync(HttpRequest.newBuilder(uri("/v1/query"))
                .header("Authorization", "Bearer " + own).header("Accept", "application/jsonl")
                .POST(HttpRequest.BodyPublishers.ofString("SELECT sum(hash(a.range + b.range)) FROM range(1000000) a, range(1000000) b")).build(),
                HttpResponse.BodyHandlers.ofString());
        boolean cancelled = false;
        for (int attempt = 0; attempt < 300 && !cancelled; attempt++) {
            HttpResponse<String> answer = http.send(HttpRequest.newBuilder(uri("/v1/cancel")).header("Authorization", "Bearer " + own)
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(answer.statusCode()).isIn(200, 404);
            cancelled = answer.statusCode() == 200 && JSON.readTree(answer.body()).path("cancelled").asBoolean();
            if (!cancelled) {
                Thread.sleep(100);
            }
        }
        assertThat(cancelled).as("the long query was seen running and cancelled").isTrue();
        HttpResponse<String> response = running.get(60, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(response.statusCode()).isEqualTo(409);
        assertThat(JSON.readTree(response.body()).path("error").path("code").asText()).isEqualTo("user.sql.cancelled");
        HttpResponse<String> idle = http.send(HttpRequest.newBuilder(uri("/v1/cancel")).header("Authorization", "Bearer " + own).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(idle.statusCode()).isEqualTo(404);
        assertThat(JSON.readTree(idle.body()).path("error").path("code").asText()).isEqualTo("user.server.query_not_found");
    }

    @Test
    void cancelWithAnIdInterruptsOnlyTheStatementGivenThatId() throws Exception {
        String own = JSON.readTree(login(TestServers.USER, TestServers.PASSWORD).body()).path("accessToken").asText();
        java.util.concurrent.CompletableFuture<HttpResponse<String>> running = http.sendAsync(HttpRequest.newBuilder(uri("/v1/query"))
                .header("Authorization", "Bearer " + own).header("Accept", "application/jsonl").header("x-dd-query-id", "7001")
                .POST(HttpRequest.BodyPublishers.ofString("SELECT sum(hash(a.range + b.range)) FROM range(1000000) a, range(1000000) b")).build(),
                HttpResponse.BodyHandlers.ofString());
        TestServers.awaitUntil(() -> server.sessions().runningStatements() > 0, "the long query runs in DuckDB");
        HttpResponse<String> other = http.send(HttpRequest.newBuilder(uri("/v1/cancel?id=7002")).header("Authorization", "Bearer " + own)
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(other.statusCode()).isEqualTo(404);
        assertThat(other.body()).contains("query not found");
        assertThat(running).isNotDone();
        HttpResponse<String> named = http.send(HttpRequest.newBuilder(uri("/v1/cancel?id=7001")).header("Authorization", "Bearer " + own)
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(named.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(named.body()).path("cancelled").asBoolean()).isTrue();
        HttpResponse<String> response = running.get(60, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(response.statusCode()).isEqualTo(409);
        assertThat(JSON.readTree(response.body()).path("error").path("code").asText()).isEqualTo("user.sql.cancelled");
    }

    @Test
    void anAcceptOtherThanTsvOrJsonLinesAnswersArrowAsDazzleDuckDoes() throws Exception {
        for (String accept : new String[] {"text/html", "application/json", "*/*", "text/csv"}) {
            HttpResponse<byte[]> response = query("SELECT 1 AS one", accept, "Bearer " + token);
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.headers().firstValue("Content-Type")).contains("application/vnd.apache.arrow.stream");
        }
    }

    @Test
    void aTokenFromHttpLoginSelectsTheSameSessionOverFlight() throws Exception {
        String own = JSON.readTree(login(TestServers.USER, TestServers.PASSWORD).body()).path("accessToken").asText();
        HttpResponse<byte[]> set = query("CREATE TEMP TABLE shared_marker AS SELECT 7 AS v", "application/jsonl", "Bearer " + own);
        assertThat(set.statusCode()).isEqualTo(200);
        Properties properties = new Properties();
        properties.put("token", own);
        try (Connection connection = DriverManager.getConnection(TestServers.jdbcUrl(server), properties);
                Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery("SELECT v FROM shared_marker")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getInt(1)).isEqualTo(7);
        }
        assertThat(query("SELECT v FROM shared_marker", "application/jsonl", "Bearer " + token).statusCode()).isEqualTo(400);
    }
}
