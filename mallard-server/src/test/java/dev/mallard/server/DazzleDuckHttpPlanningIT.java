// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import static dev.mallard.server.DazzleDuckHttpClient.JSON;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.server.auth.PasswordHash;
import dev.mallard.server.config.AccessMode;
import dev.mallard.server.config.ServerConfig;
import dev.mallard.server.config.UserAccount;
import dev.mallard.server.plan.HiveTables;
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
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * DazzleDuck's planning cases of its HTTP API, written anew as DazzleDuck runs them: a RESTRICTED server, a login whose
 * claims grant the example table's path and {@code read_parquet}, and its example Hive query (plain and aggregated)
 * planned over {@code /v1/plan}. Mallard lets a login give those claims only when the user's {@code login_claims} and
 * {@code login_paths} allow them (docs/server.md, Row-level security), so the user here lists them.
 */
class DazzleDuckHttpPlanningIT {
    static final HttpClient HTTP = HttpClient.newHttpClient();

    @TempDir
    static Path root;

    static Path example;
    static MallardServer server;
    static String auth;

    @BeforeAll
    static void start() throws Exception {
        Path data = Files.createDirectories(root.resolve("data"));
        try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:")) {
            example = HiveTables.example(duckdb, data);
        }
        UserAccount user = new UserAccount(TestServers.USER, PasswordHash.of(TestServers.PASSWORD), Map.of(), List.of("x-dd-path", "x-dd-function"), List.of(),
                List.of(example + "/"));
        server = MallardServer.start(new ServerConfig(root.resolve("warehouse"), Optional.empty(), "127.0.0.1", 0, ServerConfig.DEFAULT_HTTP_MAX_BODY_BYTES, 0,
                Optional.empty(), List.of(user), AccessMode.RESTRICTED, Optional.empty(), ServerConfig.DEFAULT_TOKEN_EXPIRY_MINUTES,
                ServerConfig.SessionLimits.DEFAULT, 1000, 0, Optional.empty()));
        ObjectNode login = JSON.createObjectNode().put("username", TestServers.USER).put("password", TestServers.PASSWORD);
        login.putObject("claims").put("x-dd-path", example.toString()).put("x-dd-function", "read_parquet");
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/v1/login"))
                .header("Accept", "application/json").POST(HttpRequest.BodyPublishers.ofString(login.toString())).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        JsonNode token = JSON.readTree(response.body());
        auth = token.path("tokenType").asText() + " " + token.path("accessToken").asText();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static String query(String kind) {
        String plain = HiveTables.exampleQuery(example);
        return kind.equals("aggregated") ? "SELECT count(*) " + plain + " GROUP BY key" : plain;
    }

    private static HttpResponse<String> plan(String sql, Optional<String> splitSize) throws Exception {
        ObjectNode body = JSON.createObjectNode().put("query", sql).put("id", 1);
        body.putNull("descriptor");
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/v1/plan"))
                .header("Accept", "application/json").header("Authorization", auth).POST(HttpRequest.BodyPublishers.ofString(body.toString()));
        splitSize.ifPresent(size -> request.header("x-dd-split-size", size));
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode splits(String sql, Optional<String> splitSize) throws Exception {
        HttpResponse<String> response = plan(sql, splitSize);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return JSON.readTree(response.body());
    }

    @ParameterizedTest
    @ValueSource(strings = {"plain", "aggregated"})
    void withoutASplitSizeTheExampleQueryPlansOneSplitWithAStatementHandle(String kind) throws Exception {
        JsonNode plan = splits(query(kind), Optional.empty());
        assertThat(plan).hasSize(1);
        assertThat(plan.get(0).path("descriptor").path("statementHandle").path("query").asText()).isEqualTo(query(kind));
    }

    @Test
    void aSplitSizeOfOneByteCutsTheExampleTableIntoItsThreeFilesWhichRunUnderTheSameGrant() throws Exception {
        JsonNode plan = splits(query("plain"), Optional.of("1"));
        assertThat(plan).hasSize(3);
        List<String> keys = new java.util.ArrayList<>();
        for (JsonNode split : plan) {
            HttpResponse<String> rows = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/v1/query"))
                    .header("Accept", "application/jsonl").header("Authorization", auth).POST(HttpRequest.BodyPublishers.ofString(JSON.createObjectNode()
                            .put("query", split.path("descriptor").path("statementHandle").path("query").asText()).toString())).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(rows.statusCode()).as(rows.body()).isEqualTo(200);
            for (JsonNode row : DazzleDuckHttpClient.jsonLines(rows.body())) {
                keys.add(row.path("key").asText());
            }
        }
        assertThat(keys).containsExactlyInAnyOrder("k1", "k2", "k3");
    }

    @Test
    void anAggregateIsOneSplitEvenWithASplitSize() throws Exception {
        // DazzleDuck plans 3 partial counts here, whose rows are not the query's: Mallard's deliberate difference.
        JsonNode plan = splits(query("aggregated"), Optional.of("1"));
        assertThat(plan).hasSize(1);
        assertThat(plan.get(0).path("descriptor").path("statementHandle").path("query").asText()).isEqualTo(query("aggregated"));
    }

    @Test
    void aDatePredicateLeavesTwoSplits() throws Exception {
        assertThat(splits(query("plain") + "WHERE dt = '2025-01-01'", Optional.of("1"))).hasSize(2);
    }

    @Test
    void aGetWithTheSplitSizeAsParameterPlansTheOneFileOfItsPartitionWithThatFilesSize() throws Exception {
        String sql = query("plain") + " where p='1'";
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/v1/plan?x-dd-split-size=1&q="
                + URLEncoder.encode(sql, StandardCharsets.UTF_8))).header("Authorization", auth).GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        JsonNode plan = JSON.readTree(response.body());
        assertThat(plan).hasSize(1);
        assertThat(plan.get(0).path("descriptor").path("statementHandle").path("splitSize").asLong())
                .isEqualTo(Files.size(example.resolve("dt=2025-01-01/p=1/result-snappy.parquet")));
    }

    @Test
    void aQueryThatDoesNotParseIs400WithDuckDbsError() throws Exception {
        // DazzleDuck answers 500 here; Mallard answers the client's mistake as one (docs/server.md).
        HttpResponse<String> response = plan(query("plain") + "WHEREdt = '2025-01-01'", Optional.of("1"));
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(response.body()).path("error").path("code").asText()).isEqualTo("user.sql.invalid");
    }
}
