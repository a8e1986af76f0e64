// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

class HttpEndpointsTest {
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @AfterAll
    static void closeClient() {
        CLIENT.close();
    }

    private static HttpResponse<String> get(int port, String path) throws IOException, InterruptedException {
        return CLIENT.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aDeclaredRouteAnswersOnTheBoundPortFromAVirtualThread() throws Exception {
        try (HttpEndpoints http = HttpEndpoints.start("127.0.0.1", 0, routes -> routes
                .get("/thread", (request, response) -> response.send(Thread.currentThread().isVirtual() ? "virtual" : "platform")))) {
            assertThat(http.port()).isPositive();
            HttpResponse<String> response = get(http.port(), "/thread");
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.body()).isEqualTo("virtual");
        }
    }

    @Test
    void aPathWithNoRouteIsNotFound() throws Exception {
        try (HttpEndpoints http = HttpEndpoints.start("127.0.0.1", 0, routes -> routes.get("/here", (request, response) -> response.send("x")))) {
            assertThat(get(http.port(), "/elsewhere").statusCode()).isEqualTo(404);
        }
    }

    @Test
    void aTakenPortFailsWithTheBindCodeNamingTheAddress() {
        try (HttpEndpoints first = HttpEndpoints.start("127.0.0.1", 0, routes -> { })) {
            assertThatThrownBy(() -> HttpEndpoints.start("127.0.0.1", first.port(), routes -> { }).close())
                    .isInstanceOfSatisfying(MallardException.class, e -> {
                        assertThat(e.errorCode()).isEqualTo(ErrorCode.SYSTEM_HTTP_BIND_FAILED);
                        assertThat(e.getMessage()).contains("127.0.0.1:" + first.port());
                    });
        }
    }

    @Test
    void aClosedServerRefusesConnections() throws Exception {
        HttpEndpoints http = HttpEndpoints.start("127.0.0.1", 0, routes -> routes.get("/", (request, response) -> response.send("x")));
        int port = http.port();
        http.close();
        assertThatThrownBy(() -> get(port, "/")).isInstanceOf(ConnectException.class);
    }

    @Test
    void aPortOutsideTheRangeIsRejectedBeforeBinding() {
        assertThatThrownBy(() -> HttpEndpoints.start("127.0.0.1", 70_000, routes -> { }))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("70000");
    }

    private static final HttpEndpoints.ConnectionLimits TIGHT = new HttpEndpoints.ConnectionLimits(Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(2), 8, 2);

    /** Reads until the server closes the connection; the socket's own timeout bounds the wait far above the limit's. */
    private static String readToClose(java.net.Socket socket) throws IOException {
        socket.setSoTimeout(60_000);
        return new String(socket.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.ISO_8859_1);
    }

