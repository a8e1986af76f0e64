// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** A client of a server's HTTP API as DazzleDuck's own tests drive it: a token from /v1/login, GET ?q= or a JSON POST. */
final class DazzleDuckHttpClient {
    static final ObjectMapper JSON = new ObjectMapper();
    static final String TSV = "text/tab-separated-values";
    static final String JSONL = "application/jsonl";

    private final HttpClient http = HttpClient.newHttpClient();
    private final int port;
    private final String token;

    DazzleDuckHttpClient(int port) throws Exception {
        this.port = port;
        this.token = HttpApiITSupport.login(port);
    }

    URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    HttpRequest.Builder authorized(String path) {
        return HttpRequest.newBuilder(uri(path)).header("Authorization", "Bearer " + token);
    }

    HttpRequest.Builder get(String sql) {
        return authorized("/v1/query?q=" + URLEncoder.encode(sql, StandardCharsets.UTF_8)).GET();
    }

    HttpRequest.Builder postJson(String sql) {
        String body = JSON.createObjectNode().put("query", sql).toString();
        return authorized("/v1/query").POST(HttpRequest.BodyPublishers.ofString(body));
    }

    HttpResponse<String> text(HttpRequest.Builder request) throws Exception {
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<byte[]> bytes(HttpRequest.Builder request) throws Exception {
        return http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    HttpClient http() {
        return http;
    }

    static List<JsonNode> jsonLines(String body) throws Exception {
        List<JsonNode> rows = new ArrayList<>();
        for (String line : body.split("\n")) {
            if (!line.isBlank()) {
                rows.add(JSON.readTree(line));
            }
        }
        return rows;
    }
}
