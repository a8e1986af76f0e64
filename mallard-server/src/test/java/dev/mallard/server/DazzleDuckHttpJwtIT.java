// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import static dev.mallard.server.DazzleDuckHttpClient.JSON;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayInputStream;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
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

/**
 * DazzleDuck's JWT cases of its HTTP API (a query without a token, one with a login's token, cancelling a GET and a
 * JSON POST by the id the client gave, ingesting with a token whose claims name the queue), written anew against a
 * Mallard server started from DazzleDuck's keys. The bodies are the ones DazzleDuck's client serialises: a
 * {@code QueryRequest} always carries {@code id} and a {@code descriptor} that is null.
 */
class DazzleDuckHttpJwtIT {
    static final String ARROW = "application/vnd.apache.arrow.stream";

    @TempDir
    static Path warehouse;

    static Path ingestion;
    static MallardServer server;
    static final HttpClient HTTP = HttpClient.newHttpClient();

    @BeforeAll
    static void start() throws Exception {
        ingestion = Files.createDirectories(warehouse.resolve("ingestion"));
        server = TestServers.dazzleDuckIngestionServer(warehouse, ingestion);
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static HttpRequest.Builder to(String path) {
        return HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + server.httpPort() + path));
    }

    /** {@code Bearer <token>} from a JSON login as DazzleDuck's client sends it, with {@code claims} when given. */
    private static String login(Map<String, String> claims) throws Exception {
        ObjectNode body = JSON.createObjectNode().put("username", TestServers.USER).put("password", TestServers.PASSWORD);
        if (!claims.isEmpty()) {
            ObjectNode asked = body.putObject("claims");
            claims.forEach(asked::put);
        }
        HttpResponse<String> response = HTTP.send(to("/v1/login").header("Accept", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body.toString())).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        JsonNode answer = JSON.readTree(response.body());
        return answer.path("tokenType").asText() + " " + answer.path("accessToken").asText();
    }

    /** DazzleDuck's serialised {@code QueryRequest}: the query, an id, and a null descriptor. */
    private static String queryRequest(String sql, long id) {
        ObjectNode body = JSON.createObjectNode().put("query", sql).put("id", id);
        body.putNull("descriptor");
        return body.toString();
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

    private static HttpResponse<String> cancel(String auth, long id) throws Exception {
        return HTTP.send(to("/v1/cancel").header("Accept", "application/json").header("Content-Type", "application/json").header("Authorization", auth)
                .POST(HttpRequest.BodyPublishers.ofString(queryRequest(DazzleDuckHttpBasicIT.LONG_QUERY, id))).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aQueryWithoutATokenIs401() throws Exception {
        HttpResponse<String> response = HTTP.send(to("/v1/query").header("Accept", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(queryRequest("select * from generate_series(10) order by 1", 1))).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(401);
    }

    @Test
    void aLoginsTokenRunsDazzleDucksQueryRequestAsArrow() throws Exception {
        HttpResponse<byte[]> response = HTTP.send(to("/v1/query").header("Accept", "application/json").header("Authorization", login(Map.of()))
                .POST(HttpRequest.BodyPublishers.ofString(queryRequest("select * from generate_series(10) order by 1", 2))).build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(arrowLongs(response.body())).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L);
    }

    /**
     * DazzleDuck's DuckDB client case ({@code read_arrow} of a {@code /v1/query?q=} URL with an HTTP secret carrying
     * the token) needs DuckDB's httpfs and community arrow extensions, which this build cannot download; these are the
     * requests DuckDB's HTTP file system makes for it: a HEAD with the secret's header (a length of 0 or none means
     * "download it whole"), then a GET with that header and no Accept.
     */
    @Test
    void theRequestsOfDuckDbsReadArrowWithAnHttpSecretAnswerAnArrowStream() throws Exception {
        String auth = login(Map.of());
        String url = "/v1/query?q=" + URLEncoder.encode("select 1::BIGINT", StandardCharsets.UTF_8);
        HttpResponse<Void> head = HTTP.send(to(url).header("Authorization", auth).header("User-Agent", "duckdb")
                .method("HEAD", HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.discarding());
        assertThat(head.statusCode()).isEqualTo(200);
        assertThat(head.headers().firstValueAsLong("Content-Length").orElse(0)).isZero();
        HttpResponse<byte[]> get = HTTP.send(to(url).header("Authorization", auth).header("User-Agent", "duckdb").GET().build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(get.statusCode()).isEqualTo(200);
        assertThat(arrowLongs(get.body())).containsExactly(1L);
    }

    @Test
    void aGetWithAnIdIsCancelledByTheQueryRequestCarryingThatId() throws Exception {
        String auth = login(Map.of());
        CompletableFuture<HttpResponse<String>> query = HTTP.sendAsync(to("/v1/query?id=11&q=" + URLEncoder.encode(DazzleDuckHttpBasicIT.LONG_QUERY,
                StandardCharsets.UTF_8)).header("Accept", "application/json").header("Authorization", auth).GET().build(), HttpResponse.BodyHandlers.ofString());
        TestServers.awaitUntil(() -> server.sessions().runningStatements() >= 1, "the long query runs");
        HttpResponse<String> cancelled = cancel(auth, 11);
        assertThat(cancelled.statusCode()).as(cancelled.body()).isIn(Set.of(200, 202, 409));
        HttpResponse<String> answer = query.get(60, TimeUnit.SECONDS);
        assertThat(answer.statusCode()).isNotEqualTo(200);
        assertThat(answer.body().toLowerCase(java.util.Locale.ROOT)).contains("cancel");
    }

    @Test
    void aJsonPostWithAnIdIsCancelledByTheQueryRequestCarryingThatId() throws Exception {
        String auth = login(Map.of());
        CompletableFuture<HttpResponse<String>> query = HTTP.sendAsync(to("/v1/query").header("Accept", "application/json")
                .header("Content-Type", "application/json").header("Authorization", auth)
                .POST(HttpRequest.BodyPublishers.ofString(queryRequest(DazzleDuckHttpBasicIT.LONG_QUERY, 12))).build(), HttpResponse.BodyHandlers.ofString());
        TestServers.awaitUntil(() -> server.sessions().runningStatements() >= 1, "the long query runs");
        HttpResponse<String> cancelled = cancel(auth, 12);
        assertThat(cancelled.statusCode()).as(cancelled.body()).isIn(Set.of(200, 202, 409));
        HttpResponse<String> answer = query.get(60, TimeUnit.SECONDS);
        assertThat(answer.statusCode()).isNotEqualTo(200);
        assertThat(answer.body().toLowerCase(java.util.Locale.ROOT)).contains("cancel");
    }

    @Test
    void anIngestionWithATokenWhoseClaimsNameTheQueueWritesItsTenRows() throws Exception {
        String auth = login(Map.of("ingestion_queue", "secure"));
        HttpResponse<byte[]> arrow = HTTP.send(to("/v1/query?q=" + URLEncoder.encode("select * from generate_series(9)", StandardCharsets.UTF_8))
                .header("Accept", ARROW).header("Authorization", auth).GET().build(), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(arrow.statusCode()).isEqualTo(200);
        Files.createDirectories(ingestion.resolve("secure"));
        HttpResponse<String> response = HTTP.send(to("/v1/ingest?ingestion_queue=secure").header("Content-Type", ARROW).header("Authorization", auth)
                .POST(HttpRequest.BodyPublishers.ofByteArray(arrow.body())).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:"); Statement statement = duckdb.createStatement();
                ResultSet rs = statement.executeQuery("select count(*) from read_parquet('" + ingestion.resolve("secure") + "/*.parquet')")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getLong(1)).isEqualTo(10);
        }
    }
}
