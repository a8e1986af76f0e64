// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.window;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.core.metrics.MetricsRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** docs/windows.md and the exporter name the same window series; the doc cannot drift. */
class WindowMetricsDocsTest {
    private static final Pattern SERIES_ROW = Pattern.compile("^\\|\\s*`(window_[a-z_]+)`\\s*\\|", Pattern.MULTILINE);
    private static final Pattern EXPORTED = Pattern.compile("^# TYPE (window_[a-z_]+) ", Pattern.MULTILINE);

    @Test
    void theDocumentedSeriesAreExactlyTheExportedOnes() throws Exception {
        Set<String> documented = new TreeSet<>();
        Matcher rows = SERIES_ROW.matcher(Files.readString(Path.of("..", "docs", "windows.md")));
        while (rows.find()) {
            documented.add(rows.group(1));
        }
        Set<String> exported = new TreeSet<>();
        try (MetricsRegistry registry = new MetricsRegistry()) {
            WindowMetrics metrics = new WindowMetrics(registry, "p", "counts");
            metrics.late(1, 1, 0);
            String scrape = registry.scrape();
            Matcher types = EXPORTED.matcher(scrape);
            while (types.find()) {
                exported.add(types.group(1));
            }
            assertThat(scrape).as("closed buckets are counted from start")
                    .contains("window_closed_total{pipeline=\"p\",window=\"counts\"} 0.0")
                    .contains("window_late_rows_total{outcome=\"future\",pipeline=\"p\",window=\"counts\"} 1.0");
        }
        assertThat(documented).hasSizeGreaterThanOrEqualTo(6).isEqualTo(exported);
    }
}
