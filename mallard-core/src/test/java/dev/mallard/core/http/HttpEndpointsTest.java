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
}
