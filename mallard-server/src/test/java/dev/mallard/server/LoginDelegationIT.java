// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.mallard.server.config.AccessMode;
import dev.mallard.server.plan.PlanConfig;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.grpc.CredentialCallOption;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code login_url}: a small login service on loopback decides logins; the server forwards the credentials and the
 * requested claims and signs what it answers, over HTTP and the Flight handshake.
 */
class LoginDelegationIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @TempDir
    static Path root;

    static HttpServer service;
    static MallardServer server;
    static final List<JsonNode> asked = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        service = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        service.createContext("/login", LoginDelegationIT::answer);
        service.start();
        URI url = URI.create("http://127.0.0.1:" + service.getAddress().getPort() + "/login");
        server = MallardServer.start(TestServers.config(root, AccessMode.COMPLETE, Optional.empty())
                .withPlan(new PlanConfig(List.of(), Optional.of(url))));
    }

    @AfterAll
    static void stop() {
        server.close();
        service.stop(0);
    }

    /** grace/right is granted with a team claim; a wrong password is 401; broken answers 500; garbage answers text. */
    private static void answer(HttpExchange exchange) throws java.io.IOException {
        JsonNode body = JSON.readTree(exchange.getRequestBody());
        asked.add(body);
        String user = body.path("username").asText();
        int status;
        String text;
        if (user.equals("broken")) {
            status = 500;
            text = "{\"error\": \"down\"}";
        } else if (user.equals("garbage")) {
            status = 200;
            text = "welcome!";
        } else if (body.path("password").asText().equals("right")) {
            status = 200;
            text = JSON.createObjectNode().put("username", user).set("claims", JSON.createObjectNode().put("team", "blue")
                    .put("asked", body.path("claims").path("purpose").asText("none"))).toString();
        } else {
            status = 401;
            text = "";
        }
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
        if (bytes.length > 0) {
            exchange.getResponseBody().write(bytes);
        }
        exchange.close();
    }

    @Test
    void aUserTheServiceGrantsLogsInOverHttpWithTheClaimsItAnsweredAndQueries() throws Exception {
        HttpResponse<String> login = login("{\"username\": \"grace\", \"password\": \"right\", \"claims\": {\"purpose\": \"audit\"}}");
        assertThat(login.statusCode()).as(login.body()).isEqualTo(200);
        JsonNode answer = JSON.readTree(login.body());
        assertThat(answer.path("username").asText()).isEqualTo("grace");
        assertThat(asked).anySatisfy(body -> {
            assertThat(body.path("username").asText()).isEqualTo("grace");
            assertThat(body.path("password").asText()).isEqualTo("right");
            assertThat(body.path("claims").path("purpose").asText()).isEqualTo("audit");
        });
        String token = answer.path("accessToken").asText();
        String[] parts = token.split("\\.");
        JsonNode claims = JSON.readTree(java.util.Base64.getUrlDecoder().decode(parts[1]));
        assertThat(claims.path("sub").asText()).isEqualTo("grace");
        assertThat(claims.path("team").asText()).isEqualTo("blue");
        assertThat(claims.path("asked").asText()).isEqualTo("audit");
        HttpResponse<String> query = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/v1/query?q=SELECT%2042%20AS%20n"))
                .header("Authorization", "Bearer " + token).header("Accept", "application/jsonl").build(), HttpResponse.BodyHandlers.ofString());
        assertThat(query.statusCode()).isEqualTo(200);
        assertThat(query.body().trim()).isEqualTo("{\"n\":42}");
    }

    @Test
    void aRefusalIsA401AndAFailingServiceA502WithItsCode() throws Exception {
        HttpResponse<String> wrong = login("{\"username\": \"grace\", \"password\": \"wrong\"}");
        assertThat(wrong.statusCode()).isEqualTo(401);
        assertThat(code(wrong)).isEqualTo("user.auth.failed");
        for (String user : List.of("broken", "garbage")) {
            HttpResponse<String> failed = login("{\"username\": \"" + user + "\", \"password\": \"right\"}");
            assertThat(failed.statusCode()).isEqualTo(502);
            assertThat(code(failed)).isEqualTo("system.auth.login_service_failed");
            assertThat(failed.body()).doesNotContain("right");
        }
    }

    @Test
    void anUnreachableServiceIsA502() throws Exception {
        HttpServer gone = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        int port = gone.getAddress().getPort();
        gone.stop(0);
        try (MallardServer orphan = MallardServer.start(TestServers.config(root.resolve("orphan"), AccessMode.COMPLETE, Optional.empty())
                .withPlan(new PlanConfig(List.of(), Optional.of(URI.create("http://127.0.0.1:" + port + "/login")))))) {
            HttpResponse<String> failed = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + orphan.httpPort() + "/v1/login"))
                    .POST(HttpRequest.BodyPublishers.ofString("{\"username\": \"grace\", \"password\": \"right\"}")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(failed.statusCode()).isEqualTo(502);
            assertThat(code(failed)).isEqualTo("system.auth.login_service_failed");
        }
    }

    @Test
    void theFlightHandshakeLogsInThroughTheServiceToo() throws Exception {
        try (RootAllocator allocator = new RootAllocator();
                FlightClient flight = FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", server.flightPort())).build();
                FlightSqlClient sql = new FlightSqlClient(flight)) {
            CredentialCallOption bearer = flight.authenticateBasicToken("grace", "right").orElseThrow();
            try (FlightStream stream = sql.getStream(sql.execute("SELECT 7 AS n", bearer).getEndpoints().get(0).getTicket(), bearer)) {
                assertThat(stream.next()).isTrue();
                assertThat(stream.getRoot().getVector(0).getObject(0)).isEqualTo(7);
            }
            assertThatThrownBy(() -> flight.authenticateBasicToken("grace", "wrong")).isInstanceOfSatisfying(FlightRuntimeException.class,
                    e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.UNAUTHENTICATED));
        }
    }

    private static HttpResponse<String> login(String body) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/v1/login"))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String code(HttpResponse<String> response) throws Exception {
        return JSON.readTree(response.body()).path("error").path("code").asText();
    }
}
