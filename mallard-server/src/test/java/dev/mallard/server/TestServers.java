// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import dev.mallard.server.auth.PasswordHash;
import dev.mallard.server.config.AccessMode;
import dev.mallard.server.config.ServerConfig;
import dev.mallard.server.config.UserAccount;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/** Servers for tests: in memory, free ports, one user ada/lovelace. */
final class TestServers {
    static final String USER = "ada";
    static final String PASSWORD = "lovelace";

    private TestServers() {}

    /** The warehouse is a directory inside {@code root}, so the signing key kept beside it is removed with {@code root}. */
    static ServerConfig config(Path root, AccessMode mode, Optional<Path> startupScript) {
        return new ServerConfig(root.resolve("warehouse"), Optional.empty(), "127.0.0.1", 0, ServerConfig.DEFAULT_HTTP_MAX_BODY_BYTES, 0, Optional.empty(),
                List.of(new UserAccount(USER, PasswordHash.of(PASSWORD))), mode, Optional.empty(),
                ServerConfig.DEFAULT_TOKEN_EXPIRY_MINUTES, ServerConfig.SessionLimits.DEFAULT, 1000, 0, startupScript);
    }

    /** The same configuration with another HTTP body limit. */
    static ServerConfig withMaxBody(ServerConfig c, long maxBodyBytes) {
        return new ServerConfig(c.warehouse(), c.database(), c.host(), c.httpPort(), maxBodyBytes, c.flightPort(), c.tls(), c.users(), c.accessMode(),
                c.secretKey(), c.tokenExpiryMinutes(), c.sessionLimits(), c.fetchSize(), c.queryTimeoutSeconds(), c.startupScript());
    }

    /** Polls {@code condition} every 50 ms; fails after a minute, a bound against hanging and not a timing check. */
    /**
     * Reads the FlightInfo's first endpoint to its end on another thread; the future holds what ended the read
     * (null when the stream ended normally).
     */
    static java.util.concurrent.CompletableFuture<Throwable> drainInBackground(org.apache.arrow.flight.sql.FlightSqlClient sql,
            org.apache.arrow.flight.FlightInfo info, org.apache.arrow.flight.CallOption option) {
        return java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try (org.apache.arrow.flight.FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), option)) {
                while (stream.next()) {
                    // drained
                }
                return null;
            } catch (Throwable e) {
                return e;
            }
        });
    }

    static void awaitUntil(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.MINUTES.toNanos(1);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("waited a minute for: " + what);
            }
            Thread.sleep(50);
        }
    }

    /** The test user's credentials as the Flight SQL JDBC driver takes them; add driver options to the copy. */
    static java.util.Properties credentials() {
        java.util.Properties properties = new java.util.Properties();
        properties.put("user", USER);
        properties.put("password", PASSWORD);
        return properties;
    }

    /** A Flight SQL JDBC connection to the server as the test user. */
    static java.sql.Connection connect(MallardServer server) throws java.sql.SQLException {
        return java.sql.DriverManager.getConnection(jdbcUrl(server), credentials());
    }

    static String jdbcUrl(MallardServer server) {
        return "jdbc:arrow-flight-sql://127.0.0.1:" + server.flightPort() + "/?useEncryption=false";
    }

    /**
     * A server started from DazzleDuck's HOCON keys, as its HTTP tests configure it: loopback listeners on free ports,
     * the test user in group admin, ingestion files under {@code ingestion} flushed every 500 ms.
     */
    static MallardServer dazzleDuckIngestionServer(Path warehouse, Path ingestion) {
        return MallardServer.start(new dev.mallard.server.config.ServerConfigReader(dev.mallard.core.config.ConfigEnvironment.from(java.util.Map.of()),
                java.util.Map.of("DD_TEST_PASSWORD", PASSWORD)).read(Optional.empty(), List.of(
                "dazzleduck_server.http.host=127.0.0.1", "dazzleduck_server.http.port=0", "dazzleduck_server.flight_sql.port=0",
                "dazzleduck_server.flight_sql.use_encryption=false", "dazzleduck_server.warehouse=\"" + warehouse + "\"",
                "dazzleduck_server.users=[{username=" + USER + ", password=${DD_TEST_PASSWORD}, groups=[admin]}]",
                "dazzleduck_server.ingestion_task_factory_provider.class=io.dazzleduck.sql.commons.ingestion.NOOPIngestionTaskFactoryProvider",
                "dazzleduck_server.ingestion_task_factory_provider.ingestion_path=\"" + ingestion + "\"",
                "dazzleduck_server.ingestion.max_delay_ms=500")));
    }
}
