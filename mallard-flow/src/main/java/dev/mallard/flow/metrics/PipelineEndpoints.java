// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.metrics;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import dev.mallard.core.error.Redactor;
import dev.mallard.core.http.HttpEndpoints;
import dev.mallard.core.metrics.MetricsRegistry;
import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP face of a running pipeline, on one port:
 *
 * <ul>
 *   <li>{@code GET /metrics}: every meter of the registry, Prometheus text format 0.0.4;
 *   <li>{@code GET /healthz}: 200 {@code {"status":"ok"}} while the pipeline runs, 503
 *       {@code {"status":"stopping"}} once it drains, so a load balancer or orchestrator stops routing to it;
 *   <li>{@code GET /stats}: the runner's JSON about the state database, only for a pipeline with a state
 *       path (404 otherwise, as for any other path); 500 when the runner fails to produce it.
 * </ul>
 *
 * Close it after the pipeline has drained, so {@code /healthz} answers 503 for the whole drain.
 */
public final class PipelineEndpoints implements AutoCloseable {
    /** SQLFlow's metrics port, so existing scrape configurations keep working. */
    public static final int DEFAULT_PORT = 8000;
    public static final String DEFAULT_HOST = "0.0.0.0";

    private final HttpEndpoints http;

    private PipelineEndpoints(HttpEndpoints http) {
        this.http = requireNonNull(http, "http is null");
    }

    /**
     * Starts serving before it returns.
     *
     * @param port 0 picks a free port (tests); {@link #port()} tells which
     * @param running true while the pipeline runs, false from the moment it starts to drain
     * @param stats the JSON body of {@code /stats}, present only when the pipeline has a state path; called
     *     on a request thread, once per request
     * @throws dev.mallard.core.error.MallardException {@code system.http.bind_failed} when the port is taken
     */
    public static PipelineEndpoints start(String host, int port, MetricsRegistry metrics, BooleanSupplier running,
            Optional<Supplier<String>> stats) {
        return start(host, port, metrics, () -> running.getAsBoolean() ? Optional.empty() : Optional.of("stopping"), stats);
    }

    /**
     * {@link #start(String, int, MetricsRegistry, BooleanSupplier, Optional)} with the reason the pipeline is not
     * healthy ({@code stopping}, {@code source_unreachable}), empty while it is: 503 with that status, else 200.
     */
    public static PipelineEndpoints start(String host, int port, MetricsRegistry metrics, Supplier<Optional<String>> unhealthy,
            Optional<Supplier<String>> stats) {
        Routes routes = new Routes(metrics, unhealthy, stats);
        return new PipelineEndpoints(HttpEndpoints.start(host, port, routes::declare));
    }

    public int port() {
        return http.port();
    }

    @Override
    public void close() {
        http.close();
    }

    private static final class Routes {
        private static final Logger LOG = LoggerFactory.getLogger(PipelineEndpoints.class);
        private static final String JSON = "application/json";

        private final MetricsRegistry metrics;
        private final Supplier<Optional<String>> unhealthy;
        private final Optional<Supplier<String>> stats;

        Routes(MetricsRegistry metrics, Supplier<Optional<String>> unhealthy, Optional<Supplier<String>> stats) {
            this.metrics = requireNonNull(metrics, "metrics is null");
            this.unhealthy = requireNonNull(unhealthy, "unhealthy is null");
            this.stats = requireNonNull(stats, "stats is null");
        }

        void declare(HttpRouting.Builder routing) {
            routing.get("/metrics", this::metrics)
                    .get("/healthz", this::healthz);
            if (stats.isPresent()) {
                routing.get("/stats", this::stats);
            }
        }

        private void metrics(ServerRequest request, ServerResponse response) throws IOException {
            // Buffered rather than streamed: a scrape that fails half way must answer 500, not a truncated 200.
            ByteArrayOutputStream body = new ByteArrayOutputStream(16 * 1024);
            metrics.scrape(body);
            response.header(HeaderNames.CONTENT_TYPE, MetricsRegistry.CONTENT_TYPE);
            response.send(body.toByteArray());
        }

        private void healthz(ServerRequest request, ServerResponse response) {
            response.header(HeaderNames.CONTENT_TYPE, JSON);
            Optional<String> problem = unhealthy.get();
            if (problem.isEmpty()) {
                response.send("{\"status\":\"ok\"}");
            } else {
                response.status(Status.SERVICE_UNAVAILABLE_503).send("{\"status\":\"" + problem.get() + "\"}");
            }
        }

        private void stats(ServerRequest request, ServerResponse response) {
            response.header(HeaderNames.CONTENT_TYPE, JSON);
            String body;
            try {
                body = requireNonNull(stats.orElseThrow().get(), "the stats supplier returned null");
            } catch (RuntimeException e) {
                // A monitor must see the failure, not an empty success that looks healthy.
                String message = Redactor.redact(String.valueOf(e.getMessage()));
                // The throwable stays out of the log: its message is not redacted.
                LOG.warn("GET /stats failed: {}: {}", e.getClass().getSimpleName(), message);
                response.status(Status.INTERNAL_SERVER_ERROR_500)
                        .send("{\"error\":\"" + new String(JsonStringEncoder.getInstance().quoteAsString(message)) + "\"}");
                return;
            }
            response.send(body);
        }
    }
}
