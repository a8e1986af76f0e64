// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.metrics;

import static java.util.Objects.requireNonNull;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.time.Duration;
import java.util.List;

/**
 * The process's meters and their Prometheus text exposition. One per process; what registers meters
 * (a pipeline's {@code PipelineMetrics}, later the server) tags them so several can share it.
 *
 * <p>Micrometer's Prometheus naming applies: a counter gets {@code _total}, a timer {@code _seconds}, a
 * counter or gauge with a base unit gets {@code _<unit>} unless its name already ends with it. Every timer
 * also exports a {@code <name>_seconds_max} gauge, the largest value in a rotating window of a few minutes.
 */
public final class MetricsRegistry implements AutoCloseable {
    /**
     * Text exposition format 0.0.4, which every Prometheus version scrapes. OpenMetrics is not offered: it
     * would name counter families without {@code _total} and add {@code _created} series.
     */
    public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    /**
     * The upper bounds every latency histogram shares, 100 µs to 60 s. The floor is where an in-memory flush
     * or an empty commit lands; past a minute the question is whether a phase is stuck, not how slow it is,
     * which {@code +Inf} and the error counters answer. The set contains every bound SQLFlow uses, so a
     * query written against SQLFlow's {@code le} values still finds its buckets.
     */
    public static final List<Duration> LATENCY_BUCKETS = List.of(
            Duration.ofNanos(100_000), Duration.ofNanos(250_000), Duration.ofNanos(500_000),
            Duration.ofMillis(1), Duration.ofNanos(2_500_000), Duration.ofMillis(5),
            Duration.ofMillis(10), Duration.ofMillis(25), Duration.ofMillis(50),
            Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500),
            Duration.ofSeconds(1), Duration.ofMillis(2500), Duration.ofSeconds(5),
            Duration.ofSeconds(10), Duration.ofSeconds(30), Duration.ofSeconds(60));

    private final PrometheusMeterRegistry registry;

    public MetricsRegistry() {
        this.registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    }

    /** Where counters and gauges are registered; latencies go through {@link #latency}. */
    public MeterRegistry meters() {
        return registry;
    }

    /**
     * A timer in seconds whose histogram has exactly {@link #LATENCY_BUCKETS} plus {@code +Inf}. The same
     * name and tags return the same timer.
     */
    public Timer latency(String name, String description, Tags tags) {
        requireNonNull(name, "name is null");
        requireNonNull(description, "description is null");
        requireNonNull(tags, "tags is null");
        return Timer.builder(name)
                .description(description)
                .tags(tags)
                .serviceLevelObjectives(LATENCY_BUCKETS.toArray(Duration[]::new))
                .register(registry);
    }

    /** Every meter in {@link #CONTENT_TYPE}. */
    public String scrape() {
        return registry.scrape(CONTENT_TYPE);
    }

    /** Every meter in {@link #CONTENT_TYPE}, written to {@code out}, which stays open. */
    public void scrape(OutputStream out) throws IOException {
        registry.scrape(requireNonNull(out, "out is null"), CONTENT_TYPE);
    }

    @Override
    public void close() {
        registry.close();
    }
}
