// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.server.auth.PasswordHash;
import dev.mallard.server.config.AccessMode;
import dev.mallard.server.config.ServerConfig;
import dev.mallard.server.config.UserAccount;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A token issued before a restart still works after it, and the database file keeps its tables. */
class RestartIT {
    @TempDir
    Path warehouse;

    private ServerConfig config() {
        return new ServerConfig(warehouse.resolve("warehouse"), Optional.of(warehouse.resolve("mallard.duckdb")), "127.0.0.1", 0, ServerConfig.DEFAULT_HTTP_MAX_BODY_BYTES, 0, Optional.empty(),
                List.of(new UserAccount(TestServers.USER, PasswordHash.of(TestServers.PASSWORD))), AccessMode.COMPLETE,
                Optional.empty(), 60, ServerConfig.SessionLimits.DEFAULT, 1000, 0, Optional.empty());
    }

    @Test
    void aTokenAndTheDataSurviveARestartWithTheKeptSecret() throws Exception {
        String token;
        try (MallardServer server = MallardServer.start(config())) {
            Properties login = new Properties();
            login.put("user", TestServers.USER);
            login.put("password", TestServers.PASSWORD);
            try (Connection connection = DriverManager.getConnection(TestServers.jdbcUrl(server), login);
                    Statement statement = connection.createStatement()) {
                statement.executeUpdate("CREATE TABLE kept AS SELECT 'still here' AS note");
            }
            token = HttpApiITSupport.login(server.httpPort());
        }
        try (MallardServer server = MallardServer.start(config())) {
            Properties withToken = new Properties();
            withToken.put("token", token);
            try (Connection connection = DriverManager.getConnection(TestServers.jdbcUrl(server), withToken);
                    Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery("SELECT note FROM kept")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isEqualTo("still here");
            }
        }
    }
}
