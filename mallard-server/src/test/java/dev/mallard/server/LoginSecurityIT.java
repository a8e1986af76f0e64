// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mallard.server.auth.PasswordHash;
import dev.mallard.server.config.AccessMode;
import dev.mallard.server.config.ServerConfig;
import dev.mallard.server.config.UserAccount;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Logins and tokens over HTTP: throttled guesses, a flood that does not starve the server, tokens tied to users. */
class LoginSecurityIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** A bound against a starved server, far above an idle answer's time; not a timing check. */
    private static final Duration BOUND = Duration.ofSeconds(20);

    @TempDir
    Path root;

    private ServerConfig config(List<UserAccount> users, ServerConfig.LoginLimits limits) {
        ServerConfig base = TestServers.config(root, AccessMode.COMPLETE, Optional.empty());
        ServerConfig withUsers = new ServerConfig(base.warehouse(), base.database(), base.host(), base.httpPort(), base.httpMaxBodyBytes(),
                base.flightPort(), base.tls(), users, base.accessMode(), base.secretKey(), base.tokenExpiryMinutes(), base.sessionLimits(),
                base.fetchSize(), base.queryTimeoutSeconds(), base.startupScript(), base.streamResults());
        return withUsers.withSecurity(base.fileAccess(), limits, base.tokenAlgorithm());
    }

    private static HttpResponse<String> login(HttpClient http, int port, String user, String password) throws Exception {
        String body = JSON.createObjectNode().put("username", user).put("password", password).toString();
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/login")).timeout(BOUND)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> query(HttpClient http, int port, String token, String sql) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/query")).timeout(BOUND)
                .header("Authorization", "Bearer " + token).header("Accept", "application/jsonl")
                .POST(HttpRequest.BodyPublishers.ofString(sql)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void afterTooManyFailuresAUserIsThrottledFromThatAddressWithRetryAfter() throws Exception {
        List<UserAccount> users = List.of(new UserAccount("ada", PasswordHash.of("lovelace")));
        try (MallardServer server = MallardServer.start(config(users, new ServerConfig.LoginLimits(3, 600)))) {
            HttpClient http = HttpClient.newHttpClient();
            for (int i = 0; i < 3; i++) {
                HttpResponse<String> wrong = login(http, server.httpPort(), "ada", "guess " + i);
                assertThat(wrong.statusCode()).isEqualTo(401);
                assertThat(wrong.body()).doesNotContain("guess");
            }
            HttpResponse<String> throttled = login(http, server.httpPort(), "ada", "lovelace");
            assertThat(throttled.statusCode()).isEqualTo(429);
            assertThat(JSON.readTree(throttled.body()).path("error").path("code").asText()).isEqualTo("user.auth.throttled");
            assertThat(Long.parseLong(throttled.headers().firstValue("Retry-After").orElseThrow())).isBetween(1L, 601L);
            assertThat(server.users().failedLogins()).isEqualTo(3);
        }
    }

    @Test
    void flightLoginsAreCountedPerUserAndRealAddressUnderTheSameThrottleAsHttpAndInMetrics() throws Exception {
        List<UserAccount> users = List.of(new UserAccount("ada", PasswordHash.of("lovelace")), new UserAccount("bob", PasswordHash.of("builder")));
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> log = new ch.qos.logback.core.read.ListAppender<>();
        ch.qos.logback.classic.Logger directory = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(
                dev.mallard.server.auth.UserDirectory.class);
        log.start();
        directory.addAppender(log);
        try (MallardServer server = MallardServer.start(config(users, new ServerConfig.LoginLimits(2, 600)))) {
            java.util.Properties wrong = new java.util.Properties();
            wrong.put("user", "ada");
            wrong.put("password", "guess");
            for (int i = 0; i < 2; i++) {
                org.assertj.core.api.Assertions.assertThatThrownBy(() -> java.sql.DriverManager.getConnection(TestServers.jdbcUrl(server), wrong).close())
                        .hasStackTraceContaining("UNAUTHENTICATED");
            }
            java.util.Properties right = new java.util.Properties();
            right.put("user", "ada");
            right.put("password", "lovelace");
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> java.sql.DriverManager.getConnection(TestServers.jdbcUrl(server), right).close())
                    .hasStackTraceContaining("too many failed logins");
            // The same user from the same address (127.0.0.1) is throttled over HTTP too: one count per user and address.
            HttpClient http = HttpClient.newHttpClient();
            assertThat(login(http, server.httpPort(), "ada", "lovelace").statusCode()).isEqualTo(429);
            // Another user from that address is not.
            java.util.Properties bob = new java.util.Properties();
            bob.put("user", "bob");
            bob.put("password", "builder");
            try (java.sql.Connection connection = java.sql.DriverManager.getConnection(TestServers.jdbcUrl(server), bob)) {
                assertThat(connection.isValid(30)).isTrue();
            }
            String metrics = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/metrics")).timeout(BOUND).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            assertThat(metrics).containsPattern("mallard_server_logins_failed_total\\{mode=\"flight\"} [1-9]");
            assertThat(server.users().failedLogins()).isGreaterThanOrEqualTo(2);
            List<String> failures;
            synchronized (log.list) {
                failures = log.list.stream().map(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage)
                        .filter(line -> line.startsWith("login failed")).toList();
            }
            // One line per failed handshake, naming the user and the real address, never the password.
            assertThat(failures).hasSize((int) server.users().failedLogins())
                    .allSatisfy(line -> assertThat(line).contains("user=ada").contains("remote=127.0.0.1").doesNotContain("guess"));
        } finally {
            directory.detachAppender(log);
        }
    }

    @Test
    void aTenMegabyteClaimsObjectInALoginIsRefusedWithoutATokenAndTheServerStillAnswers() throws Exception {
        List<UserAccount> users = List.of(new UserAccount("ada", PasswordHash.of("lovelace")));
        try (MallardServer server = MallardServer.start(config(users, ServerConfig.LoginLimits.DEFAULT))) {
            com.fasterxml.jackson.databind.node.ObjectNode body = JSON.createObjectNode().put("username", "ada").put("password", "lovelace");
            com.fasterxml.jackson.databind.node.ObjectNode claims = body.putObject("claims");
            for (int i = 0; i < 10; i++) {
                claims.put("blob" + i, "x".repeat(1 << 20));
            }
            HttpClient http = HttpClient.newHttpClient();
            HttpResponse<String> refused = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/v1/login"))
                    .timeout(BOUND).POST(HttpRequest.BodyPublishers.ofString(body.toString())).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(refused.statusCode()).isEqualTo(400);
            assertThat(refused.body()).doesNotContain("accessToken").hasSizeLessThan(4_096);
            assertThat(JSON.readTree(refused.body()).path("error").path("message").asText()).contains("bytes as JSON");
            assertThat(login(http, server.httpPort(), "ada", "lovelace").statusCode()).isEqualTo(200);
        }
    }

    @Test
    void eightClientsFloodingWrongPasswordsDoNotStarveHealthOrQueries() throws Exception {
        List<UserAccount> users = List.of(new UserAccount("ada", PasswordHash.of("lovelace")));
        try (MallardServer server = MallardServer.start(config(users, new ServerConfig.LoginLimits(1_000_000, 600)))) {
            HttpClient http = HttpClient.newBuilder().connectTimeout(BOUND).build();
            String token = JSON.readTree(login(http, server.httpPort(), "ada", "lovelace").body()).path("accessToken").asText();
            ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor();
            AtomicBoolean flooding = new AtomicBoolean(true);
            AtomicLong refused = new AtomicLong();
            List<Future<?>> flood = new ArrayList<>();
            try {
                for (int client = 0; client < 8; client++) {
                    int id = client;
                    flood.add(pool.submit(() -> {
                        HttpClient own = HttpClient.newHttpClient();
                        while (flooding.get()) {
                            int status = login(own, server.httpPort(), "user" + id, "wrong").statusCode();
                            assertThat(status).isIn(401, 429);
                            refused.incrementAndGet();
                        }
                        return null;
                    }));
                }
                TestServers.awaitUntil(() -> refused.get() >= 16, "the flood under way");
                for (int i = 0; i < 10; i++) {
                    Future<Integer> health = pool.submit(() -> http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort()
                            + "/health")).timeout(BOUND).build(), HttpResponse.BodyHandlers.ofString()).statusCode());
                    assertThat(within(health, "/health during the flood")).isEqualTo(200);
                    Future<String> answer = pool.submit(() -> query(http, server.httpPort(), token, "SELECT 41 + 1 AS answer").body());
                    assertThat(within(answer, "a query during the flood")).contains("42");
                }
            } finally {
                flooding.set(false);
                for (Future<?> client : flood) {
                    within(client, "a flooding client to stop");
                }
                pool.shutdownNow();
            }
            assertThat(server.users().failedLogins()).isGreaterThanOrEqualTo(16);
        }
    }

    @Test
    void aTokenEndsWhenItsUserIsRemovedOrItsPasswordChanges() throws Exception {
        String adas;
        String graces;
        HttpClient http = HttpClient.newHttpClient();
        try (MallardServer server = MallardServer.start(config(List.of(new UserAccount("ada", PasswordHash.of("lovelace")),
                new UserAccount("grace", PasswordHash.of("hopper"))), ServerConfig.LoginLimits.DEFAULT))) {
            adas = JSON.readTree(login(http, server.httpPort(), "ada", "lovelace").body()).path("accessToken").asText();
            graces = JSON.readTree(login(http, server.httpPort(), "grace", "hopper").body()).path("accessToken").asText();
        }
        try (MallardServer server = MallardServer.start(config(List.of(new UserAccount("ada", PasswordHash.of("lovelace"))),
                ServerConfig.LoginLimits.DEFAULT))) {
            assertThat(query(http, server.httpPort(), adas, "SELECT 1").statusCode()).as("same key, same password").isEqualTo(200);
            HttpResponse<String> removed = query(http, server.httpPort(), graces, "SELECT 1");
            assertThat(removed.statusCode()).isEqualTo(401);
            assertThat(removed.body()).contains("not configured");
        }
        try (MallardServer server = MallardServer.start(config(List.of(new UserAccount("ada", PasswordHash.of("babbage"))),
                ServerConfig.LoginLimits.DEFAULT))) {
            HttpResponse<String> changed = query(http, server.httpPort(), adas, "SELECT 1");
            assertThat(changed.statusCode()).isEqualTo(401);
            assertThat(changed.body()).contains("changed");
        }
    }

    private static <T> T within(Future<T> future, String what) throws Exception {
        try {
            return future.get(BOUND.toSeconds(), TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            throw new AssertionError("no answer within " + BOUND.toSeconds() + " s: " + what);
        }
    }
}
