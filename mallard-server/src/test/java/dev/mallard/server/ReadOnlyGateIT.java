// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mallard.server.auth.PasswordHash;
import dev.mallard.server.config.AccessMode;
import dev.mallard.server.config.ServerConfig;
import dev.mallard.server.config.UserAccount;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Optional;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The READ_ONLY bypasses found in issue 16, each through every way a statement reaches the server: HTTP, Flight
 * plain (CommandStatementQuery), Flight prepared, Flight DoPut (CommandStatementUpdate) and the Flight SQL JDBC
 * driver. After each refusal the data and the views are as they were.
 */
class ReadOnlyGateIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path warehouse;

    static MallardServer server;
    static BufferAllocator allocator;
    static FlightClient client;
    static FlightSqlClient sql;
    static CallOption bearer;
    static String token;

    @BeforeAll
    static void start() throws Exception {
        Path database = warehouse.resolve("gate.duckdb");
        try (MallardServer complete = MallardServer.start(config(AccessMode.COMPLETE, database)); Connection connection = TestServers.connect(complete);
                Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE t AS SELECT range AS id FROM range(10)");
            statement.execute("CREATE SEQUENCE s");
            statement.execute("CREATE MATERIALIZED VIEW v AS SELECT count(*) AS n FROM t");
        }
        server = MallardServer.start(config(AccessMode.READ_ONLY, database));
        allocator = new RootAllocator();
        client = FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", server.flightPort())).build();
        bearer = client.authenticateBasicToken(TestServers.USER, TestServers.PASSWORD).orElseThrow();
        sql = new FlightSqlClient(client);
        token = HttpApiITSupport.login(server.httpPort());
    }

    static ServerConfig config(AccessMode mode, Path database) {
        return new ServerConfig(warehouse.resolve("warehouse"), Optional.of(database), "127.0.0.1", 0, ServerConfig.DEFAULT_HTTP_MAX_BODY_BYTES, 0, Optional.empty(),
                List.of(new UserAccount(TestServers.USER, PasswordHash.of(TestServers.PASSWORD))), mode, Optional.empty(),
                ServerConfig.DEFAULT_TOKEN_EXPIRY_MINUTES, ServerConfig.SessionLimits.DEFAULT, 1000, 0, Optional.empty());
    }

    @AfterAll
    static void stop() throws Exception {
        client.close();
        allocator.close();
        server.close();
    }

    static HttpResponse<String> http(String text) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/v1/query"))
                .header("Authorization", "Bearer " + token).header("Accept", "application/jsonl")
                .POST(HttpRequest.BodyPublishers.ofString(text)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The statement is refused over every path, with {@code code} over HTTP, and changes nothing. */
    static void refusedEverywhere(String text, String code) throws Exception {
        HttpResponse<String> response = http(text);
        assertThat(response.statusCode()).as(response.body()).isIn(400, 403);
        assertThat(JSON.readTree(response.body()).path("error").path("code").asText()).isEqualTo(code);
        assertThat(response.body()).doesNotContain("jackson", "com.fasterxml");
        assertThatThrownBy(() -> drain(sql.execute(text, bearer))).as("plain").isInstanceOf(FlightRuntimeException.class);
        assertThatThrownBy(() -> sql.executeUpdate(text, bearer)).as("DoPut").isInstanceOf(FlightRuntimeException.class);
        assertThatThrownBy(() -> {
            try (FlightSqlClient.PreparedStatement prepared = sql.prepare(text, bearer)) {
                drain(prepared.execute(bearer));
            }
        }).as("prepared").isInstanceOf(FlightRuntimeException.class);
        try (Connection connection = TestServers.connect(server); Statement statement = connection.createStatement()) {
            assertThatThrownBy(() -> statement.execute(text)).as("JDBC").isInstanceOf(SQLException.class);
        }
        assertUnchanged();
    }

    static void drain(org.apache.arrow.flight.FlightInfo info) throws Exception {
        try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), bearer)) {
            while (stream.next()) {
                // read to the end
            }
        }
    }

    static void assertUnchanged() throws Exception {
        try (Connection connection = TestServers.connect(server); Statement statement = connection.createStatement()) {
            assertThat(longOf(statement, "SELECT count(*) FROM t")).isEqualTo(10);
            assertThat(longOf(statement, "SELECT n FROM v")).isEqualTo(10);
            assertThat(longOf(statement, "SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE 'v3%'")).isZero();
            assertThat(longOf(statement, "SELECT count(*) FROM duckdb_views() WHERE view_name = 'v3'")).isZero();
        }
    }

    static long longOf(Statement statement, String query) throws SQLException {
        try (ResultSet rs = statement.executeQuery(query)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    void aViewCreatedThroughASmuggledQueryTextIsRefused() throws Exception {
        refusedEverywhere("SELECT * FROM query('SELECT dbs' || 'p_create_view(''v3'', ''SELECT id FROM t'')')", "user.sql.unsupported");
        refusedEverywhere("SELECT * FROM query('SELECT dbsp_create_view(''v3'', ''SELECT id FROM t'')')", "user.access.denied");
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "SELECT dbsp_drop_view('v')",
        "SELECT dbsp_create_view('v3', 'SELECT id FROM t')",
        "SELECT dbsp_drop('v')",
        "SELECT * FROM dbsp_drop_cascade('v')",
        "SELECT * FROM dbsp_save()",
        "SELECT * FROM dbsp_load('views.json', 'json')",
        "SELECT * FROM dbsp_autopersist(false)",
        "SELECT * FROM dbsp_spill('64MB')",
        "SELECT * FROM dbsp_parallel(2)",
        "SELECT * FROM dbsp_timing(true)",
        "SELECT * FROM dbsp_recursion_limit(10, 1)",
        "WITH x AS (DELETE FROM t RETURNING *) SELECT count(*) FROM x",
        "SELECT * FROM (WITH x AS (UPDATE t SET id = 0 RETURNING *) SELECT * FROM x)",
        "SELECT * FROM checkpoint()",
        "SELECT nextval('s')",
        "COPY t TO '/tmp/mallard-read-only-gate.csv'",
        "WITH x AS (COPY t TO '/tmp/mallard-read-only-gate.csv') SELECT 1",
        "EXPORT DATABASE '/tmp/mallard-read-only-gate'",
        "ATTACH ':memory:' AS other",
        "INSTALL httpfs",
        "LOAD httpfs",
        "SET threads = 1",
        "RESET threads",
        "PRAGMA enable_profiling",
        "CALL enable_logging()",
        "SELECT 1; SELECT 2",
        "SELECT 1; DELETE FROM t",
        "EXPLAIN ANALYZE WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x"
    })
    void aWriteOrAnEscapeIsRefusedOverEveryPath(String text) throws Exception {
        refusedEverywhere(text, "user.access.denied");
    }

    @ParameterizedTest
    @ValueSource(strings = {"SELECT 1 WHERE dbsp_create_view('v3', 'SELECT id FROM t') IS NOT NULL",
        "SELECT (SELECT dbsp_drop_view('v'))", "SELECT dbsp_sync(), count(*) FROM (WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x)"})
    void aWritingViewFunctionOrAWriteInsideASelectCallingViewFunctionsIsRefused(String text) throws Exception {
        refusedEverywhere(text, "user.access.denied");
    }

    @ParameterizedTest
    @ValueSource(strings = {"EXPLAIN SELECT dbsp_sync()", "SELECT * FROM query('SELECT dbsp_sync()')"})
    void aViewFunctionWhereTheFrontDoorCannotRunItIsRefusedWithThePlacementCode(String text) throws Exception {
        refusedEverywhere(text, "user.view.call_placement");
    }

    @ParameterizedTest
    @ValueSource(strings = {"SELECT dbsp_sync() AS s", "SELECT * FROM dbsp_stats() WHERE metric = 'views'",
        "SELECT * FROM dbsp_spill()", "SELECT * FROM dbsp_parallel()", "SELECT dbsp_recursion_limit()"})
    void aReadingViewFunctionInsideALargerSelectAnswersOverHttpAndJdbc(String text) throws Exception {
        HttpResponse<String> response = http(text);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        try (Connection connection = TestServers.connect(server); Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery(text)) {
            assertThat(rs.next()).isTrue();
        }
        assertUnchanged();
    }

    @ParameterizedTest
    @ValueSource(strings = {"EXPLAIN SELECT count(*) FROM t", "EXPLAIN ANALYZE SELECT count(*) FROM t"})
    void explainAndExplainAnalyzeOfAQueryAnswer(String text) throws Exception {
        HttpResponse<String> response = http(text);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        assertThat(response.body()).contains("explain");
        try (Connection connection = TestServers.connect(server); Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery(text)) {
            assertThat(rs.next()).isTrue();
        }
        assertUnchanged();
    }

    @Test
    void aTopLevelSyncAnswersOnEveryPath() throws Exception {
        assertThat(http("SELECT dbsp_sync()").statusCode()).isEqualTo(200);
        try (Connection connection = TestServers.connect(server); Statement statement = connection.createStatement()) {
            assertThat(longOf(statement, "SELECT dbsp_sync()")).isZero();
        }
        drain(sql.execute("SELECT * FROM dbsp_stats()", bearer));
        assertUnchanged();
    }
}
