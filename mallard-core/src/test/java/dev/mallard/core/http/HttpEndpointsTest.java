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

    private static final HttpEndpoints.ConnectionLimits TIGHT = new HttpEndpoints.ConnectionLimits(Duration.ofSeconds(1), Duration.ofSeconds(2), 8, 2);

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
}
