// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.server.config.AccessMode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 16's deadlock: a {@code dbsp_*} function called inside a statement made a DuckDB worker wait on the views'
 * lock that the request thread held. Each function, in a projection, a WHERE, a subquery and {@code query()}, over
 * HTTP and the Flight SQL JDBC driver, answers or errors within a bounded wait; afterwards another session still
 * writes and reads, {@code /health} answers, and the server stops.
 */
class ViewFunctionsDoNotHangIT {
    /** A bound against hanging, far above any answer's time; not a timing check. */
    private static final Duration BOUND = Duration.ofSeconds(60);

    @TempDir
    Path warehouse;

    static List<String> statements() {
        List<String> scalar = List.of("dbsp_sync()", "dbsp_create_view('w' || 1, 'SELECT 1 AS one')", "dbsp_drop_view('w1')",
                "dbsp_drop_view_cascade('w1')", "dbsp_track('t')", "dbsp_untrack('t')", "dbsp_auto_sync(false)");
        List<String> table = List.of("dbsp_stats()", "dbsp_query('v')", "dbsp_changes('v')", "dbsp_check()");
        List<String> out = new ArrayList<>();
        for (String call : scalar) {
            String quoted = call.replace("'", "''");
            out.add("SELECT " + call + " AS s, 1 AS one");
            out.add("SELECT 1 AS one WHERE " + call + " IS NOT NULL");
            out.add("SELECT (SELECT " + call + ") AS s");
            out.add("SELECT * FROM query('SELECT " + quoted + "')");
            out.add("SELECT " + call + " FROM range(2, 4)");
        }
        for (String call : table) {
            out.add("SELECT count(*) FROM " + call);
            out.add("SELECT * FROM " + call + " WHERE true");
            out.add("SELECT * FROM (SELECT * FROM " + call + ")");
            out.add("SELECT * FROM query('SELECT * FROM " + call.replace("'", "''") + "')");
        }
        out.add("SELECT * FROM dbsp_stats() WHERE metric = 'views'");
        out.add("SELECT dbsp_create_view('v' || range, 'SELECT 1') FROM range(2, 4)");
        return out;
    }

    @Test
    void everyViewFunctionInsideAStatementAnswersOrErrorsAndTheServerStillServesAndStops() throws Exception {
        MallardServer server = MallardServer.start(TestServers.config(warehouse, AccessMode.COMPLETE, Optional.empty()));
        ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor();
        boolean stopped = false;
        try {
            try (Connection connection = TestServers.connect(server); Statement statement = connection.createStatement()) {
                statement.execute("CREATE TABLE t AS SELECT range AS id FROM range(10)");
                statement.execute("CREATE MATERIALIZED VIEW v AS SELECT count(*) AS n FROM t");
            }
            String token = HttpApiITSupport.login(server.httpPort());
            HttpClient http = HttpClient.newBuilder().connectTimeout(BOUND).build();
            try (Connection jdbc = TestServers.connect(server)) {
                for (String text : statements()) {
                    Future<Integer> overHttp = pool.submit(() -> http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort()
                                    + "/v1/query")).timeout(BOUND).header("Authorization", "Bearer " + token).header("Accept", "application/jsonl")
                            .POST(HttpRequest.BodyPublishers.ofString(text)).build(), HttpResponse.BodyHandlers.ofString()).statusCode());
                    assertThat(within(overHttp, "HTTP: " + text)).as(text).isIn(200, 400, 403);
                    Future<Boolean> overJdbc = pool.submit(() -> {
                        try (Statement statement = jdbc.createStatement()) {
                            statement.execute(text);
                            return true;
                        } catch (java.sql.SQLException e) {
                            return false;
                        }
                    });
                    within(overJdbc, "JDBC: " + text);
                }
            }
            // Another session writes and reads; the views still answer; /health is up.
            Future<Long> other = pool.submit(() -> {
                try (Connection connection = TestServers.connect(server); Statement statement = connection.createStatement()) {
                    statement.execute("INSERT INTO t VALUES (100)");
                    try (ResultSet rs = statement.executeQuery("SELECT n FROM v")) {
                        rs.next();
                        return rs.getLong(1);
                    }
                }
            });
            assertThat(within(other, "a write and a view read from another session")).isEqualTo(11);
            Future<Integer> health = pool.submit(() -> HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + server.httpPort() + "/health")).timeout(BOUND).build(), HttpResponse.BodyHandlers.ofString()).statusCode());
            assertThat(within(health, "/health")).isEqualTo(200);
            Future<?> stop = pool.submit(() -> {
                server.close();
                return null;
            });
            within(stop, "the server stopping");
            stopped = true;
        } finally {
            if (!stopped) {
                server.close();
            }
            pool.shutdownNow();
        }
    }

    private static <T> T within(Future<T> future, String what) throws Exception {
        try {
            return future.get(BOUND.toSeconds(), TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            throw new AssertionError("no answer within " + BOUND.toSeconds() + " s (a hang): " + what);
        }
    }
}
