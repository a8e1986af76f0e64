// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import dev.mallard.server.config.AccessMode;
import dev.mallard.server.plan.DeltaTables;
import dev.mallard.server.plan.HiveTables;
import dev.mallard.server.plan.PlanConfig;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.FlightCallHeaders;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.HeaderCallOption;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.flight.grpc.CredentialCallOption;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.flight.sql.impl.FlightSql.TicketStatementQuery;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** DazzleDuck's split planning over HTTP (/v1/plan) and Flight (GetFlightInfo with x-dd-split-size), and running the splits. */
class SplitPlanningIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path root;

    static MallardServer server;
    static BufferAllocator allocator;
    static FlightClient flight;
    static FlightSqlClient sql;
    static CredentialCallOption bearer;
    static String token;
    static Path example;
    static Path large;
    static final HttpClient HTTP = HttpClient.newHttpClient();

    @BeforeAll
    static void start() throws Exception {
        server = MallardServer.start(TestServers.config(root, AccessMode.COMPLETE, Optional.empty()));
        Path warehouse = root.resolve("warehouse");
        try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:")) {
            example = HiveTables.example(duckdb, warehouse);
            large = warehouse.resolve("large");
            for (String dt : List.of("2024-01-01", "2024-06-30", "2025-01-01")) {
                for (String p : List.of("x", "y")) {
                    HiveTables.write(duckdb, large.resolve("dt=" + dt + "/p=" + p + "/part.parquet"),
                            "SELECT range AS n, 'k' || (range % 7) AS key FROM range(" + (dt.hashCode() & 1023) + ", 3000)");
                }
            }
        }
        allocator = new RootAllocator();
        flight = FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", server.flightPort())).build();
        bearer = flight.authenticateBasicToken(TestServers.USER, TestServers.PASSWORD).orElseThrow();
        sql = new FlightSqlClient(flight);
        token = HttpApiITSupport.login(server.httpPort());
    }

    @AfterAll
    static void stop() throws Exception {
        sql.close();
        allocator.close();
        server.close();
    }

    @Test
    void dazzleDucksExampleTablePlansThreeSplitsAndTwoUnderItsDatePredicate() throws Exception {
        String query = HiveTables.exampleQuery(example);
        JsonNode all = plan(query, Optional.of("1"));
        assertThat(all).hasSize(3);
        for (JsonNode split : all) {
            assertThat(split.path("endpoints").get(0).asText()).isEqualTo("http://127.0.0.1:" + server.httpPort());
            JsonNode handle = split.path("descriptor").path("statementHandle");
            assertThat(handle.path("splitSize").asLong()).isPositive();
            assertThat(handle.path("queryChecksum").asText()).isNotBlank();
            assertThat(handle.path("producerId").asText()).isEqualTo("mallard");
        }
        assertThat(plan(query + " WHERE dt = '2025-01-01'", Optional.of("1"))).hasSize(2);
    }

    @Test
    void withoutASplitSizeThePlanIsOneSplitOfTheWholeQuery() throws Exception {
        JsonNode plan = plan(HiveTables.exampleQuery(example), Optional.empty());
        assertThat(plan).hasSize(1);
        assertThat(plan.get(0).path("descriptor").path("statementHandle").path("splitSize").asLong()).isEqualTo(-1);
        assertThat(plan.get(0).path("descriptor").path("statementHandle").path("query").asText()).isEqualTo(HiveTables.exampleQuery(example));
    }

    @Test
    void getTakesTheQueryAndTheSplitSizeAsParameters() throws Exception {
        String query = HiveTables.exampleQuery(example) + " WHERE p = '1'";
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/v1/plan?x-dd-split-size=1&q="
                + URLEncoder.encode(query, StandardCharsets.UTF_8))).header("Authorization", "Bearer " + token).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        JsonNode plan = JSON.readTree(response.body());
        assertThat(plan).hasSize(1);
        assertThat(plan.get(0).path("descriptor").path("statementHandle").path("query").asText()).contains("dt=2025-01-01/p=1");
    }

    @Test
    void aBadSplitSizeOrAQueryThatDoesNotParseIsA400() throws Exception {
        assertThat(planResponse(HiveTables.exampleQuery(example), Optional.of("a lot")).statusCode()).isEqualTo(400);
        HttpResponse<String> response = planResponse("SELEC * FROM " + HiveTables.exampleQuery(example), Optional.of("1"));
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(response.body()).path("error").path("code").asText()).isEqualTo("user.sql.invalid");
    }

    @Test
    void splitsReadInParallelOverHttpAndFlightGiveExactlyTheFullResult() throws Exception {
        String query = "SELECT concat_ws('|', n, key, dt, p) AS r FROM read_parquet('" + large + "/*/*/*.parquet', hive_partitioning = true) "
                + "WHERE dt >= '2024-06-01' AND n % 3 <> 1";
        List<String> full = httpRows(query);
        JsonNode plan = plan(query, Optional.of("1"));
        assertThat(plan).hasSize(4);
        List<String> overHttp = new ArrayList<>();
        List<String> overFlight = new ArrayList<>();
        for (int i = 0; i < plan.size(); i++) {
            (i % 2 == 0 ? overHttp : overFlight).add(plan.get(i).path("descriptor").path("statementHandle").toString());
        }
        CompletableFuture<List<String>> httpClient = CompletableFuture.supplyAsync(() -> {
            List<String> rows = new ArrayList<>();
            for (String descriptor : overHttp) {
                try {
                    rows.addAll(httpRows(JSON.readTree(descriptor).path("query").asText()));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
            return rows;
        });
        CompletableFuture<List<String>> flightClient = CompletableFuture.supplyAsync(() -> {
            List<String> rows = new ArrayList<>();
            overFlight.forEach(descriptor -> rows.addAll(flightRows(ticket(descriptor))));
            return rows;
        });
        List<String> union = new ArrayList<>(httpClient.get());
        union.addAll(flightClient.get());
        Collections.sort(union);
        assertThat(union).hasSize(full.size()).isEqualTo(full);
    }

    @Test
    void aDeltaTablesSplitsReadInParallelFromTwoClientsGiveExactlyItsLiveRowsAndAPredicatePrunesThem() throws Exception {
        Path table;
        try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:")) {
            table = DeltaTables.example(duckdb, root.resolve("warehouse"));
        }
        String query = "SELECT concat_ws(chr(9), key, value, dt, p) AS r FROM read_delta('" + table + "')";
        JsonNode plan = plan(query, Optional.of("1"));
        assertThat(plan).hasSize(5);
        List<String> overHttp = new ArrayList<>();
        List<String> overFlight = new ArrayList<>();
        for (int i = 0; i < plan.size(); i++) {
            (i % 2 == 0 ? overHttp : overFlight).add(plan.get(i).path("descriptor").path("statementHandle").toString());
        }
        CompletableFuture<List<String>> httpClient = CompletableFuture.supplyAsync(() -> {
            List<String> rows = new ArrayList<>();
            for (String descriptor : overHttp) {
                try {
                    rows.addAll(httpRows(JSON.readTree(descriptor).path("query").asText()));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
            return rows;
        });
        CompletableFuture<List<String>> flightClient = CompletableFuture.supplyAsync(() -> {
            List<String> rows = new ArrayList<>();
            overFlight.forEach(descriptor -> rows.addAll(flightRows(ticket(descriptor))));
            return rows;
        });
        List<String> union = new ArrayList<>(httpClient.get());
        union.addAll(flightClient.get());
        Collections.sort(union);
        assertThat(union).isEqualTo(DeltaTables.exampleRows());
        JsonNode whole = plan(query, Optional.empty());
        assertThat(whole).hasSize(1);
        assertThat(httpRows(whole.get(0).path("descriptor").path("statementHandle").path("query").asText())).isEqualTo(DeltaTables.exampleRows());
        assertThat(plan(query + " WHERE dt = '2025-01-01'", Optional.of("1"))).hasSize(2);
        HttpResponse<String> refused = planResponse("SELECT * FROM read_delta('" + root.resolve("warehouse/not-a-table") + "')", Optional.of("1"));
        assertThat(refused.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(refused.body()).path("error").path("code").asText()).isEqualTo("user.delta.log_invalid");
        // The log is read through DuckDB, so the server's file access rules keep a table outside them unread.
        HttpResponse<String> outside = planResponse("SELECT * FROM read_delta('" + root.resolve("elsewhere") + "')", Optional.of("1"));
        assertThat(outside.statusCode()).isEqualTo(400);
        assertThat(outside.body()).contains("Permission Error");
    }

    @Test
    void getFlightInfoWithASplitSizeAnswersOneEndpointPerSplitWhoseTicketsTogetherReadTheQuery() throws Exception {
        String query = "SELECT concat_ws('|', n, key, dt, p) AS r FROM read_parquet('" + large + "/*/*/*.parquet', hive_partitioning = true) WHERE p = 'y'";
        FlightInfo info = sql.execute(query, bearer, splitSize("1"));
        assertThat(info.getEndpoints()).hasSize(3);
        List<String> union = new ArrayList<>();
        assertThat(info.getSchema().getFields()).extracting(field -> field.getName()).containsExactly("r");
        // A session runs one statement at a time: parallel readers are separate logins, as separate workers would be.
        try (FlightClient second = FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", server.flightPort())).build();
                FlightSqlClient secondSql = new FlightSqlClient(second)) {
            CredentialCallOption secondLogin = second.authenticateBasicToken(TestServers.USER, TestServers.PASSWORD).orElseThrow();
            CompletableFuture<List<String>> first = CompletableFuture.supplyAsync(() -> {
                List<String> rows = new ArrayList<>();
                for (int i = 0; i < info.getEndpoints().size(); i += 2) {
                    rows.addAll(flightRows(sql, bearer, info.getEndpoints().get(i).getTicket()));
                }
                return rows;
            });
            CompletableFuture<List<String>> other = CompletableFuture.supplyAsync(() -> {
                List<String> rows = new ArrayList<>();
                for (int i = 1; i < info.getEndpoints().size(); i += 2) {
                    rows.addAll(flightRows(secondSql, secondLogin, info.getEndpoints().get(i).getTicket()));
                }
                return rows;
            });
            union.addAll(first.get());
            union.addAll(other.get());
        }
        Collections.sort(union);
        assertThat(union).isEqualTo(httpRows(query));
        assertThat(sql.execute(query, bearer).getEndpoints()).hasSize(1);
    }

    @Test
    void aStatementThatIsNotAQueryRunsAsWithoutASplitSize() throws Exception {
        FlightInfo created = sql.execute("CREATE TABLE made_with_a_split_size AS SELECT 1 AS x", bearer, splitSize("1"));
        assertThat(created.getEndpoints()).hasSize(1);
        assertThat(httpRows("SELECT CAST(count(*) AS VARCHAR) AS r FROM made_with_a_split_size")).containsExactly("1");
    }

    @Test
    void aDescriptorChangedToReadAnotherFileIsRefused() throws Exception {
        String query = HiveTables.exampleQuery(example) + " WHERE dt = '2025-01-01'";
        JsonNode handle = plan(query, Optional.of("1")).get(0).path("descriptor").path("statementHandle");
        String forged = handle.toString().replace("p=1", "p=a%20b").replace("p=a%2520b", "p=1");
        assertThat(forged).isNotEqualTo(handle.toString());
        assertThatThrownBy(() -> flightRows(ticket(forged))).isInstanceOfSatisfying(FlightRuntimeException.class,
                e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.UNAUTHORIZED));
        assertThat(flightRows(ticket(handle.toString()))).hasSize(1);
    }

    @Test
    void endpointsNameTheDataProcessorsAndAReadOnlyServerRefusesToPlanAWrite() throws Exception {
        Path other = root.resolve("processors");
        Path table;
        try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:")) {
            table = HiveTables.example(duckdb, other.resolve("warehouse"));
        }
        try (MallardServer planner = MallardServer.start(TestServers.config(other, AccessMode.READ_ONLY, Optional.empty())
                .withPlan(new PlanConfig(List.of(URI.create("grpc+tcp://worker-1.example:59307"), URI.create("grpc+tls://worker-2.example:443")), Optional.empty())));
                FlightClient client = FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", planner.flightPort())).build();
                FlightSqlClient plannerSql = new FlightSqlClient(client)) {
            CredentialCallOption login = client.authenticateBasicToken(TestServers.USER, TestServers.PASSWORD).orElseThrow();
            FlightInfo info = plannerSql.execute(HiveTables.exampleQuery(table), login, splitSize("1"));
            assertThat(info.getEndpoints()).hasSize(3);
            for (FlightEndpoint endpoint : info.getEndpoints()) {
                assertThat(endpoint.getLocations()).extracting(location -> location.getUri().toString())
                        .containsExactly("grpc+tcp://worker-1.example:59307", "grpc+tls://worker-2.example:443");
            }
            assertThatThrownBy(() -> plannerSql.execute("CREATE TABLE t AS SELECT 1", login, splitSize("1")))
                    .isInstanceOfSatisfying(FlightRuntimeException.class, e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.UNAUTHORIZED));
        }
    }

    @Test
    void underRowLevelSecurityEachSplitRunsWithTheSessionsFilterAndTogetherTheyAreTheFilteredQuery() throws Exception {
        Path dir = root.resolve("restricted");
        java.nio.file.Files.createDirectories(dir);
        dev.mallard.server.config.UserAccount files = new dev.mallard.server.config.UserAccount("files", dev.mallard.server.auth.PasswordHash.of("files-password"),
                java.util.Map.of(dev.mallard.server.rls.RlsClaims.ACCESS, "[[\"path\",\"" + large + "/\",\"*\",\"key <> 'k2'\"]]"), List.of());
        try (MallardServer restricted = MallardServer.start(new dev.mallard.server.config.ServerConfig(dir, Optional.empty(), "127.0.0.1", 0,
                dev.mallard.server.config.ServerConfig.DEFAULT_HTTP_MAX_BODY_BYTES, 0, Optional.empty(), List.of(files), AccessMode.RESTRICTED,
                Optional.empty(), dev.mallard.server.config.ServerConfig.DEFAULT_TOKEN_EXPIRY_MINUTES, dev.mallard.server.config.ServerConfig.SessionLimits.DEFAULT,
                1000, 0, Optional.empty()))) {
            HttpResponse<String> login = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + restricted.httpPort() + "/v1/login"))
                    .POST(HttpRequest.BodyPublishers.ofString("{\"username\": \"files\", \"password\": \"files-password\"}")).build(),
                    HttpResponse.BodyHandlers.ofString());
            String restrictedToken = JSON.readTree(login.body()).path("accessToken").asText();
            // RESTRICTED admits a file reader with constant arguments only: no named parameters.
            String query = "SELECT concat_ws('|', n, key, dt, p) AS r FROM read_parquet('" + large + "/*/*/*.parquet') WHERE dt = '2025-01-01'";
            HttpResponse<String> planned = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + restricted.httpPort() + "/v1/plan"))
                    .header("Authorization", "Bearer " + restrictedToken).header("x-dd-split-size", "1")
                    .POST(HttpRequest.BodyPublishers.ofString(JSON.createObjectNode().put("query", query).toString())).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(planned.statusCode()).as(planned.body()).isEqualTo(200);
            JsonNode plan = JSON.readTree(planned.body());
            assertThat(plan).hasSize(2);
            List<String> union = new ArrayList<>();
            for (JsonNode split : plan) {
                union.addAll(httpRows(restricted, restrictedToken, split.path("descriptor").path("statementHandle").path("query").asText()));
            }
            Collections.sort(union);
            List<String> whole = httpRows(restricted, restrictedToken, query);
            assertThat(whole).isNotEmpty().noneMatch(row -> row.contains("|k2|"));
            assertThat(union).isEqualTo(whole);
            assertThat(httpRows(query)).anyMatch(row -> row.contains("|k2|"));
        }
    }

    private static CallOption splitSize(String value) {
        FlightCallHeaders headers = new FlightCallHeaders();
        headers.insert("x-dd-split-size", value);
        return new HeaderCallOption(headers);
    }

    private static Ticket ticket(String descriptor) {
        TicketStatementQuery ticket = TicketStatementQuery.newBuilder().setStatementHandle(ByteString.copyFromUtf8(descriptor)).build();
        return new Ticket(Any.pack(ticket).toByteArray());
    }

    private static List<String> flightRows(Ticket ticket) {
        return flightRows(sql, bearer, ticket);
    }

    private static List<String> flightRows(FlightSqlClient client, CredentialCallOption login, Ticket ticket) {
        List<String> rows = new ArrayList<>();
        try (FlightStream stream = client.getStream(ticket, login)) {
            while (stream.next()) {
                for (int i = 0; i < stream.getRoot().getRowCount(); i++) {
                    rows.add(String.valueOf(stream.getRoot().getVector(0).getObject(i)));
                }
            }
        } catch (FlightRuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        return rows;
    }

    /** The query's rows over {@code /v1/query} as JSON lines, sorted. */
    private static List<String> httpRows(String query) throws Exception {
        return httpRows(server, token, query);
    }

    private static List<String> httpRows(MallardServer target, String bearerToken, String query) throws Exception {
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + target.httpPort() + "/v1/query"))
                .header("Authorization", "Bearer " + bearerToken).header("Accept", "application/jsonl")
                .POST(HttpRequest.BodyPublishers.ofString(JSON.createObjectNode().put("query", query).toString())).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        List<String> rows = new ArrayList<>();
        for (String line : response.body().split("\n")) {
            if (!line.isBlank()) {
                rows.add(JSON.readTree(line).path("r").asText(JSON.readTree(line).toString()));
            }
        }
        Collections.sort(rows);
        return rows;
    }

    private static JsonNode plan(String query, Optional<String> splitSize) throws Exception {
        HttpResponse<String> response = planResponse(query, splitSize);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(type -> assertThat(type).startsWith("application/json"));
        return JSON.readTree(response.body());
    }

    private static HttpResponse<String> planResponse(String query, Optional<String> splitSize) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/v1/plan"))
                .header("Authorization", "Bearer " + token).header("Accept", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(JSON.createObjectNode().put("query", query).toString()));
        splitSize.ifPresent(size -> request.header("x-dd-split-size", size));
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
