// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.datasets;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.server.MallardServer;
import dev.mallard.server.config.ServerConfig;
import dev.mallard.server.config.ServerConfigReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A server's {@code serve:} datasets and named queries read the server's own tables as the caller's token allows:
 * under RESTRICT_READ_ONLY each user's row filter applies, and callers with different filters never share a cached answer.
 */
class ServerDatasetsIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @TempDir
    static Path dir;

    static MallardServer server;
    static String ada;
    static String bob;

    @BeforeAll
    static void start() throws Exception {
        Files.writeString(dir.resolve("startup.sql"), """
                CREATE TABLE events AS SELECT city, TIMESTAMP '2026-01-01 00:00:00' + to_minutes(i) AS ts, 1 + (i % 2) * (CASE WHEN city = 'Lisbon' THEN 10 ELSE 1 END) AS n
                FROM range(0, 1440) r(i), (VALUES ('Baltimore'), ('Lisbon')) c(city);
                CREATE TABLE named_queries (id BIGINT, name VARCHAR, template VARCHAR, validators VARCHAR[], description VARCHAR);
                INSERT INTO named_queries VALUES (1, 'cities', 'SELECT city, count(*) AS events FROM events WHERE ts >= TIMESTAMP ''{{ day }}'' GROUP BY city ORDER BY city', NULL, 'Events per city since a day');
                """);
        Files.writeString(dir.resolve("server.yml"), """
                warehouse: warehouse
                host: 127.0.0.1
                http: {port: 0}
                flight: {port: 0}
                access_mode: RESTRICT_READ_ONLY
                startup_script: startup.sql
                named_query_table: named_queries
                users:
                  - {username: ada, password: ada-password, claims: {x-dd-table: events, x-dd-filter: "city = 'Baltimore'"}}
                  - {username: bob, password: bob-password, claims: {x-dd-table: events, x-dd-filter: "city = 'Lisbon'"}}
                serve:
                  datasets:
                    - name: city_totals
                      sql: SELECT city, count(*) AS events, sum(n) AS n FROM events GROUP BY city ORDER BY city
                    - name: events_over_time
                      params:
                        - {name: since, type: timestamp}
                        - {name: until, type: timestamp}
                      range: {since: since, until: until, default: 24h}
                      grains:
                        1h: {max_range: 2d, bucket: 1h, sql: "SELECT time_bucket(INTERVAL 1 hour, ts) AS bucket, sum(n) AS n FROM events WHERE ts >= $since AND ts < $until GROUP BY 1 ORDER BY 1"}
                      cache: {ttl_seconds: 300}
                """);
        ServerConfig config = new ServerConfigReader(ConfigEnvironment.from(Map.of()), Map.of()).read(Optional.of(dir.resolve("server.yml")), List.of());
        server = MallardServer.start(config);
        ada = login("ada", "ada-password");
        bob = login("bob", "bob-password");
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    static String login(String user, String password) throws Exception {
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/v1/login"))
                .POST(HttpRequest.BodyPublishers.ofString("{\"username\":\"" + user + "\",\"password\":\"" + password + "\"}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return JSON.readTree(response.body()).path("accessToken").asText();
    }

    private static HttpResponse<String> get(String token, String pathAndQuery) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + pathAndQuery));
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static List<String> cities(JsonNode rows) {
        List<String> cities = new ArrayList<>();
        rows.forEach(row -> cities.add(row.path("city").asText()));
        return cities;
    }

    @Test
    void eachCallerReadsOnlyTheRowsItsTokenAllows() throws Exception {
        JsonNode adas = JSON.readTree(get(ada, "/v1/datasets/city_totals").body());
        JsonNode bobs = JSON.readTree(get(bob, "/v1/datasets/city_totals").body());
        assertThat(cities(adas.path("rows"))).containsExactly("Baltimore");
        assertThat(cities(bobs.path("rows"))).containsExactly("Lisbon");
        assertThat(adas.path("rows").get(0).path("events").asLong()).isEqualTo(1440);
    }

    @Test
    void callersWithOtherFiltersNeverShareACachedAnswer() throws Exception {
        String query = "/v1/datasets/events_over_time?since=2026-01-01T00:00:00Z&until=2026-01-01T06:00:00Z";
        JsonNode adaFirst = JSON.readTree(get(ada, query).body());
        JsonNode bobFirst = JSON.readTree(get(bob, query).body());
        JsonNode adaAgain = JSON.readTree(get(ada, query).body());
        assertThat(adaFirst.path("cache").asText()).isEqualTo("miss");
        assertThat(bobFirst.path("cache").asText()).as("bob's filter makes another statement, so another key").isEqualTo("miss");
        assertThat(adaAgain.path("cache").asText()).isEqualTo("hit");
        assertThat(adaFirst.path("rows").get(0).path("n").asLong()).isEqualTo(90);
        assertThat(bobFirst.path("rows").get(0).path("n").asLong()).isEqualTo(30 + 30 * 11);
    }

    @Test
    void theServersMetricsCarryTheDatasetSeries() throws Exception {
        String query = "/v1/datasets/events_over_time?since=2026-01-02T00:00:00Z&until=2026-01-02T01:00:00Z";
        get(ada, query);
        get(ada, query);
        get(ada, "/v1/datasets/city_totals");
        String metrics = get(null, "/metrics").body();
        assertThat(metrics).containsPattern("mallard_serve_requests_total\\{dataset=\"city_totals\",status=\"200\"} [1-9]")
                .containsPattern("mallard_serve_cache_requests_total\\{dataset=\"events_over_time\",outcome=\"hit\"} [1-9]")
                .containsPattern("mallard_serve_cache_requests_total\\{dataset=\"events_over_time\",outcome=\"miss\"} [1-9]")
                .containsPattern("mallard_serve_request_duration_seconds_count\\{dataset=\"events_over_time\"} [1-9]")
                .containsPattern("mallard_serve_query_duration_seconds_count\\{dataset=\"city_totals\"} [1-9]")
                .contains("mallard_serve_cache_bytes")
                .as("the server's own series are still there").contains("mallard_server_sessions");
    }

    @Test
    void aRequestWithoutAValidTokenIsUnauthorized() throws Exception {
        HttpResponse<String> none = get(null, "/v1/datasets/city_totals");
        assertThat(none.statusCode()).isEqualTo(401);
        assertThat(JSON.readTree(none.body()).path("error").path("code").asText()).isEqualTo("unauthorized");
        assertThat(get("not-a-token", "/v1/datasets").statusCode()).isEqualTo(401);
        assertThat(get(ada, "/v1/datasets").statusCode()).isEqualTo(200);
    }

    @Test
    void aRenderedNamedQueryIsFilteredByTheCallersToken() throws Exception {
        for (String[] caller : new String[][] {{ada, "Baltimore"}, {bob, "Lisbon"}}) {
            HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/v1/named-query"))
                    .header("Authorization", "Bearer " + caller[0]).header("Accept", "application/jsonl")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"name\": \"cities\", \"parameters\": {\"day\": \"2026-01-01\"}}")).build(),
                    HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
            String[] lines = response.body().strip().split("\n");
            assertThat(lines).hasSize(1);
            assertThat(JSON.readTree(lines[0]).path("city").asText()).isEqualTo(caller[1]);
        }
    }

    @Test
    void aRenderedNamedQueryThatWritesIsRefusedByTheGate() throws Exception {
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/v1/named-query"))
                .header("Authorization", "Bearer " + ada)
                .POST(HttpRequest.BodyPublishers.ofString("{\"name\": \"cities\", \"parameters\": {\"day\": \"2026-01-01' GROUP BY city; DROP TABLE events; --\"}}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(403);
        assertThat(JSON.readTree(get(bob, "/v1/datasets/city_totals").body()).path("rows").size()).as("events is still there").isEqualTo(1);
    }
}
