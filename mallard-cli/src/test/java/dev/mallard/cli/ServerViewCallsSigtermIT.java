// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 16's hang as a user met it: {@code mallard server} in its own JVM, sent each statement that used to hang it (a
 * {@code dbsp_*} call inside a larger statement), from several clients at once. Each answers or errors within a bound,
 * a write from another session still answers, and SIGTERM, sent while such statements are in flight, stops the
 * process within a bound with its documented exit code 0.
 */
class ServerViewCallsSigtermIT {
    /** A bound against a hang, far above any answer's time on a loaded machine; not a timing check. */
    private static final Duration BOUND = Duration.ofSeconds(90);
    private static final String BASIC = "Basic " + Base64.getEncoder().encodeToString("ada:lovelace".getBytes(StandardCharsets.UTF_8));

    @TempDir
    Path dir;

    /** The statements of the issue that hung the server, and the other places a view call can stand. */
    static List<String> formerHangs() {
        return List.of(
                "SELECT dbsp_create_view('v' || range, 'SELECT 1') FROM range(2, 4)",
                "SELECT * FROM dbsp_stats() WHERE metric = 'views'",
                "SELECT dbsp_sync() AS s",
                "SELECT 1 AS one WHERE dbsp_sync() IS NOT NULL",
                "SELECT (SELECT dbsp_sync()) AS s",
                "SELECT * FROM query('SELECT dbsp_sync()')",
                "SELECT count(*) FROM dbsp_stats()",
                "SELECT * FROM (SELECT * FROM dbsp_check())",
                "SELECT * FROM dbsp_query('v') WHERE true",
                "SELECT dbsp_create_view('w' || 1, 'SELECT 1 AS one') AS s, 1 AS one");
    }

    @Test
    void everyFormerHangAnswersOrErrorsAndSigtermStopsTheProcessWithExitZero() throws Exception {
        int httpPort = freePort();
        int flightPort = freePort();
        Path config = dir.resolve("server.yml");
        Files.writeString(config, """
                warehouse: wh
                database: mallard.duckdb
                startup_script: startup.sql
                users:
                  - username: ada
                    password: lovelace
                """);
        Files.writeString(dir.resolve("startup.sql"), "CREATE TABLE IF NOT EXISTS t AS SELECT range AS id FROM range(10);");
        Path log = dir.resolve("server.log");
        Process process = new ProcessBuilder(MallardJar.command("server", "--config", config.toString(), "--conf", "host=127.0.0.1",
                "--conf", "http.port=" + httpPort, "--conf", "flight.port=" + flightPort)).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor();
        boolean stopped = false;
        try {
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
            awaitHealthy(http, httpPort, process);
            assertThat(query(http, httpPort, "CREATE MATERIALIZED VIEW v AS SELECT count(*) AS n FROM t").statusCode()).isEqualTo(200);

            // Several clients at once, each sending every former hang.
            List<Future<List<Integer>>> answers = new ArrayList<>();
            for (int client = 0; client < 4; client++) {
                answers.add(clients.submit(() -> {
                    List<Integer> statuses = new ArrayList<>();
                    for (String text : formerHangs()) {
                        statuses.add(query(http, httpPort, text).statusCode());
                    }
                    return statuses;
                }));
            }
            for (Future<List<Integer>> answer : answers) {
                assertThat(within(answer, "a client's former hangs")).allSatisfy(status -> assertThat(status).isIn(200, 400, 403, 409));
            }
            // Another session's write and a view read still answer.
            assertThat(within(clients.submit(() -> query(http, httpPort, "INSERT INTO t VALUES (100)").statusCode()), "a write")).isEqualTo(200);
            HttpResponse<String> view = within(clients.submit(() -> query(http, httpPort, "SELECT n FROM v")), "a view read");
            assertThat(view.body()).contains("11");

            // SIGTERM with former hangs in flight: each ends (an answer, or the connection closing), and the process exits 0.
            List<Future<String>> inFlight = new ArrayList<>();
            for (String text : formerHangs()) {
                inFlight.add(clients.submit(() -> {
                    try {
                        return Integer.toString(query(http, httpPort, text).statusCode());
                    } catch (IOException e) {
                        return "closed";
                    }
                }));
            }
            process.destroy();
            for (Future<String> request : inFlight) {
                assertThat(within(request, "a request in flight at SIGTERM")).isIn("200", "400", "403", "409", "503", "closed");
            }
            assertThat(process.waitFor(BOUND.toSeconds(), TimeUnit.SECONDS)).as("the server exits after SIGTERM").isTrue();
            stopped = true;
        } finally {
            clients.shutdownNow();
            if (!stopped) {
                process.destroyForcibly();
                process.waitFor(BOUND.toSeconds(), TimeUnit.SECONDS);
            }
        }
        assertThat(process.exitValue()).as(Files.readString(log)).isZero();
    }

    private static HttpResponse<String> query(HttpClient http, int port, String sql) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/query")).timeout(BOUND)
                .header("Authorization", BASIC).header("Accept", "application/jsonl")
                .POST(HttpRequest.BodyPublishers.ofString(sql)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static <T> T within(Future<T> future, String what) throws Exception {
        try {
            return future.get(BOUND.toSeconds(), TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            throw new AssertionError("no answer within " + BOUND.toSeconds() + " s (a hang): " + what);
        }
    }

    private static void awaitHealthy(HttpClient http, int port, Process process) throws Exception {
        dev.mallard.testkit.Await.until("the server answers /health", () -> {
            if (!process.isAlive()) {
                throw new AssertionError("the server exited with " + process.exitValue());
            }
            try {
                return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health")).build(),
                        HttpResponse.BodyHandlers.ofString()).statusCode() == 200;
            } catch (IOException e) {
                return false; // not listening yet
            }
        });
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
