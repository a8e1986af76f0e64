// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code mallard server} as a user starts it: the jar in its own JVM, configured by a file and --conf. */
class ServerCommandIT {
    @TempDir
    Path dir;

    @Test
    void theServerAnswersOverHttpAndStopsCleanlyOnSigterm() throws Exception {
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
        Files.writeString(dir.resolve("startup.sql"), "CREATE TABLE IF NOT EXISTS greetings AS SELECT 'hello' AS word;");
        Path classLog = dir.resolve("classes.log");
        List<String> command = MallardJar.command(List.of(BrokerOffTheRunPathIT.classLogOption(classLog)), "server", "--config", config.toString(), "--conf", "host=127.0.0.1",
                "--conf", "http.port=" + httpPort, "--conf", "flight.port=" + flightPort);
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(dir.resolve("server.log").toFile()).start();
        try {
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
            awaitHealthy(http, httpPort, process);
            String basic = "Basic " + Base64.getEncoder().encodeToString("ada:lovelace".getBytes(StandardCharsets.UTF_8));
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/v1/query?q="
                    + URLEncoder.encode("SELECT word FROM greetings", StandardCharsets.UTF_8)))
                    .header("Authorization", basic).header("Accept", "application/jsonl").build(), HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.body()).isEqualTo("{\"word\":\"hello\"}\n");
            assertThat(dir.resolve("wh").resolve("mallard.duckdb")).exists();
            // The generated signing key lives beside the warehouse, out of what SQL may read (file_access: warehouse).
            assertThat(dir.resolve("wh.mallard").resolve("jwt-secret")).exists();
            assertThat(dir.resolve("wh").resolve(".mallard").resolve("jwt-secret")).doesNotExist();
        } finally {
            process.destroy();
            assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(process.exitValue()).isZero();
        String log = Files.readString(dir.resolve("server.log"));
        assertThat(log).contains("server started").doesNotContain("lovelace");
        assertThat(BrokerOffTheRunPathIT.brokerClassesIn(classLog)).as("classes of the Kafka broker the server loaded").isEmpty();
    }

    @Test
    void aDazzleDuckConfFileStartsTheServerWithItsStartupScript() throws Exception {
        int httpPort = freePort();
        int flightPort = freePort();
        Path config = dir.resolve("server.conf");
        Files.writeString(config, """
                dazzleduck_server {
                  warehouse = wh
                  flight_sql { host = "127.0.0.1", use_encryption = false }
                  users = [{ username = ada, password = lovelace, groups = [admin] }]
                  startup_script_provider { content = "CREATE TABLE IF NOT EXISTS greetings AS SELECT 'hej' AS word;" }
                }
                """);
        List<String> command = MallardJar.command("server", "--config", config.toString(), "--conf", "dazzleduck_server.http.port=" + httpPort,
                "--conf", "dazzleduck_server.flight_sql.port=" + flightPort);
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(dir.resolve("server.log").toFile()).start();
        try {
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
            awaitHealthy(http, httpPort, process);
            String basic = "Basic " + Base64.getEncoder().encodeToString("ada:lovelace".getBytes(StandardCharsets.UTF_8));
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/v1/query"))
                    .header("Authorization", basic).header("Accept", "application/jsonl")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"query\": \"SELECT word FROM greetings\"}")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.body()).isEqualTo("{\"word\":\"hej\"}\n");
        } finally {
            process.destroy();
            assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    void aDazzleDuckKeyOfAFeatureNotServedYetStopsTheStartNamingIt() throws Exception {
        List<String> command = MallardJar.command("server", "--conf", "dazzleduck_server.users=[{username=ada,password=pw}]",
                "--conf", "dazzleduck_server.warehouse=\"" + dir.resolve("wh") + "\"", "--conf", "dazzleduck_server.flight_sql.service_name=\"mallard\"");
        // The output goes to a file, so a server that started after all is still waited for within the bound, then stopped.
        java.nio.file.Path log = dir.resolve("server.log");
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("the server refuses to start").isTrue();
        } finally {
            process.destroyForcibly();
        }
        assertThat(process.exitValue()).isEqualTo(10);
        assertThat(java.nio.file.Files.readString(log)).contains("dazzleduck_server.flight_sql.service_name").contains("not supported yet");
    }

    @Test
    void aUsersClaimsTheAccessModeCannotUseAreRefusedAtStartup() throws Exception {
        List<String> command = MallardJar.command("server", "--conf", "users.0.username=ada", "--conf", "users.0.password=pw",
                "--conf", "access_mode=RESTRICTED", "--conf", "users.0.claims.x-dd-access=[[\"table\",\"a\",\"*\",\"true\"],[\"table\",\"b\",\"*\",\"true\"]]",
                "--conf", "warehouse=" + dir.resolve("wh"));
        java.nio.file.Path log = dir.resolve("claims.log");
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("the server refuses to start").isTrue();
        } finally {
            process.destroyForcibly();
        }
        assertThat(process.exitValue()).isEqualTo(10);
        assertThat(java.nio.file.Files.readString(log)).contains("user.config.invalid").contains("exactly one entry");
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
