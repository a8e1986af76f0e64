// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/** Logs in over HTTP and returns the access token. */
final class HttpApiITSupport {
    private static final ObjectMapper JSON = new ObjectMapper();

    private HttpApiITSupport() {}

    static String login(int httpPort) throws Exception {
        String body = JSON.createObjectNode().put("username", TestServers.USER).put("password", TestServers.PASSWORD).toString();
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/v1/login"))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new AssertionError("login answered " + response.statusCode() + ": " + response.body());
        }
        return JSON.readTree(response.body()).path("accessToken").asText();
    }
}
