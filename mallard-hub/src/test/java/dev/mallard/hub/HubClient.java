// SPDX-License-Identifier: Apache-2.0
package dev.mallard.hub;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Base64;
import java.util.Properties;

/** A client of a running hub as users reach it: HTTP (java.net.http) and the official Flight SQL JDBC driver. */
final class HubClient {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final HttpClient http = HttpClient.newHttpClient();
    private final int httpPort;
    private final int flightPort;
    private final String user;
    private final String password;

    HubClient(int httpPort, int flightPort, String user, String password) {
        this.httpPort = httpPort;
        this.flightPort = flightPort;
        this.user = user;
        this.password = password;
    }

    /** A JWT from POST /v1/login. */
    String login() throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(uri("/v1/login"))
                .POST(HttpRequest.BodyPublishers.ofString("{\"username\":\"" + user + "\",\"password\":\"" + password + "\"}")).build(),
                HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new AssertionError("login answered " + response.statusCode() + ": " + response.body());
        }
        return JSON.readTree(response.body()).path("accessToken").asText();
    }

    /** The one number a query answers, over HTTP /v1/query (JSON lines, Basic credentials). */
    long httpNumber(String sql) throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(uri("/v1/query?q=" + URLEncoder.encode(sql, StandardCharsets.UTF_8)))
                .header("Authorization", "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8)))
                .header("Accept", "application/jsonl").build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new AssertionError("/v1/query answered " + response.statusCode() + ": " + response.body());
        }
        JsonNode row = JSON.readTree(response.body().lines().findFirst().orElseThrow());
        JsonNode value = row.elements().next();
        return value.isNull() ? 0 : value.asLong();
    }

    /** A Flight SQL JDBC connection. */
    Connection flight() throws SQLException {
        Properties properties = new Properties();
        properties.put("user", user);
        properties.put("password", password);
        return DriverManager.getConnection("jdbc:arrow-flight-sql://127.0.0.1:" + flightPort + "/?useEncryption=false", properties);
    }

    static long number(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery(sql)) {
            rows.next();
            return rows.getLong(1);
        }
    }

    HttpResponse<String> get(String path, String token) throws Exception {
        return http.send(HttpRequest.newBuilder(uri(path)).header("Authorization", "Bearer " + token).build(), HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> getAnonymous(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(uri(path)).build(), HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> post(String path, String token) throws Exception {
        return http.send(HttpRequest.newBuilder(uri(path)).header("Authorization", "Bearer " + token).POST(HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    static JsonNode json(HttpResponse<String> response) throws Exception {
        return JSON.readTree(response.body());
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + httpPort + path);
    }
}
