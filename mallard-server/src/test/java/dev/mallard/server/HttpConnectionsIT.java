// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mallard.core.http.HttpEndpoints;
import dev.mallard.server.config.AccessMode;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 16's connection findings on the server's own HTTP listener, configured by its {@code http.*} keys: a client
 * stalled in its headers is closed, connections past {@code http.max_connections} get a coded refusal while the
 * others are served.
 */
class HttpConnectionsIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String BASIC = "Basic " + Base64.getEncoder().encodeToString(
            (TestServers.USER + ":" + TestServers.PASSWORD).getBytes(StandardCharsets.UTF_8));

    @TempDir
    Path root;

    private MallardServer start(HttpEndpoints.ConnectionLimits limits) {
        return MallardServer.start(TestServers.config(root, AccessMode.COMPLETE, Optional.empty()).withHttpConnections(limits));
    }

    private static HttpEndpoints.ConnectionLimits limits(Duration headerTimeout, int maxConnections) {
        HttpEndpoints.ConnectionLimits defaults = HttpEndpoints.ConnectionLimits.DEFAULT;
        return new HttpEndpoints.ConnectionLimits(defaults.readTimeout(), defaults.idleTimeout(), headerTimeout, maxConnections,
                defaults.maxConcurrentRequests());
    }

    private static String request(String sql) {
        return "GET /v1/query?q=" + URLEncoder.encode(sql, StandardCharsets.UTF_8) + " HTTP/1.1\r\nHost: here\r\nAuthorization: " + BASIC
                + "\r\nAccept: application/jsonl\r\n\r\n";
    }

    @Test
    void aClientStalledInItsHeadersIsClosedAfterTheHeaderTimeoutAndCounted() throws Exception {
        try (MallardServer server = start(limits(Duration.ofSeconds(2), 64)); Socket stalled = new Socket("127.0.0.1", server.httpPort())) {
            stalled.getOutputStream().write("POST /v1/login HTTP/1.1\r\nHost: here\r\nContent-Type: appl".getBytes(StandardCharsets.ISO_8859_1));
            stalled.getOutputStream().flush();
            stalled.setSoTimeout(120_000);
            assertThat(new String(stalled.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1)).doesNotContain("200");
            HttpResponse<String> metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                    + server.httpPort() + "/metrics")).timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(metrics.body()).containsPattern("mallard_server_http_header_timeouts_total [1-9]");
        }
    }

    @Test
    void connectionsPastTheCapAreRefusedWithACodedBodyAndTheOthersAreStillServed() throws Exception {
        int cap = 4;
        int beyond = 3;
        try (MallardServer server = start(limits(Duration.ofSeconds(30), cap))) {
            List<Socket> held = new ArrayList<>();
            try {
                for (int i = 0; i < cap; i++) {
                    Socket socket = new Socket("127.0.0.1", server.httpPort());
                    held.add(socket);
                    send(socket, request("SELECT " + i + " AS n"));
                    assertThat(response(socket)).startsWith("HTTP/1.1 200");
                }
                for (int i = 0; i < beyond; i++) {
                    try (Socket refused = new Socket("127.0.0.1", server.httpPort())) {
                        send(refused, request("SELECT 1"));
                        refused.setSoTimeout(120_000);
                        String answer = new String(refused.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                        assertThat(answer).startsWith("HTTP/1.1 503").containsIgnoringCase("Retry-After: 1");
                        String body = answer.substring(answer.indexOf("\r\n\r\n") + 4);
                        assertThat(JSON.readTree(body).path("error").path("code").asText()).isEqualTo("system.http.too_many_connections");
                    }
                }
                for (Socket socket : held) {
                    send(socket, request("SELECT 2 AS n"));
                    assertThat(response(socket)).startsWith("HTTP/1.1 200");
                }
                // The metric is read on a held connection: a new one would be refused.
                send(held.getFirst(), "GET /metrics HTTP/1.1\r\nHost: here\r\n\r\n");
                String metrics = response(held.getFirst());
                assertThat(metrics).containsPattern("mallard_server_http_connections_refused_total " + beyond);
            } finally {
                for (Socket socket : held) {
                    socket.close();
                }
            }
        }
    }

    @Test
    void aClientThatGoesAwayMidStreamIsOneDebugLineWithoutAStackTraceAndTheServerServesOn() throws Exception {
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> log = new ch.qos.logback.core.read.ListAppender<>();
        ch.qos.logback.classic.Logger root = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        ch.qos.logback.classic.Logger api = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(
                dev.mallard.server.http.HttpApi.class);
        ch.qos.logback.classic.Level level = api.getLevel();
        log.start();
        root.addAppender(log);
        api.setLevel(ch.qos.logback.classic.Level.DEBUG);
        try (MallardServer server = start(HttpEndpoints.ConnectionLimits.DEFAULT)) {
            try (Socket client = new Socket("127.0.0.1", server.httpPort())) {
                send(client, request("SELECT range AS n, repeat('x', 100) AS pad FROM range(100000000)"));
                client.setSoTimeout(120_000);
                byte[] first = client.getInputStream().readNBytes(1 << 16);
                assertThat(new String(first, StandardCharsets.ISO_8859_1)).startsWith("HTTP/1.1 200");
                client.setSoLinger(true, 0);
            }
            TestServers.awaitUntil(() -> disconnectLines(log) > 0, "the server to notice the client went away");
            try (Socket next = new Socket("127.0.0.1", server.httpPort())) {
                send(next, request("SELECT 42 AS answer"));
                assertThat(response(next)).startsWith("HTTP/1.1 200").contains("42");
            }
        } finally {
            root.detachAppender(log);
            api.setLevel(level);
        }
        assertThat(disconnectLines(log)).isEqualTo(1);
        assertThat(log.list).filteredOn(event -> event.getThrowableProxy() != null)
                .as("no log event carries a stack trace").isEmpty();
        assertThat(log.list).filteredOn(event -> event.getLevel().isGreaterOrEqual(ch.qos.logback.classic.Level.WARN))
                .as("a disconnect is not a warning").isEmpty();
    }

    private static long disconnectLines(ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> log) {
        synchronized (log) {
            return log.list.stream().filter(event -> event.getLevel() == ch.qos.logback.classic.Level.DEBUG
                    && event.getFormattedMessage().startsWith("client disconnected while streaming")).count();
        }
    }

    private static void send(Socket socket, String text) throws IOException {
        socket.getOutputStream().write(text.getBytes(StandardCharsets.UTF_8));
        socket.getOutputStream().flush();
    }

    /** Reads one whole response of a kept-alive connection: its head, then its body by Content-Length or chunks. */
    private static String response(Socket socket) throws IOException {
        socket.setSoTimeout(120_000);
        InputStream in = socket.getInputStream();
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                break;
            }
            head.append((char) b);
        }
        return head + body(in, head.toString());
    }

    private static String body(InputStream in, String head) throws IOException {
        java.util.regex.Matcher length = java.util.regex.Pattern.compile("(?i)content-length: *(\\d+)").matcher(head);
        if (length.find()) {
            return new String(in.readNBytes(Integer.parseInt(length.group(1))), StandardCharsets.UTF_8);
        }
        StringBuilder body = new StringBuilder();
        while (true) {
            StringBuilder size = new StringBuilder();
            while (!size.toString().endsWith("\r\n")) {
                int b = in.read();
                if (b < 0) {
                    return body.toString();
                }
                size.append((char) b);
            }
            int chunk = Integer.parseInt(size.toString().strip(), 16);
            if (chunk == 0) {
                in.readNBytes(2);
                return body.toString();
            }
            body.append(new String(in.readNBytes(chunk), StandardCharsets.UTF_8));
            in.readNBytes(2);
        }
    }
}
