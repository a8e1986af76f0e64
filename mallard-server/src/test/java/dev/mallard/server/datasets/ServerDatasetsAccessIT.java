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
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Datasets and named queries declared in a server's configuration, under both row-level security modes, with
 * DazzleDuck's {@code x-dd-access} claims: each caller reads only the rows its filter allows, cached answers are
 * never shared between filters, and RESTRICTED refuses what reads outside its one grant.
 */
class ServerDatasetsAccessIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    enum Mode { RESTRICTED, RESTRICT_READ_ONLY }

    private record Running(MallardServer server, String ada, String bob) {}

    @TempDir
    static Path dir;

    private static final Map<Mode, Running> SERVERS = new EnumMap<>(Mode.class);

    @BeforeAll
    static void start() throws Exception {
        Files.writeString(dir.resolve("startup.sql"), """
                CREATE TABLE events AS SELECT city, TIMESTAMP '2026-01-01 00:00:00' + to_minutes(i) AS ts, 1 AS n
                FROM range(0, 120) r(i), (VALUES ('Baltimore'), ('Lisbon')) c(city);
                CREATE TABLE secrets AS SELECT 'the vault code' AS secret;
                CREATE TABLE named_queries (id BIGINT, name VARCHAR, template VARCHAR, validators VARCHAR[], description VARCHAR);
                INSERT INTO named_queries VALUES
                  (1, 'cities', 'SELECT city, count(*) AS events FROM events GROUP BY city ORDER BY city', NULL, 'Events per city'),
                  (2, 'secret', 'SELECT secret FROM secrets', NULL, 'What no grant opens');
                """);
        for (Mode mode : Mode.values()) {
            Path file = dir.resolve(mode + ".yml");
            Files.writeString(file, """
                    warehouse: warehouse-%s
                    host: 127.0.0.1
                    http: {port: 0}
                    flight: {port: 0}
                    access_mode: %s
                    startup_script: startup.sql
                    named_query_table: named_queries
                    users:
                      - {username: ada, password: ada-password, claims: {x-dd-access: '[["table", "events", "*", "city = ''Baltimore''"]]'}}
                      - {username: bob, password: bob-password, claims: {x-dd-access: '[["table", "events", "*", "city = ''Lisbon''"]]'}}
                    serve:
                      datasets:
                        - name: city_totals
                          sql: SELECT city, count(*) AS events FROM events GROUP BY city ORDER BY city
                          cache: {ttl_seconds: 300}
                        - name: secret
                          sql: SELECT secret FROM secrets
                    """.formatted(mode, mode));
            ServerConfig config = new ServerConfigReader(ConfigEnvironment.from(Map.of()), Map.of()).read(Optional.of(file), List.of());
            MallardServer server = MallardServer.start(config);
            SERVERS.put(mode, new Running(server, login(server, "ada", "ada-password"), login(server, "bob", "bob-password")));
        }
    }

    @AfterAll
    static void stop() {
        SERVERS.values().forEach(running -> running.server().close());
    }

    private static String login(MallardServer server, String user, String password) throws Exception {
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/v1/login"))
                .POST(HttpRequest.BodyPublishers.ofString("{\"username\":\"" + user + "\",\"password\":\"" + password + "\"}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return JSON.readTree(response.body()).path("accessToken").asText();
    }

    private static HttpResponse<String> dataset(Mode mode, String token, String name) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + SERVERS.get(mode).server().httpPort() + "/v1/datasets/" + name))
                .header("Authorization", "Bearer " + token).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> namedQuery(Mode mode, String token, String name) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + SERVERS.get(mode).server().httpPort() + "/v1/named-query"))
                .header("Authorization", "Bearer " + token).header("Accept", "application/jsonl")
                .POST(HttpRequest.BodyPublishers.ofString("{\"name\": \"" + name + "\"}")).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static List<String> cities(JsonNode rows) {
        List<String> cities = new ArrayList<>();
        rows.forEach(row -> cities.add(row.path("city").asText() + "=" + row.path("events").asLong()));
        return cities;
    }

    @ParameterizedTest
    @EnumSource(Mode.class)
    void aCachedDatasetAnswersEachCallerOnlyTheRowsItsAccessFilterAllows(Mode mode) throws Exception {
        Running running = SERVERS.get(mode);
        for (int round = 0; round < 2; round++) {
            JsonNode adas = JSON.readTree(dataset(mode, running.ada(), "city_totals").body());
            JsonNode bobs = JSON.readTree(dataset(mode, running.bob(), "city_totals").body());
            assertThat(cities(adas.path("rows"))).as("round %d: %s", round, adas).containsExactly("Baltimore=120");
            assertThat(cities(bobs.path("rows"))).as("round %d: %s", round, bobs).containsExactly("Lisbon=120");
            if (round == 1) {
                assertThat(adas.path("cache").asText()).isEqualTo("hit");
                assertThat(bobs.path("cache").asText()).isEqualTo("hit");
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Mode.class)
    void aDatasetReadingATableNoGrantNamesRevealsNoRow(Mode mode) throws Exception {
        HttpResponse<String> response = dataset(mode, SERVERS.get(mode).ada(), "secret");
        assertThat(response.body()).doesNotContain("the vault code");
        if (mode == Mode.RESTRICTED) {
            assertThat(response.statusCode()).as(response.body()).isEqualTo(403);
            assertThat(JSON.readTree(response.body()).path("error").path("code").asText()).isEqualTo("forbidden");
        } else {
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
            assertThat(JSON.readTree(response.body()).path("row_count").asLong()).as("a table no claim names reads as empty").isZero();
        }
    }

    @ParameterizedTest
    @EnumSource(Mode.class)
    void aNamedQueryAnswersEachCallerOnlyItsRowsAndNeverATableNoGrantNames(Mode mode) throws Exception {
        Running running = SERVERS.get(mode);
        HttpResponse<String> adas = namedQuery(mode, running.ada(), "cities");
        HttpResponse<String> bobs = namedQuery(mode, running.bob(), "cities");
        assertThat(adas.statusCode()).as(adas.body()).isEqualTo(200);
        assertThat(adas.body().strip()).isEqualTo("{\"city\":\"Baltimore\",\"events\":120}");
        assertThat(bobs.body().strip()).isEqualTo("{\"city\":\"Lisbon\",\"events\":120}");
        HttpResponse<String> secret = namedQuery(mode, running.ada(), "secret");
        assertThat(secret.body()).doesNotContain("the vault code");
        assertThat(secret.statusCode()).as(secret.body()).isEqualTo(mode == Mode.RESTRICTED ? 403 : 200);
    }
}
