// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.datasets;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mallard.core.config.ConfigEnvironment;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code serve.query_timeout_seconds}: a dataset's statement that runs past it is interrupted and answered
 * {@code 504 query_timeout}; the failure is not cached, and the server goes on answering other datasets.
 */
class DatasetTimeoutIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @TempDir
    static Path dir;

    private static DatasetServer server;

    @BeforeAll
    static void start() throws Exception {
        Path file = dir.resolve("serve.yml");
        // The slow statement hashes a million rows paired with a million (10^12 pairs; no statistic can prune a hash):
        // it never ends within the second it is given.
        Files.writeString(file, """
                commands:
                  - name: numbers
                    sql: CREATE TABLE numbers AS SELECT range AS i FROM range(1000000);
                serve:
                  host: 127.0.0.1
                  port: 0
                  query_timeout_seconds: 1
                  datasets:
                    - name: endless
                      sql: SELECT count(*) AS pairs FROM numbers a, numbers b WHERE hash(a.i + b.i) = 42
                      cache: {ttl_seconds: 300}
                    - name: quick
                      sql: SELECT count(*) AS numbers FROM numbers
                """);
        server = DatasetServer.start(new ServeConfigReader(ConfigEnvironment.from(Map.of())).read(file), dir);
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static HttpResponse<String> get(String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aStatementPastTheTimeoutIsInterruptedAndAnsweredWithACodedErrorWhileTheServerStaysHealthy() throws Exception {
        for (int attempt = 0; attempt < 2; attempt++) {
            HttpResponse<String> slow = get("/v1/datasets/endless");
            assertThat(slow.statusCode()).as(slow.body()).isEqualTo(504);
            JsonNode error = JSON.readTree(slow.body()).path("error");
            assertThat(error.path("code").asText()).isEqualTo("query_timeout");
            assertThat(error.path("mallard_code").asText()).isEqualTo("user.dataset.timeout");
            assertThat(error.path("message").asText()).contains("endless").contains("query_timeout_seconds");
        }
        HttpResponse<String> quick = get("/v1/datasets/quick");
        assertThat(quick.statusCode()).as(quick.body()).isEqualTo(200);
        assertThat(JSON.readTree(quick.body()).path("rows").get(0).path("numbers").asLong()).isEqualTo(1_000_000);
        assertThat(get("/health").statusCode()).isEqualTo(200);
        String metrics = get("/metrics").body();
        assertThat(metrics).as("a timed-out statement is counted, and both attempts ran it: a failure is never cached")
                .containsPattern("mallard_serve_query_timeouts_total\\{dataset=\"endless\"} 2(\\.0)?\n")
                .containsPattern("mallard_serve_requests_total\\{dataset=\"endless\",status=\"504\"} 2(\\.0)?\n");
    }
}
