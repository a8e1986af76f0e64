// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.server.MallardServer;
import dev.mallard.server.auth.PasswordHash;
import dev.mallard.server.config.AccessMode;
import dev.mallard.server.config.ServerConfig;
import dev.mallard.server.config.UserAccount;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The JDBC driver 18.3 never closes the prepared statement each {@code Statement.executeQuery} makes; with
 * {@code max_prepared_statements_per_session} the server's session stays at the cap however many texts run.
 */
class PreparedStatementCapIT {
    private static final int CAP = 5;

    @TempDir
    static Path warehouse;

    static MallardServer server;

    @BeforeAll
    static void start() {
        server = MallardServer.start(new ServerConfig(warehouse.resolve("warehouse"), Optional.empty(), "127.0.0.1", 0, ServerConfig.DEFAULT_HTTP_MAX_BODY_BYTES, 0,
                Optional.empty(), List.of(new UserAccount("ada", PasswordHash.of("lovelace"))), AccessMode.COMPLETE, Optional.empty(),
                ServerConfig.DEFAULT_TOKEN_EXPIRY_MINUTES, new ServerConfig.SessionLimits(30, 16, 16, CAP), 1000, 0, Optional.empty()));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static Connection connect() throws SQLException {
        Properties properties = new Properties();
        properties.put("user", "ada");
        properties.put("password", "lovelace");
        return DriverManager.getConnection("jdbc:arrow-flight-sql://127.0.0.1:" + server.flightPort() + "/?useEncryption=false", properties);
    }

    /** The one session the test's connection opened (each test's connection is the only one open while it runs). */
    private static Session onlySession() {
        List<Session> open = server.sessions().openSessions();
        assertThat(open).hasSize(1);
        return open.get(0);
    }

    @Test
    void manyDistinctQueriesOnOneConnectionAnswerAndTheSessionHoldsAtMostTheCap() throws Exception {
        try (Connection connection = connect(); Statement statement = connection.createStatement()) {
            for (int k = 0; k < 3 * CAP; k++) {
                try (ResultSet rs = statement.executeQuery("SELECT sum(range) + " + k + " AS total FROM range(10)")) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getLong(1)).isEqualTo(45 + k);
                    assertThat(rs.next()).isFalse();
                }
                assertThat(onlySession().preparedStatementCount()).isLessThanOrEqualTo(CAP);
            }
            assertThat(onlySession().preparedStatementCount()).isEqualTo(CAP);
        } finally {
            server.sessions().openSessions().forEach(session -> server.sessions().discard(session.id()));
        }
    }

    @Test
    void aPreparedStatementClosedByTheCapFailsNotFoundNamingTheKey() throws Exception {
        try (Connection connection = connect(); PreparedStatement early = connection.prepareStatement("SELECT CAST(? AS INTEGER) * 2")) {
            early.setInt(1, 21);
            try (ResultSet rs = early.executeQuery()) {
                rs.next();
                assertThat(rs.getInt(1)).isEqualTo(42);
            }
            try (Statement statement = connection.createStatement()) {
                for (int k = 0; k < 2 * CAP; k++) {
                    try (ResultSet rs = statement.executeQuery("SELECT " + k)) {
                        rs.next();
                        assertThat(rs.getInt(1)).isEqualTo(k);
                    }
                }
            }
            assertThatThrownBy(early::executeQuery)
                    .hasStackTraceContaining("NOT_FOUND")
                    .hasStackTraceContaining("held more than " + CAP)
                    .hasStackTraceContaining("max_prepared_statements_per_session");
            try (PreparedStatement again = connection.prepareStatement("SELECT CAST(? AS INTEGER) * 2")) {
                again.setInt(1, 4);
                try (ResultSet rs = again.executeQuery()) {
                    rs.next();
                    assertThat(rs.getInt(1)).isEqualTo(8);
                }
            }
        } finally {
            server.sessions().openSessions().forEach(session -> server.sessions().discard(session.id()));
        }
    }
}
