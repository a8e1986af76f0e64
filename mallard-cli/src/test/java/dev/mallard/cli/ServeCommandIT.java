// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code mallard serve <config>} as a user starts it: the jar in its own JVM, the example serve file, SIGTERM. */
class ServeCommandIT {
    @TempDir
    Path dir;

    @Test
    void mallardServeAnswersTheExamplesDatasetsAndStopsCleanlyOnSigterm() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        List<String> command = MallardJar.command("serve", Path.of("..", "examples", "serve", "events.yml").toString());
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(dir.resolve("serve.log").toFile());
        builder.environment().put("PORT", String.valueOf(port));
        Process process = builder.start();
        try {
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
            awaitHealthy(http, port, process);
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                    + "/v1/datasets/city_events?grain=1d&city=Baltimore&limit=2")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.body()).isEqualTo("{\"dataset\":\"city_events\",\"grain\":\"1d\",\"range\":null,\"row_count\":2,\"rows\":"
                    + "[{\"bucket\":\"2026-01-01T00:00\",\"n\":4320},{\"bucket\":\"2026-01-02T00:00\",\"n\":4320}]}");
        } finally {
            process.destroy();
            assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(process.exitValue()).isZero();
        assertThat(Files.readString(dir.resolve("serve.log"))).contains("serve started").contains("datasets=3");
    }

    private static void awaitHealthy(HttpClient http, int port, Process process) throws Exception {
        dev.mallard.testkit.Await.until("mallard serve answers /health", () -> {
            if (!process.isAlive()) {
                throw new AssertionError("mallard serve exited with " + process.exitValue());
            }
            try {
                return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health")).build(),
                        HttpResponse.BodyHandlers.ofString()).statusCode() == 200;
            } catch (IOException e) {
                return false; // not listening yet
            }
        });
    }
}