    @Test
    void aConnectionThatSendsNothingOrStallsInItsRequestLineIsClosed() throws Exception {
        try (HttpEndpoints http = HttpEndpoints.start("127.0.0.1", 0, java.util.Optional.empty(), TIGHT, listener -> { },
                routes -> routes.get("/x", (request, response) -> response.send("x")));
                java.net.Socket silent = new java.net.Socket("127.0.0.1", http.port());
                java.net.Socket stalled = new java.net.Socket("127.0.0.1", http.port())) {
            stalled.getOutputStream().write("GET /x HT".getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
            stalled.getOutputStream().flush();
            assertThat(readToClose(silent)).isEmpty();
            assertThat(readToClose(stalled)).doesNotContain("200");
        }
    }

    @Test
    void anIdleKeptAliveConnectionIsClosed() throws Exception {
        try (HttpEndpoints http = HttpEndpoints.start("127.0.0.1", 0, java.util.Optional.empty(), TIGHT, listener -> { },
                routes -> routes.get("/x", (request, response) -> response.send("x")));
                java.net.Socket socket = new java.net.Socket("127.0.0.1", http.port())) {
            socket.getOutputStream().write("GET /x HTTP/1.1\r\nHost: here\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
            socket.getOutputStream().flush();
            assertThat(readToClose(socket)).startsWith("HTTP/1.1 200");
        }
    }

    @Test
    void requestsPastTheConcurrencyCapAreRefusedAtOnce() throws Exception {
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch arrived = new java.util.concurrent.CountDownLatch(2);
        try (HttpEndpoints http = HttpEndpoints.start("127.0.0.1", 0, java.util.Optional.empty(), TIGHT, listener -> { },
                routes -> routes.get("/hold", (request, response) -> {
                    arrived.countDown();
                    release.await(60, java.util.concurrent.TimeUnit.SECONDS);
                    response.send("held");
                }))) {
            java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor();
            try {
                HttpClient client = HttpClient.newHttpClient();
                java.util.List<java.util.concurrent.Future<Integer>> held = new java.util.ArrayList<>();
                for (int i = 0; i < 2; i++) {
                    held.add(pool.submit(() -> client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + http.port() + "/hold"))
                            .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString()).statusCode()));
                }
                assertThat(arrived.await(60, java.util.concurrent.TimeUnit.SECONDS)).as("two requests in flight").isTrue();
                assertThat(get(http.port(), "/hold").statusCode()).isEqualTo(503);
                release.countDown();
                for (java.util.concurrent.Future<Integer> request : held) {
                    assertThat(request.get(60, java.util.concurrent.TimeUnit.SECONDS)).isEqualTo(200);
                }
            } finally {
                release.countDown();
                pool.shutdownNow();
            }
        }
    }

    @Test
    void aConnectionWhoseHeadersTrickleOrStopAfterTheRequestLineIsClosed() throws Exception {
        try (HttpEndpoints http = HttpEndpoints.start("127.0.0.1", 0, java.util.Optional.empty(), TIGHT, listener -> { },
                routes -> routes.get("/x", (request, response) -> response.send("x")));
                java.net.Socket stopped = new java.net.Socket("127.0.0.1", http.port());
                java.net.Socket trickling = new java.net.Socket("127.0.0.1", http.port())) {
            stopped.getOutputStream().write("GET /x HTTP/1.1\r\nHost: here\r\n".getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
            stopped.getOutputStream().flush();
            trickling.getOutputStream().write("GET /x HTTP/1.1\r\n".getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
            trickling.getOutputStream().flush();
            // One header line at a time, each well inside the socket read timeout, until the server closes the connection.
            java.util.concurrent.atomic.AtomicInteger sent = new java.util.concurrent.atomic.AtomicInteger();
            Thread writer = Thread.ofVirtual().start(() -> {
                try {
                    while (sent.get() < 10_000) {
                        trickling.getOutputStream().write(("X-Slow-" + sent.incrementAndGet() + ": y\r\n").getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
                        trickling.getOutputStream().flush();
                        Thread.sleep(200);
                    }
                } catch (IOException | InterruptedException e) {
                    // the server closed the connection
                }
            });
            assertThat(readToClose(stopped)).doesNotContain("200");
            assertThat(readToClose(trickling)).doesNotContain("200");
            writer.join(Duration.ofSeconds(60));
            assertThat(writer.isAlive()).as("the trickling client saw its connection closed").isFalse();
            assertThat(sent.get()).isLessThan(10_000);
            assertThat(http.headerTimeouts()).isGreaterThanOrEqualTo(2);
        }
    }

    @Test
    void connectionsPastTheCapAreAnsweredWithACodedRefusalWhileTheOthersAreStillServed() throws Exception {
        HttpEndpoints.ConnectionLimits cap = new HttpEndpoints.ConnectionLimits(Duration.ofSeconds(30), Duration.ofMinutes(5), Duration.ofMinutes(5), 3, 16);
        try (HttpEndpoints http = HttpEndpoints.start("127.0.0.1", 0, java.util.Optional.empty(), cap, listener -> { },
                routes -> routes.get("/x", (request, response) -> response.send("x")))) {
            java.util.List<java.net.Socket> held = new java.util.ArrayList<>();
            try {
                for (int i = 0; i < 3; i++) {
                    java.net.Socket socket = new java.net.Socket("127.0.0.1", http.port());
                    held.add(socket);
                    socket.getOutputStream().write("GET /x HTTP/1.1\r\nHost: here\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
                    socket.getOutputStream().flush();
                    assertThat(readResponse(socket)).startsWith("HTTP/1.1 200");
                }
                for (int extra = 0; extra < 4; extra++) {
                    try (java.net.Socket beyond = new java.net.Socket("127.0.0.1", http.port())) {
                        beyond.getOutputStream().write("GET /x HTTP/1.1\r\nHost: here\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
                        beyond.getOutputStream().flush();
                        String answer = readToClose(beyond);
                        assertThat(answer).startsWith("HTTP/1.1 503").contains("Retry-After: 1")
                                .contains("\"code\":\"system.http.too_many_connections\"");
                    }
                }
                // One past the cap that sends nothing is closed within its grace, not held.
                try (java.net.Socket silent = new java.net.Socket("127.0.0.1", http.port())) {
                    assertThat(readToClose(silent)).isEmpty();
                }
                assertThat(http.refusedConnections()).isEqualTo(5);
                // The held connections, kept alive, are still served.
                for (java.net.Socket socket : held) {
                    socket.getOutputStream().write("GET /x HTTP/1.1\r\nHost: here\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
                    socket.getOutputStream().flush();
                    assertThat(readResponse(socket)).startsWith("HTTP/1.1 200");
                }
            } finally {
                for (java.net.Socket socket : held) {
                    socket.close();
                }
            }
            // Once they close, a new connection is served again (the server sees the closes a moment later).
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            String again = "";
            while (!again.startsWith("HTTP/1.1 200") && System.nanoTime() < deadline) {
                try (java.net.Socket socket = new java.net.Socket("127.0.0.1", http.port())) {
                    socket.getOutputStream().write("GET /x HTTP/1.1\r\nHost: here\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
                    socket.getOutputStream().flush();
                    again = readResponse(socket);
                }
            }
            assertThat(again).startsWith("HTTP/1.1 200");
        }
    }

    /** Reads one response of a kept-alive connection: its head and a body of the Content-Length it gives. */
    private static String readResponse(java.net.Socket socket) throws IOException {
        socket.setSoTimeout(60_000);
        java.io.InputStream in = socket.getInputStream();
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                break;
            }
            head.append((char) b);
        }
        java.util.regex.Matcher length = java.util.regex.Pattern.compile("(?i)content-length: *(\\d+)").matcher(head);
        if (length.find()) {
            in.readNBytes(Integer.parseInt(length.group(1)));
        }
        return head.toString();
    }
}
