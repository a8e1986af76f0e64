// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.server.config.AccessMode;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Several JDBC clients at once, each with its own DuckDB session. */
class SessionIsolationIT {
    private static final int CLIENTS = 32;
    private static final int ROUNDS = 10;

    @TempDir
    Path warehouse;

    @Test
    void concurrentClientsNeverSeeEachOthersSettingsOrTempTables() throws Exception {
        try (MallardServer server = MallardServer.start(TestServers.config(warehouse, AccessMode.COMPLETE, Optional.empty()));
                ExecutorService pool = Executors.newFixedThreadPool(CLIENTS)) {
            CountDownLatch allConnected = new CountDownLatch(CLIENTS);
            List<Future<Integer>> results = new ArrayList<>();
            for (int i = 0; i < CLIENTS; i++) {
                int client = i;
                results.add(pool.submit(() -> runClient(server, client, allConnected)));
            }
            for (Future<Integer> result : results) {
                assertThat(result.get()).isEqualTo(ROUNDS);
            }
            assertThat(server.sessions().size()).isGreaterThanOrEqualTo(CLIENTS);
        }
    }

    private static int runClient(MallardServer server, int client, CountDownLatch allConnected) throws Exception {
        Properties properties = TestServers.credentials();
        String schema = "client_" + client;
        try (Connection connection = DriverManager.getConnection(TestServers.jdbcUrl(server), properties);
                Statement statement = connection.createStatement()) {
            statement.executeUpdate("CREATE SCHEMA " + schema);
            statement.executeUpdate("SET search_path = '" + schema + "'");
            statement.executeUpdate("CREATE TEMP TABLE marker AS SELECT " + client + " AS owner");
            allConnected.countDown();
            allConnected.await();
            int rounds = 0;
            try (PreparedStatement check = connection.prepareStatement(
                    "SELECT current_setting('search_path'), (SELECT owner FROM marker), CAST(? AS INTEGER) * 2")) {
                for (int round = 0; round < ROUNDS; round++) {
                    check.setInt(1, round);
                    try (ResultSet rs = check.executeQuery()) {
                        assertThat(rs.next()).isTrue();
                        assertThat(rs.getString(1)).isEqualTo(schema);
                        assertThat(rs.getInt(2)).isEqualTo(client);
                        assertThat(rs.getInt(3)).isEqualTo(round * 2);
                    }
                    try (ResultSet rs = statement.executeQuery("SELECT count(*) FROM marker")) {
                        rs.next();
                        assertThat(rs.getLong(1)).isEqualTo(1);
                    }
                    rounds++;
                }
            }
            return rounds;
        }
    }
}
