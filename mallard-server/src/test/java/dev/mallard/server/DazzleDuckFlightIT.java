// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.server.config.AccessMode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.FlightCallHeaders;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.HeaderCallOption;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.SchemaResult;
import org.apache.arrow.flight.grpc.CredentialCallOption;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.types.pojo.Field;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a DazzleDuck Flight client depends on: GetSchema of a statement, an endpoint for a statement without rows, DoGet's headers. */
class DazzleDuckFlightIT {
    @TempDir
    static Path warehouse;

    static MallardServer server;
    static BufferAllocator allocator;
    static FlightClient flight;
    static FlightSqlClient sql;
    static CredentialCallOption bearer;

    @BeforeAll
    static void start() throws Exception {
        server = MallardServer.start(TestServers.config(warehouse, AccessMode.COMPLETE, Optional.empty()));
        allocator = new RootAllocator();
        flight = FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", server.flightPort())).build();
        bearer = flight.authenticateBasicToken(TestServers.USER, TestServers.PASSWORD).orElseThrow();
        sql = new FlightSqlClient(flight);
    }

    @AfterAll
    static void stop() throws Exception {
        sql.close();
        allocator.close();
        server.close();
    }

    private static long count(String table) throws Exception {
        FlightInfo info = sql.execute("SELECT count(*)::BIGINT AS n FROM " + table, bearer);
        try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), bearer)) {
            assertThat(stream.next()).isTrue();
            return ((BigIntVector) stream.getRoot().getVector(0)).get(0);
        }
    }

    @Test
    void getSchemaOfAStatementAnswersItsColumnsWithoutRunningIt() throws Exception {
        SchemaResult query = sql.getExecuteSchema("SELECT 1::BIGINT AS one, 'x' AS two", bearer);
        assertThat(query.getSchema().getFields()).extracting(Field::getName).containsExactly("one", "two");
        execute("CREATE TABLE dd_flight_schema_only (n INTEGER)");
        SchemaResult insert = sql.getExecuteSchema("INSERT INTO dd_flight_schema_only VALUES (1)", bearer);
        assertThat(insert.getSchema().getFields()).isEmpty();
        assertThat(count("dd_flight_schema_only")).as("GetSchema did not run the insert").isZero();
    }

    private static FlightInfo execute(String statement) {
        return sql.execute(statement, bearer);
    }

    @Test
    void aStatementWithoutRowsHasOneEndpointWhoseStreamIsEmpty() throws Exception {
        FlightInfo info = execute("CREATE TABLE dd_flight_created (n INTEGER)");
        assertThat(info.getEndpoints()).hasSize(1);
        try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), bearer)) {
            assertThat(stream.next()).isFalse();
        }
        assertThat(count("dd_flight_created")).isZero();
    }

    @Test
    void theDoGetsFetchSizeSetsTheBatchesAsDazzleDuckReadsIt() throws Exception {
        FlightInfo info = execute("SELECT range AS n FROM range(10000)");
        FlightCallHeaders headers = new FlightCallHeaders();
        headers.insert("x-dd-fetch-size", "1000");
        List<Integer> batches = new ArrayList<>();
        try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), bearer, new HeaderCallOption(headers))) {
            while (stream.next()) {
                batches.add(stream.getRoot().getRowCount());
            }
        }
        assertThat(batches.stream().mapToInt(Integer::intValue).sum()).isEqualTo(10_000);
        assertThat(batches).allSatisfy(rows -> assertThat(rows).isLessThanOrEqualTo(1000));
    }

    @Test
    void theDoGetsQueryTimeoutStopsALongQuery() throws Exception {
        FlightInfo info = execute(DazzleDuckHttpBasicIT.LONG_QUERY);
        FlightCallHeaders headers = new FlightCallHeaders();
        headers.insert("x-dd-query-timeout", "1");
        CallOption timeout = new HeaderCallOption(headers);
        Throwable failure = null;
        try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), bearer, timeout)) {
            while (stream.next()) {
                // drained
            }
        } catch (org.apache.arrow.flight.FlightRuntimeException e) {
            failure = e;
        }
        assertThat(failure).isInstanceOf(org.apache.arrow.flight.FlightRuntimeException.class);
        assertThat(((org.apache.arrow.flight.FlightRuntimeException) failure).status().code()).isEqualTo(org.apache.arrow.flight.FlightStatusCode.TIMED_OUT);
    }

    @Test
    void theDatabaseAndSchemaHeadersSelectWhereAStatementRunsAndAnUnknownOneIsRefused() throws Exception {
        Path attached = warehouse.resolve("warehouse").resolve("dd_flight_other.duckdb");
        execute("ATTACH '" + attached + "' AS dd_flight_other");
        execute("CREATE SCHEMA dd_flight_other.sales");
        execute("CREATE TABLE dd_flight_other.sales.orders AS SELECT 5::BIGINT AS n");
        FlightCallHeaders headers = new FlightCallHeaders();
        headers.insert("database", "dd_flight_other");
        headers.insert("schema", "sales");
        FlightInfo info = sql.execute("SELECT n FROM orders", bearer, new HeaderCallOption(headers));
        try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), bearer)) {
            assertThat(stream.next()).isTrue();
            assertThat(((BigIntVector) stream.getRoot().getVector(0)).get(0)).isEqualTo(5);
        }
        FlightCallHeaders unknown = new FlightCallHeaders();
        unknown.insert("database", "dd_flight_missing");
        assertThatThrownBy(() -> sql.execute("SELECT 1", bearer, new HeaderCallOption(unknown)))
                .isInstanceOfSatisfying(org.apache.arrow.flight.FlightRuntimeException.class, e -> {
                    assertThat(e.status().code()).isEqualTo(org.apache.arrow.flight.FlightStatusCode.INVALID_ARGUMENT);
                    assertThat(e.getMessage()).contains("dd_flight_missing");
                });
    }

    @Test
    void theJdbcDriversDatabaseAndSchemaPropertiesSelectWhereItsStatementsRun() throws Exception {
        Path attached = warehouse.resolve("warehouse").resolve("dd_flight_jdbc.duckdb");
        execute("ATTACH '" + attached + "' AS dd_flight_jdbc");
        execute("CREATE SCHEMA dd_flight_jdbc.reports");
        execute("CREATE TABLE dd_flight_jdbc.reports.totals AS SELECT 9 AS total");
        java.util.Properties properties = TestServers.credentials();
        properties.put("database", "dd_flight_jdbc");
        properties.put("schema", "reports");
        try (java.sql.Connection connection = java.sql.DriverManager.getConnection(TestServers.jdbcUrl(server), properties);
                java.sql.Statement statement = connection.createStatement();
                java.sql.ResultSet rs = statement.executeQuery("SELECT total FROM totals")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getInt(1)).isEqualTo(9);
        }
    }

    @Test
    void aLimitHeaderIsRefusedOnACompleteServer() {
        FlightCallHeaders headers = new FlightCallHeaders();
        headers.insert("x-dd-limit", "5");
        assertThatThrownBy(() -> sql.execute("SELECT 1", bearer, new HeaderCallOption(headers)))
                .isInstanceOfSatisfying(org.apache.arrow.flight.FlightRuntimeException.class, e -> {
                    assertThat(e.status().code()).isEqualTo(org.apache.arrow.flight.FlightStatusCode.INVALID_ARGUMENT);
                    assertThat(e.getMessage()).contains("is not supported by this producer");
                });
    }

    @Test
    void limitAndOffsetHeadersCutTheRowsOfADoGetOnAReadOnlyServer() throws Exception {
        Path own = java.nio.file.Files.createDirectories(warehouse.resolve("read-only"));
        try (MallardServer readOnly = MallardServer.start(TestServers.config(own, AccessMode.READ_ONLY, Optional.empty()));
                FlightClient client = FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", readOnly.flightPort())).build();
                FlightSqlClient reader = new FlightSqlClient(client)) {
            CredentialCallOption token = client.authenticateBasicToken(TestServers.USER, TestServers.PASSWORD).orElseThrow();
            FlightCallHeaders headers = new FlightCallHeaders();
            headers.insert("x-dd-limit", "4");
            headers.insert("x-dd-offset", "2998");
            headers.insert("x-dd-fetch-size", "1000");
            HeaderCallOption window = new HeaderCallOption(headers);
            FlightInfo info = reader.execute("SELECT range AS n FROM range(10000) ORDER BY n", token, window);
            List<Long> values = new ArrayList<>();
            try (FlightStream stream = reader.getStream(info.getEndpoints().get(0).getTicket(), token, window)) {
                while (stream.next()) {
                    BigIntVector n = (BigIntVector) stream.getRoot().getVector(0);
                    for (int i = 0; i < stream.getRoot().getRowCount(); i++) {
                        values.add(n.get(i));
                    }
                }
            }
            assertThat(values).containsExactly(2998L, 2999L, 3000L, 3001L);
        }
    }
}
