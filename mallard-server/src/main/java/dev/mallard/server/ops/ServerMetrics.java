// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.ops;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.metrics.MetricsRegistry;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import java.io.IOException;
import java.io.OutputStream;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * The server's Prometheus series on {@code /metrics}: statements by outcome and listener, their latency, open
 * sessions, HTTP bytes in and out, failed logins; beside the JVM's (memory, GC, threads, classes) and the process's
 * (CPU, uptime, file descriptors).
 */
public final class ServerMetrics implements AutoCloseable {
    private final MetricsRegistry registry;
    private final JvmGcMetrics gc = new JvmGcMetrics();
    private final Counter bytesIn;
    private final Counter bytesOut;
    private final java.util.concurrent.ConcurrentMap<String, Counter> queries = new java.util.concurrent.ConcurrentHashMap<>();
    private final java.util.concurrent.ConcurrentMap<String, io.micrometer.core.instrument.Timer> latencies = new java.util.concurrent.ConcurrentHashMap<>();

    /** @param openSessions the number of open sessions now */
    public ServerMetrics(MetricsRegistry registry, Supplier<Number> openSessions) {
        this.registry = requireNonNull(registry, "registry is null");
        requireNonNull(openSessions, "openSessions is null");
        MeterRegistry meters = registry.meters();
        new JvmMemoryMetrics().bindTo(meters);
        gc.bindTo(meters);
        new JvmThreadMetrics().bindTo(meters);
        new ClassLoaderMetrics().bindTo(meters);
        new ProcessorMetrics().bindTo(meters);
        new UptimeMetrics().bindTo(meters);
        new FileDescriptorMetrics().bindTo(meters);
        Gauge.builder("mallard_server_sessions", openSessions).description("Open client sessions, each a DuckDB connection").register(meters);
        bytesIn = Counter.builder("mallard_server_http_bytes_in").baseUnit("bytes").description("HTTP request body bytes read").register(meters);
        bytesOut = Counter.builder("mallard_server_http_bytes_out").baseUnit("bytes").description("HTTP result bytes written").register(meters);
    }

    /** One statement ended: counted by listener ({@code http}, {@code flight}) and outcome, its latency timed. */
    void statement(String listener, String outcome, Duration took) {
        // Looked up once per listener and outcome: a one-row query should not pay Micrometer's registration lookup.
        queries.computeIfAbsent(listener + '\n' + outcome, key -> Counter.builder("mallard_server_queries")
                .description("Statements run, by listener and outcome").tags(Tags.of("mode", listener, "outcome", outcome))
                .register(registry.meters())).increment();
        latencies.computeIfAbsent(listener, key -> registry.latency("mallard_server_query", "Statement latency from its request to its last byte",
                Tags.of("mode", listener))).record(took);
    }

    public void bytesIn(long bytes) {
        bytesIn.increment(bytes);
    }

    public void bytesOut(long bytes) {
        bytesOut.increment(bytes);
    }

    /** A login refused (wrong password, unknown user, malformed credentials) on {@code listener}, the {@code mode} label as on {@code mallard_server_queries_total}: {@code http} or {@code flight}. */
    public void loginFailed(String listener) {
        Counter.builder("mallard_server_logins_failed").description("Logins refused").tags(Tags.of("mode", listener)).register(registry.meters())
                .increment();
    }

    private final java.util.List<Object> functionCounterSources = new java.util.concurrent.CopyOnWriteArrayList<>();

    /** The HTTP listener's connections refused past {@code http.max_connections}, and those closed past {@code http.header_timeout_seconds}. */
    public void httpConnections(java.util.function.LongSupplier refused, java.util.function.LongSupplier headerTimeouts) {
        // Micrometer holds a function counter's object weakly; the suppliers live as long as these metrics.
        functionCounterSources.add(refused);
        functionCounterSources.add(headerTimeouts);
        io.micrometer.core.instrument.FunctionCounter.builder("mallard_server_http_connections_refused", refused, r -> r.getAsLong())
                .description("HTTP connections refused with 503 past http.max_connections").register(registry.meters());
        io.micrometer.core.instrument.FunctionCounter.builder("mallard_server_http_header_timeouts", headerTimeouts, t -> t.getAsLong())
                .description("HTTP connections closed because their request headers did not arrive within http.header_timeout_seconds")
                .register(registry.meters());
    }

    /** The registry other parts of the server add their series to (ingestion's per queue). */
    public io.micrometer.core.instrument.MeterRegistry meters() {
        return registry.meters();
    }

    public String contentType() {
        return MetricsRegistry.CONTENT_TYPE;
    }

    public void scrape(OutputStream out) throws IOException {
        registry.scrape(out);
    }

    @Override
    public void close() {
        gc.close();
        registry.close();
    }
}
