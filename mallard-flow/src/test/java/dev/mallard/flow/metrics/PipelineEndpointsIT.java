// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.core.metrics.MetricsRegistry;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The real server on a free port, fetched over HTTP as Prometheus and an orchestrator would. */
class PipelineEndpointsIT {
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final MetricsRegistry registry = new MetricsRegistry();
    private final AtomicBoolean running = new AtomicBoolean(true);

    @AfterEach
    void closeRegistry() {
        registry.close();
    }

    @AfterAll
    static void closeClient() {
        CLIENT.close();
    }

    private PipelineEndpoints start(Optional<Supplier<String>> stats) {
        return PipelineEndpoints.start("127.0.0.1", 0, registry, running::get, stats);
    }

    private static HttpResponse<String> get(PipelineEndpoints endpoints, String path) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + endpoints.port() + path))
                .timeout(Duration.ofSeconds(5))
                .build();
        return CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void metricsServesTheRegistryInPrometheusTextFormat() throws Exception {
        try (PipelineMetrics metrics = new PipelineMetrics(registry, "orders", "kafka", false);
                PipelineEndpoints endpoints = start(Optional.empty())) {
            metrics.messagesRead(4, 100, 1_000);
            HttpResponse<String> response = get(endpoints, "/metrics");
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(
                    type -> assertThat(type).startsWith("text/plain; version=0.0.4"));
            assertThat(response.body())
                    .contains("# TYPE message_count_messages_total counter\n")
                    .contains("message_count_messages_total{pipeline=\"orders\"} 4.0\n");
        }
    }

    @Test
    void healthzIsOkWhileThePipelineRunsAndUnavailableOnceItDrains() throws Exception {
        try (PipelineEndpoints endpoints = start(Optional.empty())) {
            HttpResponse<String> up = get(endpoints, "/healthz");
            assertThat(up.statusCode()).isEqualTo(200);
            assertThat(up.body()).isEqualTo("{\"status\":\"ok\"}");
            assertThat(up.headers().firstValue("Content-Type")).hasValue("application/json");

            running.set(false);
            HttpResponse<String> draining = get(endpoints, "/healthz");
            assertThat(draining.statusCode()).isEqualTo(503);
            assertThat(draining.body()).isEqualTo("{\"status\":\"stopping\"}");
        }
    }

    @Test
    void statsServesTheJsonItsSupplierGives() throws Exception {
        String json = "{\"state\":{\"path\":\"/state/orders.db\",\"size_bytes\":4096}}";
        try (PipelineEndpoints endpoints = start(Optional.of(() -> json))) {
            HttpResponse<String> response = get(endpoints, "/stats");
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.body()).isEqualTo(json);
            assertThat(response.headers().firstValue("Content-Type")).hasValue("application/json");
        }
    }

    @Test
    void statsIsNotFoundWhenTheEndpointsAreGivenNoStatistics() throws Exception {
        try (PipelineEndpoints endpoints = start(Optional.empty())) {
            assertThat(get(endpoints, "/stats").statusCode()).isEqualTo(404);
        }
    }

    @Test
    void statsThatCannotBeReadAnswerAServerErrorRatherThanAnEmptySuccess() throws Exception {
        Supplier<String> failing = () -> {
            throw new IllegalStateException("state database \"locked\"");
        };
        try (PipelineEndpoints endpoints = start(Optional.of(failing))) {
            HttpResponse<String> response = get(endpoints, "/stats");
            assertThat(response.statusCode()).isEqualTo(500);
            assertThat(response.body()).isEqualTo("{\"error\":\"state database \\\"locked\\\"\"}");
        }
    }

    @Test
    void anUnknownPathIsNotFound() throws Exception {
        try (PipelineEndpoints endpoints = start(Optional.empty())) {
            assertThat(get(endpoints, "/").statusCode()).isEqualTo(404);
        }
    }
}
