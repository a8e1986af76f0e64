// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.server.config.AccessMode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** A READ_ONLY server through the JDBC driver: queries run, everything else is refused. */
class ReadOnlyModeIT {
    @TempDir
    static Path warehouse;

    static MallardServer server;

    @BeforeAll
    static void start() throws Exception {
        Path script = warehouse.resolve("startup.sql");
        Files.writeString(script, "CREATE TABLE t AS SELECT range AS id FROM range(10);");
        server = MallardServer.start(TestServers.config(warehouse, AccessMode.READ_ONLY, Optional.of(script)));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    static Connection connect() throws SQLException {
        return TestServers.connect(server);
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "SELECT count(*) FROM t",
        "WITH evens AS (SELECT id FROM t WHERE id % 2 = 0) SELECT count(*) FROM evens",
        "SELECT count(*) FROM (SELECT id FROM t UNION ALL SELECT id FROM t)",
        "SELECT count(*) FROM t a JOIN t b USING (id) WHERE a.id IN (SELECT id FROM t)"
    })
    void queriesRun(String sql) throws Exception {
        try (Connection connection = connect(); Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery(sql)) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getLong(1)).isPositive();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "INSERT INTO t VALUES (100)",
        "DELETE FROM t",
        "CREATE TABLE u (x INTEGER)",
        "DROP TABLE t",
        "SET threads = 1",
        "COPY t TO '/tmp/mallard-read-only-leak.csv'",
        "SELECT 1; DROP TABLE t",
        "ATTACH ':memory:' AS other"
    })
    void everythingElseIsRefused(String sql) throws Exception {
        try (Connection connection = connect(); Statement statement = connection.createStatement()) {
            assertThatThrownBy(() -> statement.execute(sql))
                    .isInstanceOf(SQLException.class)
                    .hasStackTraceContaining("READ_ONLY");
            try (ResultSet rs = statement.executeQuery("SELECT count(*) FROM t")) {
                rs.next();
                assertThat(rs.getLong(1)).isEqualTo(10);
            }
        }
    }

    @Test
    void overHttpARefusalIs403() throws Exception {
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        String basic = "Basic " + java.util.Base64.getEncoder().encodeToString((TestServers.USER + ":" + TestServers.PASSWORD).getBytes());
        java.net.http.HttpResponse<String> response = http.send(java.net.http.HttpRequest.newBuilder(
                        java.net.URI.create("http://127.0.0.1:" + server.httpPort() + "/v1/query"))
                .header("Authorization", basic)
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString("DELETE FROM t")).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(403);
        assertThat(response.body()).contains("\"code\":\"user.access.denied\"").contains("READ_ONLY");
    }

    @Test
    void bulkIngestIsRefused() throws Exception {
        try (org.apache.arrow.memory.BufferAllocator allocator = new org.apache.arrow.memory.RootAllocator();
                org.apache.arrow.flight.FlightClient client = org.apache.arrow.flight.FlightClient.builder(allocator,
                        org.apache.arrow.flight.Location.forGrpcInsecure("127.0.0.1", server.flightPort())).build();
                org.apache.arrow.vector.VectorSchemaRoot root = org.apache.arrow.vector.VectorSchemaRoot.create(
                        new org.apache.arrow.vector.types.pojo.Schema(java.util.List.of(org.apache.arrow.vector.types.pojo.Field.nullable(
                                "id", new org.apache.arrow.vector.types.pojo.ArrowType.Int(32, true)))), allocator)) {
            var bearer = client.authenticateBasicToken(TestServers.USER, TestServers.PASSWORD).orElseThrow();
            root.allocateNew();
            ((org.apache.arrow.vector.IntVector) root.getVector(0)).setSafe(0, 1);
            root.setRowCount(1);
            org.apache.arrow.flight.sql.FlightSqlClient sql = new org.apache.arrow.flight.sql.FlightSqlClient(client);
            assertThatThrownBy(() -> sql.executeIngest(root, new org.apache.arrow.flight.sql.FlightSqlClient.ExecuteIngestOptions("t",
                    org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions.getDefaultInstance(), null, null,
                    java.util.Map.of()), bearer))
                    .isInstanceOfSatisfying(org.apache.arrow.flight.FlightRuntimeException.class, e -> {
                        assertThat(e.status().code()).isEqualTo(org.apache.arrow.flight.CallStatus.UNAUTHORIZED.code());
                        assertThat(e.getMessage()).contains("READ_ONLY");
                    });
        }
    }

    @Test
    void aQueryThatDoesNotParseIsASqlErrorNotARefusal() throws Exception {
        try (Connection connection = connect(); Statement statement = connection.createStatement()) {
            assertThatThrownBy(() -> statement.executeQuery("SELEKT 1"))
                    .isInstanceOf(SQLException.class)
                    .hasStackTraceContaining("INVALID_ARGUMENT")
                    .hasStackTraceContaining("syntax error");
        }
    }
}
