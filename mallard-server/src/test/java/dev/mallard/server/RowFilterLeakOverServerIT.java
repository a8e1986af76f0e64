// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.server.auth.PasswordHash;
import dev.mallard.server.config.AccessMode;
import dev.mallard.server.config.ServerConfig;
import dev.mallard.server.config.UserAccount;
import dev.mallard.server.rls.LeakFixture;
import dev.mallard.server.rls.RlsClaims;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * The row filter leak property through a RESTRICT_READ_ONLY server, for a smaller sample: a generated query sent
 * through the Flight SQL JDBC driver with the claims as connection properties answers what the admin reads over
 * pre-filtered copies of the tables.
 */
class RowFilterLeakOverServerIT {
    private static Path warehouse;
    private static MallardServer server;
    private static Connection restricted;
    private static Connection reference;

    @BeforeContainer
    static void start() throws Exception {
        warehouse = Files.createTempDirectory("mallard-rls-leak");
        Path script = warehouse.resolve("startup.sql");
        Files.writeString(script, String.join(";\n", LeakFixture.restrictedSetup()) + ";\n");
        List<UserAccount> users = List.of(new UserAccount(TestServers.USER, PasswordHash.of(TestServers.PASSWORD), Map.of(), List.of(RlsClaims.ACCESS)));
        server = MallardServer.start(new ServerConfig(warehouse, Optional.empty(), "127.0.0.1", 0, ServerConfig.DEFAULT_HTTP_MAX_BODY_BYTES, 0,
                Optional.empty(), users, AccessMode.RESTRICT_READ_ONLY, Optional.empty(), ServerConfig.DEFAULT_TOKEN_EXPIRY_MINUTES,
                ServerConfig.SessionLimits.DEFAULT, 1000, 0, Optional.of(script)));
        Properties properties = TestServers.credentials();
        properties.put(RlsClaims.ACCESS, LeakFixture.access());
        restricted = DriverManager.getConnection(TestServers.jdbcUrl(server), properties);
        reference = DriverManager.getConnection("jdbc:duckdb:");
        try (Statement statement = reference.createStatement()) {
            for (String sql : LeakFixture.referenceSetup()) {
                statement.execute(sql);
            }
        }
    }

    @AfterContainer
    static void stop() throws Exception {
        restricted.close();
        reference.close();
        server.close();
        try (java.util.stream.Stream<Path> files = Files.walk(warehouse)) {
            for (Path file : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(file);
            }
        }
    }

    @Property(tries = 40)
    void aQueryThroughTheServerAnswersWhatTheQueryAnswersOverPrefilteredTables(@ForAll("queries") String sql) throws SQLException {
        assertThat(LeakFixture.rows(restricted, sql)).as(sql).isEqualTo(LeakFixture.rows(reference, sql));
    }

    @Provide
    Arbitrary<String> queries() {
        return LeakFixture.queries();
    }
}
