// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mallard.server.config.AccessMode;
import java.io.InputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.CancelFlightInfoRequest;
import org.apache.arrow.flight.CancelStatus;
import org.apache.arrow.flight.FlightCallHeaders;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.HeaderCallOption;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.auth2.BearerCredentialWriter;
import org.apache.arrow.flight.grpc.CredentialCallOption;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Results stream out of DuckDB (stream_results, on by default): a large result arrives whole over DoGet and HTTP
 * while DuckDB computes it as it is read, a client that stops reading leaves its session usable, and a cancel stops
 * a result DuckDB is still producing.
 */
class StreamingResultsIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long ROWS = 5_000_000;
    private static final String LARGE = "SELECT range AS n FROM range(" + ROWS + ")";
    /** A trillion rows and no blocking operator: only a streaming result can send its first batch. */
    private static final String ENDLESS = "SELECT a.range + b.range AS n FROM range(1000000) a, range(1000000) b";

    @TempDir
    static Path warehouse;

    static MallardServer server;
    static BufferAllocator allocator;
    static FlightClient flight;
    static FlightSqlClient sql;
    static HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void start() {
        server = MallardServer.start(TestServers.config(warehouse, AccessMode.COMPLETE, Optional.empty()));
        allocator = new RootAllocator();
        flight = FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", server.flightPort())).build();
        sql = new FlightSqlClient(flight);
    }

    @AfterAll
    static void stop() throws Exception {
        sql.close();
        allocator.close();
        server.close();
    }

    /** A token of a session of its own, usable over both Flight and HTTP. */
    private static String login() throws Exception {
        HttpResponse<String> answer = http.send(HttpRequest.newBuilder(uri("/v1/login"))
                .POST(HttpRequest.BodyPublishers.ofString(JSON.createObjectNode().put("username", TestServers.USER)
                        .put("password", TestServers.PASSWORD).toString())).build(), HttpResponse.BodyHandlers.ofString());
        return JSON.readTree(answer.body()).path("accessToken").asText();
    }

    private static URI uri(String path) {
        return URI.create("http://127.0.0.1:" + server.httpPort() + path);
    }

    private static HttpRequest.Builder query(String text, String token) {
        return HttpRequest.newBuilder(uri("/v1/query?q=" + URLEncoder.encode(text, StandardCharsets.UTF_8)))
                .header("Authorization", "Bearer " + token).header("x-dd-arrow-compression", "none");
    }

    private static HttpResponse<String> jsonLines(String text, String token) throws Exception {
        return http.send(query(text, token).header("Accept", "application/jsonl").build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A bound so that a query no cancel reaches ends (and fails the test) instead of running on; not a timing check. */
    private static HeaderCallOption bounded() {
        FlightCallHeaders headers = new FlightCallHeaders();
        headers.insert("x-dd-query-timeout", "120");
        return new HeaderCallOption(headers);
    }

    /** The sum of the batch's column {@code n}. */
    private static long sumOfN(VectorSchemaRoot root) {
        BigIntVector n = (BigIntVector) root.getVector("n");
        long sum = 0;
        for (int i = 0; i < root.getRowCount(); i++) {
            sum += n.get(i);
        }
        return sum;
    }

    @Test
    void aLargeResultArrivesWholeOverDoGetWhileItsSessionStreamsIt() throws Exception {
        String token = login();
        CredentialCallOption own = new CredentialCallOption(new BearerCredentialWriter(token));
        FlightInfo info = sql.execute(LARGE, own);
        long rows = 0;
        long sum = 0;
        try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), own)) {
            assertThat(stream.next()).isTrue();
            // Mid-stream the session's connection still has the result open in DuckDB: another statement is refused.
            HttpResponse<String> meanwhile = jsonLines("SELECT 1 AS one", token);
            assertThat(meanwhile.statusCode()).isEqualTo(409);
            assertThat(JSON.readTree(meanwhile.body()).path("error").path("code").asText()).isEqualTo("user.server.session_busy");
            do {
                sum += sumOfN(stream.getRoot());
                rows += stream.getRoot().getRowCount();
            } while (stream.next());
        }
        assertThat(rows).isEqualTo(ROWS);
        assertThat(sum).isEqualTo(ROWS * (ROWS - 1) / 2);
        assertThat(jsonLines("SELECT 1 AS one", token).body()).isEqualTo("{\"one\":1}\n");
    }

    @Test
    void aLargeResultArrivesWholeOverHttpArrow() throws Exception {
        String token = login();
        HttpResponse<InputStream> response = http.send(query(LARGE, token).build(), HttpResponse.BodyHandlers.ofInputStream());
        assertThat(response.statusCode()).isEqualTo(200);
        long rows = 0;
        long sum = 0;
        try (InputStream body = response.body(); ArrowStreamReader reader = new ArrowStreamReader(body, allocator)) {
            VectorSchemaRoot root = reader.getVectorSchemaRoot();
            while (reader.loadNextBatch()) {
                sum += sumOfN(root);
                rows += root.getRowCount();
            }
        }
        assertThat(rows).isEqualTo(ROWS);
        assertThat(sum).isEqualTo(ROWS * (ROWS - 1) / 2);
        assertThat(jsonLines("SELECT 2 AS two", token).body()).isEqualTo("{\"two\":2}\n");
    }

    @Test
    void aClientThatStopsReadingMidStreamLeavesItsSessionUsable() throws Exception {
        String token = login();
        CredentialCallOption own = new CredentialCallOption(new BearerCredentialWriter(token));
        // DoGet: read one batch of an endless result, then cancel the stream.
        FlightInfo info = sql.execute(ENDLESS, own, bounded());
        try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), own)) {
            assertThat(stream.next()).isTrue();
            stream.cancel("enough", null);
        } catch (FlightRuntimeException e) {
            assertThat(e.status().code()).isEqualTo(CallStatus.CANCELLED.code());
        }
        TestServers.awaitUntil(() -> answers("SELECT 3 AS three", token, "{\"three\":3}\n"), "the session answers after the abandoned DoGet");
        // HTTP: read the start of an endless response, then close the connection (as curl does when stopped). A raw
        // socket, because java.net.http keeps the connection open for a while after its body stream is closed.
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", server.httpPort())) {
            socket.getOutputStream().write(("GET /v1/query?q=" + URLEncoder.encode(ENDLESS, StandardCharsets.UTF_8) + " HTTP/1.1\r\n"
                    + "Host: 127.0.0.1\r\nAuthorization: Bearer " + token + "\r\nx-dd-query-timeout: 120\r\n"
                    + "x-dd-arrow-compression: none\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            byte[] start = socket.getInputStream().readNBytes(1 << 20);
            assertThat(new String(start, 0, 15, StandardCharsets.US_ASCII)).isEqualTo("HTTP/1.1 200 OK");
        }
        TestServers.awaitUntil(() -> answers("SELECT 4 AS four", token, "{\"four\":4}\n"), "the session answers after the abandoned response");
    }

    @Test
    void cancelFlightInfoStopsAResultDuckDbIsStillProducing() throws Exception {
        String token = login();
        CredentialCallOption own = new CredentialCallOption(new BearerCredentialWriter(token));
        FlightInfo info = sql.execute(ENDLESS, own, bounded());
        CompletableFuture<Throwable> fetch = TestServers.drainInBackground(sql, info, own);
        TestServers.awaitUntil(() -> server.sessions().runningStatements() > 0, "the endless query streams");
        assertThat(sql.cancelFlightInfo(new CancelFlightInfoRequest(info), own).getStatus()).isIn(CancelStatus.CANCELLED, CancelStatus.CANCELLING);
        assertThat(fetch.get(5, TimeUnit.MINUTES)).isInstanceOfSatisfying(FlightRuntimeException.class, e -> {
            assertThat(e.status().code()).isEqualTo(CallStatus.CANCELLED.code());
            assertThat(e.getMessage()).contains("cancelled on request");
        });
        TestServers.awaitUntil(() -> answers("SELECT 5 AS five", token, "{\"five\":5}\n"), "the session answers after the cancel");
    }

    @Test
    void httpCancelStopsAResponseDuckDbIsStillProducing() throws Exception {
        String token = login();
        java.util.concurrent.atomic.AtomicBoolean reading = new java.util.concurrent.atomic.AtomicBoolean();
        CompletableFuture<Throwable> read = CompletableFuture.supplyAsync(() -> {
            try {
                HttpResponse<InputStream> response = http.send(query(ENDLESS, token).header("x-dd-query-timeout", "120")
                        .header("x-dd-query-id", "4242").build(), HttpResponse.BodyHandlers.ofInputStream());
                try (InputStream body = response.body(); ArrowStreamReader reader = new ArrowStreamReader(body, allocator)) {
                    while (reader.loadNextBatch()) {
                        // drained until the server cuts the response short
                        reading.set(true);
                    }
                }
                return null;
            } catch (Throwable e) {
                return e;
            }
        });
        // Once batches arrive, the query is past its execution in DuckDB: DuckDB computes the rest as they are read.
        TestServers.awaitUntil(reading::get, "the endless response streams");
        boolean cancelled = false;
        while (!cancelled) {
            // Checked before each cancel goes out: once one has, the response may end at any moment.
            assertThat(read.isDone()).as("the endless response ends only by the cancel").isFalse();
            HttpResponse<String> answer = http.send(HttpRequest.newBuilder(uri("/v1/cancel?id=4242")).header("Authorization", "Bearer " + token)
                    .build(), HttpResponse.BodyHandlers.ofString());
            cancelled = JSON.readTree(answer.body()).path("cancelled").asBoolean();
        }
        // The status went out with the first batch: the response is cut short (an Arrow reader may see that as its end;
        // the response had no end before the cancel). A failure of the test's own reading would show here.
        Throwable failure = read.get(5, TimeUnit.MINUTES);
        assertThat(failure).satisfiesAnyOf(e -> assertThat(e).isNull(), e -> assertThat(e).isInstanceOf(java.io.IOException.class));
        TestServers.awaitUntil(() -> answers("SELECT 6 AS six", token, "{\"six\":6}\n"), "the session answers after the cancel");
    }

    @Test
    void aJdbcResultSetClosedBeforeItsEndLetsTheNextQueryOnTheConnectionRun() throws Exception {
        try (java.sql.Connection connection = TestServers.connect(server); java.sql.Statement statement = connection.createStatement()) {
            for (int round = 0; round < 5; round++) {
                try (java.sql.ResultSet rs = statement.executeQuery(LARGE)) {
                    assertThat(rs.next()).isTrue();
                }
                // The driver cancels the unread DoGet; the server closes the result when it hears of it, and the next
                // statement waits for that rather than finding the session busy.
                try (java.sql.ResultSet rs = statement.executeQuery("SELECT " + round + " AS round")) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getInt(1)).isEqualTo(round);
                }
            }
        }
    }

    private static boolean answers(String text, String token, String expected) {
        try {
            HttpResponse<String> answer = jsonLines(text, token);
            return answer.statusCode() == 200 && answer.body().equals(expected);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
