// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.datasets;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.core.config.ConfigEnvironment;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** 32 clients over real HTTP against a cache far smaller than what they ask for: every answer right, the bound kept. */
class ServeCacheConcurrencyIT {
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @Test
    void manyClientsGetRightAnswersWhileTheCacheStaysWithinMaxMb(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("serve.yml");
        Files.writeString(file, """
                serve:
                  port: 0
                  cache: {max_mb: 1}
                  datasets:
                    - name: blob
                      params:
                        - {name: key, type: integer, min: 0, max: 1000, required: true}
                      sql: SELECT $key AS key, repeat('x', 100000) AS blob
                      cache: {ttl_seconds: 600}
                """);
        ServeConfig config = new ServeConfigReader(ConfigEnvironment.from(Map.of())).read(file);
        try (DatasetServer server = DatasetServer.start(config, dir)) {
            int clients = 32;
            int keys = 24;
            ExecutorService pool = Executors.newFixedThreadPool(clients);
            try {
                List<Callable<List<String>>> calls = new ArrayList<>();
                for (int c = 0; c < clients; c++) {
                    int client = c;
                    calls.add(() -> {
                        List<String> outcomes = new ArrayList<>();
                        for (int i = 0; i < 12; i++) {
                            int key = (client + i * 7) % keys;
                            HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port()
                                    + "/v1/datasets/blob?key=" + key)).build(), HttpResponse.BodyHandlers.ofString());
                            assertThat(response.statusCode()).isEqualTo(200);
                            assertThat(response.body()).contains("\"key\":" + key + ",").hasSizeGreaterThan(100_000);
                            Matcher cache = Pattern.compile("\"cache\":\"(\\w+)\"").matcher(response.body());
                            assertThat(cache.find()).isTrue();
                            outcomes.add(cache.group(1));
                        }
                        return outcomes;
                    });
                }
                List<String> outcomes = new ArrayList<>();
                for (Future<List<String>> result : pool.invokeAll(calls, 5, TimeUnit.MINUTES)) {
                    outcomes.addAll(result.get());
                }
                assertThat(outcomes).hasSize(clients * 12).allMatch(outcome -> List.of("hit", "miss", "shared").contains(outcome));
                assertThat(outcomes).filteredOn("miss"::equals).as("every key is queried at least once").hasSizeGreaterThanOrEqualTo(keys);
            } finally {
                pool.shutdownNow();
            }
            String metrics = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            assertThat(gauge(metrics, "mallard_serve_cache_bytes")).isLessThanOrEqualTo(1 << 20);
            assertThat(gauge(metrics, "mallard_serve_cache_evictions_total")).isPositive();
        }
    }

    private static double gauge(String metrics, String name) {
        Matcher matcher = Pattern.compile("(?m)^" + name + "(\\{[^}]*})? ([0-9.eE+-]+)$").matcher(metrics);
        assertThat(matcher.find()).as(name + " in " + metrics).isTrue();
        return Double.parseDouble(matcher.group(2));
    }
}
