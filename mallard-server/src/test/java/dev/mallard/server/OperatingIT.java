// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import static dev.mallard.server.DazzleDuckHttpClient.JSONL;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.mallard.server.config.AccessMode;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.grpc.CredentialCallOption;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/** Operating the server: one audit line per statement on both listeners, and the Prometheus series on /metrics. */
class OperatingIT {
    @TempDir
    static Path warehouse;

    static MallardServer server;
    static DazzleDuckHttpClient client;
    static ListAppender<ILoggingEvent> audit = new ListAppender<>();

    @BeforeAll
    static void start() throws Exception {
        Logger logger = (Logger) LoggerFactory.getLogger("dev.mallard.server.audit");
        logger.setLevel(Level.INFO);
        audit.start();
        logger.addAppender(audit);
        server = MallardServer.start(TestServers.config(warehouse, AccessMode.COMPLETE, Optional.empty()));
        client = new DazzleDuckHttpClient(server.httpPort());
    }

    @AfterAll
    static void stop() {
        server.close();
        ((Logger) LoggerFactory.getLogger("dev.mallard.server.audit")).detachAppender(audit);
    }

    private static List<String> auditLines(String containing) {
        synchronized (audit.list) {
            return audit.list.stream().map(ILoggingEvent::getFormattedMessage).filter(line -> line.contains(containing)).toList();
        }
    }

    @Test
    void everyHttpStatementHasOneAuditLineWithItsSecretsRedacted() throws Exception {
        HttpResponse<String> response = client.text(client.authorized("/v1/query?id=5150&q=" + java.net.URLEncoder.encode(
                "SELECT 'postgres://ada:hunter2@db/x' AS dsn FROM range(3)", java.nio.charset.StandardCharsets.UTF_8)).header("Accept", JSONL).GET());
        assertThat(response.statusCode()).isEqualTo(200);
        TestServers.awaitUntil(() -> !auditLines("id=5150 ").isEmpty(), "the statement's audit line");
        List<String> lines = auditLines("id=5150 ");
        assertThat(lines).hasSize(1);
        assertThat(lines.get(0)).contains("user=" + TestServers.USER).contains("mode=http").contains("outcome=ok").contains("rows=3")
                .contains("bytes_out=" + response.body().getBytes(java.nio.charset.StandardCharsets.UTF_8).length).contains("duration_ms=")
                .contains("postgres://ada:***@db/x").doesNotContain("hunter2");
        client.text(client.authorized("/v1/query?id=5151&q=select+fr").GET());
        TestServers.awaitUntil(() -> !auditLines("id=5151 ").isEmpty(), "the failed statement's audit line");
        assertThat(auditLines("id=5151 ").get(0)).contains("outcome=error").contains("rows=0");
    }

    @Test
    void aFlightStatementHasItsAuditLineWithRowsAndBytes() throws Exception {
        try (RootAllocator allocator = new RootAllocator();
                FlightClient flight = FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", server.flightPort())).build();
                FlightSqlClient sql = new FlightSqlClient(flight)) {
            CredentialCallOption bearer = flight.authenticateBasicToken(TestServers.USER, TestServers.PASSWORD).orElseThrow();
            org.apache.arrow.flight.FlightCallHeaders headers = new org.apache.arrow.flight.FlightCallHeaders();
            headers.insert("x-dd-query-id", "flight-audit-1");
            FlightInfo info = sql.execute("SELECT range AS n FROM range(1000)", bearer, new org.apache.arrow.flight.HeaderCallOption(headers));
            long rows = 0;
            try (FlightStream stream = sql.getStream(info.getEndpoints().get(0).getTicket(), bearer)) {
                while (stream.next()) {
                    rows += stream.getRoot().getRowCount();
                }
            }
            assertThat(rows).isEqualTo(1000);
        }
        TestServers.awaitUntil(() -> !auditLines("id=flight-audit-1 ").isEmpty(), "the Flight statement's audit line");
        String line = auditLines("id=flight-audit-1 ").get(0);
        assertThat(line).contains("mode=flight").contains("outcome=ok").contains("rows=1000").contains("SELECT range AS n FROM range(1000)");
        assertThat(line).doesNotContain("bytes_out=0 ");
    }

    @Test
    void metricsServesTheServersSeriesBesideTheJvmsAndTheProcesss() throws Exception {
        client.text(client.get("SELECT 1 AS one").header("Accept", JSONL));
        client.text(client.get("select fr"));
        HttpResponse<String> refused = client.text(HttpRequest.newBuilder(client.uri("/v1/login"))
                .POST(HttpRequest.BodyPublishers.ofString("{\"username\":\"" + TestServers.USER + "\",\"password\":\"wrong\"}")));
        assertThat(refused.statusCode()).isEqualTo(401);
        HttpResponse<String> metrics = client.text(HttpRequest.newBuilder(client.uri("/metrics")).GET());
        assertThat(metrics.statusCode()).isEqualTo(200);
        assertThat(metrics.headers().firstValue("Content-Type").orElseThrow()).startsWith("text/plain; version=0.0.4");
        String body = metrics.body();
        assertThat(body).containsPattern("mallard_server_queries_total\\{mode=\"http\",outcome=\"ok\"} [1-9]")
                .containsPattern("mallard_server_queries_total\\{mode=\"http\",outcome=\"error\"} [1-9]")
                .contains("mallard_server_query_seconds_bucket{mode=\"http\",le=\"0.001\"}")
                .containsPattern("mallard_server_sessions [1-9]")
                .containsPattern("mallard_server_http_bytes_in_bytes_total [1-9]")
                .containsPattern("mallard_server_http_bytes_out_bytes_total [1-9]")
                .containsPattern("mallard_server_logins_failed_total\\{mode=\"http\"} [1-9]")
                .contains("jvm_memory_used_bytes").contains("jvm_threads_live_threads").contains("process_cpu_usage").contains("process_uptime_seconds");
    }
}
