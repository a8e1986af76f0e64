// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Tags;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class MetricsRegistryTest {
    private static final Pattern BUCKET = Pattern.compile("^t_seconds_bucket\\{x=\"y\",le=\"([^\"]+)\"} (\\S+)$", Pattern.MULTILINE);

    @Test
    void aLatencyHistogramHasExactlyTheSharedBoundsInSecondsPlusInfinity() {
        try (MetricsRegistry registry = new MetricsRegistry()) {
            registry.latency("t", "a test latency", Tags.of("x", "y")).record(Duration.ofMillis(3));
            List<String> bounds = new ArrayList<>();
            List<String> counts = new ArrayList<>();
            Matcher buckets = BUCKET.matcher(registry.scrape());
            while (buckets.find()) {
                bounds.add(buckets.group(1));
                counts.add(buckets.group(2));
            }
            // Written out rather than derived from LATENCY_BUCKETS: a test that read the constant would agree
            // with whatever it became.
            assertThat(bounds).map(b -> b.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(b)).containsExactly(
                    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                    1.0, 2.5, 5.0, 10.0, 30.0, 60.0, Double.POSITIVE_INFINITY);
            // 3 ms lands in the 5 ms bucket and every bucket above it, the exposition's buckets being cumulative.
            assertThat(counts).containsExactly("0", "0", "0", "0", "0", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1");
        }
    }

    @Test
    void theSameNameAndTagsGiveTheSameTimer() {
        try (MetricsRegistry registry = new MetricsRegistry()) {
            assertThat(registry.latency("t", "d", Tags.of("x", "y"))).isSameAs(registry.latency("t", "d", Tags.of("x", "y")));
        }
    }

    @Test
    void theScrapeIsTheTextFormatThePrometheusContentTypeNames() {
        try (MetricsRegistry registry = new MetricsRegistry()) {
            registry.meters().counter("things", "x", "y").increment();
            assertThat(MetricsRegistry.CONTENT_TYPE).startsWith("text/plain; version=0.0.4");
            assertThat(registry.scrape()).contains("# TYPE things_total counter\n").contains("things_total{x=\"y\"} 1.0\n");
        }
    }
}
