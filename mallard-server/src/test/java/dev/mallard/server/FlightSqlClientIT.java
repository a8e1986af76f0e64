// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.server.config.AccessMode;
import java.nio.file.Path;
import java.util.Optional;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.CancelFlightInfoRequest;
import org.apache.arrow.flight.CancelStatus;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.auth2.BearerCredentialWriter;
import org.apache.arrow.flight.grpc.CredentialCallOption;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions.TableExistsOption;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Arrow Java's FlightSqlClient: raw DoGet of a large result, read slowly, and the status codes of failures. */
class FlightSqlClientIT {
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

    @Test
    void aLargeResultArrivesWholeWhenTheClientReadsSlowly() throws Exception {
        FlightInfo info = sql.execute("SELECT range AS n, repeat('x', 100) AS pad FROM range(300000)", bearer);
        assertThat(info.getSchema().getFields()).extracting(f -> f.getName()).containsExactly("n", "pad");
        assertThat(info.getSchema().getFields().get(0).getType()).isEqualTo(new ArrowType.Int(64, true));
        long rows = 0;
        long sum = 0;
        int batches = 0;
        try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), bearer)) {
            while (stream.next()) {
                BigIntVector n = (BigIntVector) stream.getRoot().getVector("n");
                for (int i = 0; i < stream.getRoot().getRowCount(); i++) {
                    sum += n.get(i);
                }
                rows += stream.getRoot().getRowCount();
                if (batches++ < 5) {
                    // A slow reader at the start: the server must wait for the stream to be ready, not drop or buffer it all.
                    Thread.sleep(200);
                }
            }
        }
        assertThat(rows).isEqualTo(300_000);
        assertThat(sum).isEqualTo(300_000L * 299_999L / 2);
        assertThat(batches).isEqualTo(300);
    }

    @Test
    void aTicketIsGoodForOneFetch() throws Exception {
        FlightInfo info = sql.execute("SELECT 1", bearer);
        try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), bearer)) {
            while (stream.next()) {
                assertThat(stream.getRoot().getRowCount()).isEqualTo(1);
            }
        }
        assertThatThrownBy(() -> {
            try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), bearer)) {
                stream.next();
            }
        }).isInstanceOfSatisfying(FlightRuntimeException.class, e -> assertThat(e.status().code()).isEqualTo(CallStatus.NOT_FOUND.code()));
    }

    @Test
    void cancelFlightInfoInterruptsAPreparedQueryWhileItsDoGetRuns() throws Exception {
        FlightSqlClient.PreparedStatement prepared = sql.prepare(
                "SELECT sum(hash(a.range + b.range)) AS s FROM range(1000000) a, range(1000000) b", bearer);
        try {
            FlightInfo info = prepared.execute(bearer);
            java.util.concurrent.CompletableFuture<Throwable> fetch = TestServers.drainInBackground(sql, info, bearer);
            TestServers.awaitUntil(() -> server.sessions().runningStatements() > 0, "the prepared query runs in its DoGet");
            assertThat(sql.cancelFlightInfo(new CancelFlightInfoRequest(info), bearer).getStatus()).isEqualTo(CancelStatus.CANCELLED);
            assertThat(fetch.get(60, java.util.concurrent.TimeUnit.SECONDS))
                    .isInstanceOfSatisfying(FlightRuntimeException.class, e -> assertThat(e.status().code()).isEqualTo(CallStatus.CANCELLED.code()));
            TestServers.awaitUntil(() -> server.sessions().runningStatements() == 0, "DuckDB interrupted the query");
        } finally {
            prepared.close(bearer);
        }
    }

    @Test
    void cancelFlightInfoInterruptsAStatementQueryWhileItsDoGetRuns() throws Exception {
        FlightInfo info = sql.execute("SELECT sum(hash(a.range + b.range)) AS s FROM range(1000000) a, range(1000000) b", bearer, boundedTime());
        assertThat(info.getSchema().getFields()).extracting(f -> f.getName()).containsExactly("s");
        java.util.concurrent.CompletableFuture<Throwable> fetch = TestServers.drainInBackground(sql, info, bearer);
        TestServers.awaitUntil(() -> server.sessions().runningStatements() > 0, "the statement query runs in its DoGet");
        assertThat(sql.cancelFlightInfo(new CancelFlightInfoRequest(info), bearer).getStatus()).isEqualTo(CancelStatus.CANCELLED);
        // A trillion-row join: only an interrupt in DuckDB ends it.
        assertThat(fetch.get(60, java.util.concurrent.TimeUnit.SECONDS))
                .isInstanceOfSatisfying(FlightRuntimeException.class, e -> {
                    assertThat(e.status().code()).isEqualTo(CallStatus.CANCELLED.code());
                    assertThat(e.getMessage()).contains("cancelled on request");
                });
        TestServers.awaitUntil(() -> server.sessions().runningStatements() == 0, "DuckDB interrupted the query");
        assertThat(sql.cancelFlightInfo(new CancelFlightInfoRequest(info), bearer).getStatus()).isEqualTo(CancelStatus.NOT_CANCELLABLE);
        assertThat(fetchLong("SELECT 42 AS answer", bearer)).as("the session runs the next query").isEqualTo(42);
    }

    @Test
    void aStatementQueryCancelledOverHttpByItsQueryIdAnswersCancelled() throws Exception {
        // A token of its own: /v1/cancel cancels in the session of the token it is given.
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        java.net.http.HttpResponse<String> login = http.send(java.net.http.HttpRequest.newBuilder(
                        java.net.URI.create("http://127.0.0.1:" + server.httpPort() + "/v1/login"))
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"username\":\"" + TestServers.USER + "\",\"password\":\""
                        + TestServers.PASSWORD + "\"}")).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
        String token = new com.fasterxml.jackson.databind.ObjectMapper().readTree(login.body()).path("accessToken").asText();
        CredentialCallOption own = new CredentialCallOption(new BearerCredentialWriter(token));
        org.apache.arrow.flight.FlightCallHeaders headers = new org.apache.arrow.flight.FlightCallHeaders();
        headers.insert("x-dd-query-id", "long-flight");
        // A bound against hanging, as in boundedTime().
        headers.insert("x-dd-query-timeout", "120");
        FlightInfo info = sql.execute("SELECT sum(hash(a.range + b.range)) AS s FROM range(1000000) a, range(1000000) b", own,
                new org.apache.arrow.flight.HeaderCallOption(headers));
        java.util.concurrent.CompletableFuture<Throwable> fetch = TestServers.drainInBackground(sql, info, own);
        TestServers.awaitUntil(() -> server.sessions().runningStatements() > 0, "the statement query runs in its DoGet");
        java.net.http.HttpResponse<String> answer = http.send(java.net.http.HttpRequest.newBuilder(
                        java.net.URI.create("http://127.0.0.1:" + server.httpPort() + "/v1/cancel?id=long-flight"))
                .header("Authorization", "Bearer " + token).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(answer.statusCode()).isEqualTo(200);
        assertThat(new com.fasterxml.jackson.databind.ObjectMapper().readTree(answer.body()).path("cancelled").asBoolean()).isTrue();
        assertThat(fetch.get(60, java.util.concurrent.TimeUnit.SECONDS))
                .isInstanceOfSatisfying(FlightRuntimeException.class, e -> {
                    assertThat(e.status().code()).isEqualTo(CallStatus.CANCELLED.code());
                    assertThat(e.getMessage()).contains("cancelled on request");
                });
        assertThat(fetchLong("SELECT 43 AS answer", own)).as("the session runs the next query").isEqualTo(43);
    }

    @Test
    void cancelFlightInfoStopsAStatementQueryBeforeItRuns() throws Exception {
        FlightInfo info = sql.execute("SELECT 1", bearer);
        assertThat(sql.cancelFlightInfo(new CancelFlightInfoRequest(info), bearer).getStatus()).isEqualTo(CancelStatus.CANCELLED);
        assertThatThrownBy(() -> {
            try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), bearer)) {
                stream.next();
            }
        }).isInstanceOfSatisfying(FlightRuntimeException.class, e -> assertThat(e.status().code()).isEqualTo(CallStatus.CANCELLED.code()));
        assertThat(sql.cancelFlightInfo(new CancelFlightInfoRequest(info), bearer).getStatus()).isEqualTo(CancelStatus.NOT_CANCELLABLE);
    }

    /**
     * A timeout far past the cancel, so that a query no cancel reaches ends (TIMED_OUT, failing the test) instead of
     * holding its session forever; not a timing check.
     */
    private static org.apache.arrow.flight.HeaderCallOption boundedTime() {
        org.apache.arrow.flight.FlightCallHeaders headers = new org.apache.arrow.flight.FlightCallHeaders();
        headers.insert("x-dd-query-timeout", "120");
        return new org.apache.arrow.flight.HeaderCallOption(headers);
    }

    /** Runs a query of one integer value in the credentials' session and answers it. */
    private static long fetchLong(String query, CredentialCallOption credentials) throws Exception {
        FlightInfo info = sql.execute(query, credentials);
        try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), credentials)) {
            assertThat(stream.next()).isTrue();
            return ((org.apache.arrow.vector.BaseIntVector) stream.getRoot().getVector(0)).getValueAsLong(0);
        }
    }

    @Test
    void cancelFlightInfoStopsAPreparedQueryBeforeItRuns() throws Exception {
        FlightSqlClient.PreparedStatement prepared = sql.prepare("SELECT 42 AS answer", bearer);
        try {
            FlightInfo info = prepared.execute(bearer);
            assertThat(sql.cancelFlightInfo(new CancelFlightInfoRequest(info), bearer).getStatus()).isEqualTo(CancelStatus.CANCELLED);
            assertThatThrownBy(() -> {
                try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), bearer)) {
                    stream.next();
                }
            }).isInstanceOfSatisfying(FlightRuntimeException.class, e -> assertThat(e.status().code()).isEqualTo(CallStatus.CANCELLED.code()));
        } finally {
            prepared.close(bearer);
        }
    }

    @Test
    void aSqlErrorIsInvalidArgumentAndNoTokenIsUnauthenticated() {
        assertThatThrownBy(() -> sql.execute("SELECT * FROM nowhere", bearer))
                .isInstanceOfSatisfying(FlightRuntimeException.class, e -> {
                    assertThat(e.status().code()).isEqualTo(CallStatus.INVALID_ARGUMENT.code());
                    assertThat(e.getMessage()).contains("nowhere");
                });
        assertThatThrownBy(() -> sql.execute("SELECT 1"))
                .isInstanceOfSatisfying(FlightRuntimeException.class, e -> assertThat(e.status().code()).isEqualTo(CallStatus.UNAUTHENTICATED.code()));
        CredentialCallOption garbage = new CredentialCallOption(new BearerCredentialWriter("garbage"));
        assertThatThrownBy(() -> sql.execute("SELECT 1", garbage))
                .isInstanceOfSatisfying(FlightRuntimeException.class, e -> assertThat(e.status().code()).isEqualTo(CallStatus.UNAUTHENTICATED.code()));
    }

    @Test
    void anUpdateThroughDoPutReportsItsCount() {
        sql.executeUpdate("CREATE TABLE raw_updates (i INTEGER)", bearer);
        assertThat(sql.executeUpdate("INSERT INTO raw_updates SELECT range FROM range(7)", bearer)).isEqualTo(7);
    }

    @Test
    void headersSetTheBatchSizeAndTheTimeout() throws Exception {
        org.apache.arrow.flight.FlightCallHeaders headers = new org.apache.arrow.flight.FlightCallHeaders();
        headers.insert("x-dd-fetch-size", "10");
        org.apache.arrow.flight.HeaderCallOption small = new org.apache.arrow.flight.HeaderCallOption(headers);
        FlightInfo info = sql.execute("SELECT range FROM range(95)", bearer, small);
        int batches = 0;
        try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), bearer)) {
            while (stream.next()) {
                batches++;
            }
        }
        assertThat(batches).isEqualTo(10);

        org.apache.arrow.flight.FlightCallHeaders slow = new org.apache.arrow.flight.FlightCallHeaders();
        slow.insert("x-dd-query-timeout", "1");
        FlightInfo timed = sql.execute("SELECT sum(hash(a.range + b.range)) FROM range(1000000) a, range(1000000) b", bearer,
                new org.apache.arrow.flight.HeaderCallOption(slow));
        assertThatThrownBy(() -> {
            try (FlightStream stream = sql.getStream(timed.getEndpoints().get(0).getTicket(), bearer)) {
                stream.next();
            }
        }).isInstanceOfSatisfying(FlightRuntimeException.class, e -> {
                    assertThat(e.status().code()).isEqualTo(CallStatus.TIMED_OUT.code());
                    assertThat(e.getMessage()).contains("timeout of 1 s");
                });
        FlightInfo after = sql.execute("SELECT 1", bearer);
        assertThat(after.getSchema().getFields()).hasSize(1);
    }

    @Test
    void typeInfoListsDuckDbTypesAndFiltersByJdbcType() throws Exception {
        java.util.List<String> all = new java.util.ArrayList<>();
        FlightInfo info = sql.getXdbcTypeInfo(bearer);
        try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), bearer)) {
            while (stream.next()) {
                org.apache.arrow.vector.VarCharVector names = (org.apache.arrow.vector.VarCharVector) stream.getRoot().getVector("type_name");
                for (int i = 0; i < stream.getRoot().getRowCount(); i++) {
                    all.add(names.getObject(i).toString());
                }
            }
        }
        assertThat(all).contains("INTEGER", "VARCHAR", "DECIMAL", "TIMESTAMP", "BLOB", "UUID");
        FlightInfo integers = sql.getXdbcTypeInfo(java.sql.Types.INTEGER, bearer);
        long rows = 0;
        try (FlightStream stream = sql.getStream(integers.getEndpoints().get(0).getTicket(), bearer)) {
            while (stream.next()) {
                rows += stream.getRoot().getRowCount();
            }
        }
        assertThat(rows).isEqualTo(2);
    }

    @Test
    void bulkIngestCreatesAppendsAndReplacesATable() throws Exception {
        try (org.apache.arrow.vector.VectorSchemaRoot root = org.apache.arrow.vector.VectorSchemaRoot.create(new org.apache.arrow.vector.types.pojo.Schema(
                java.util.List.of(org.apache.arrow.vector.types.pojo.Field.nullable("id", new ArrowType.Int(64, true)),
                        org.apache.arrow.vector.types.pojo.Field.nullable("name", ArrowType.Utf8.INSTANCE))), allocator)) {
            BigIntVector ids = (BigIntVector) root.getVector("id");
            org.apache.arrow.vector.VarCharVector names = (org.apache.arrow.vector.VarCharVector) root.getVector("name");
            root.allocateNew();
            for (int i = 0; i < 1000; i++) {
                ids.setSafe(i, i);
                names.setSafe(i, ("name-" + i).getBytes(java.nio.charset.StandardCharsets.UTF_8));
            }
            root.setRowCount(1000);
            assertThat(sql.executeIngest(root, ingest(TableExistsOption.TABLE_EXISTS_OPTION_FAIL), bearer)).isEqualTo(1000);
            assertThat(sql.executeIngest(root, ingest(TableExistsOption.TABLE_EXISTS_OPTION_APPEND), bearer)).isEqualTo(1000);
            assertThat(count("SELECT count(*) FROM ingested")).isEqualTo(2000);
            assertThat(sql.executeIngest(root, ingest(TableExistsOption.TABLE_EXISTS_OPTION_REPLACE), bearer)).isEqualTo(1000);
            assertThat(count("SELECT count(*) FROM ingested WHERE name = 'name-' || id")).isEqualTo(1000);
            assertThatThrownBy(() -> sql.executeIngest(root, ingest(TableExistsOption.TABLE_EXISTS_OPTION_FAIL), bearer))
                    .isInstanceOfSatisfying(FlightRuntimeException.class, e -> {
                        assertThat(e.status().code()).isEqualTo(CallStatus.INVALID_ARGUMENT.code());
                        assertThat(e.getMessage()).contains("exists");
                    });
        }
    }

    private static FlightSqlClient.ExecuteIngestOptions ingest(TableExistsOption ifExists) {
        return new FlightSqlClient.ExecuteIngestOptions("ingested", TableDefinitionOptions.newBuilder()
                .setIfNotExist(TableDefinitionOptions.TableNotExistOption.TABLE_NOT_EXIST_OPTION_CREATE).setIfExists(ifExists).build(),
                null, null, java.util.Map.of());
    }

    private static long count(String query) throws Exception {
        FlightInfo info = sql.execute(query, bearer);
        try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), bearer)) {
            stream.next();
            return ((BigIntVector) stream.getRoot().getVector(0)).get(0);
        }
    }
}
