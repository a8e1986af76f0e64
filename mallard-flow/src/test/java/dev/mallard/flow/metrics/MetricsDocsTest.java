// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.metrics.MetricsRegistry;
import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** docs/metrics.md and the exporter name the same series, types and labels; the doc cannot drift. */
class MetricsDocsTest {
    private static final Pattern SERIES_ROW = Pattern.compile("^\\|\\s*`([a-z_]+)`\\s*\\|(.*)$", Pattern.MULTILINE);
    private static final Pattern PHASE_ROW = Pattern.compile("^\\|\\s*`([a-z]+\\.[a-z]+)`\\s*\\|", Pattern.MULTILINE);
    private static final Pattern BOUNDS = Pattern.compile("^Bounds \\(seconds\\): `([^`]+)`$", Pattern.MULTILINE);

    /** One call of every public method, so a method added without a line here fails the test below. */
    private static Map<String, Consumer<PipelineMetrics>> everyMethodOnce(boolean stateful) {
        Map<String, Consumer<PipelineMetrics>> calls = new LinkedHashMap<>();
        calls.put("messagesRead", m -> m.messagesRead(3, 300, 1_000_000));
        calls.put("handlerRowsRead", m -> m.handlerRowsRead(3));
        calls.put("phase", m -> m.phase(Phase.HANDLER_INVOKE, 1_000_000));
        calls.put("sinkWritten", m -> m.sinkWritten(3, 3));
        calls.put("sinkFlushed", m -> m.sinkFlushed(3, 1_000_000));
        calls.put("sinkRetry", PipelineMetrics::sinkRetry);
        calls.put("windowSinkRetry", m -> m.windowSinkRetry("console"));
        calls.put("otherSinkRows", m -> {
            m.otherSinkRows("manager", "console", 3, 3);
            m.otherSinkRows("dlq", "kafka", 1, 1);
        });
        calls.put("batchProcessed", m -> m.batchProcessed(3_000_000));
        calls.put("error", m -> {
            m.error(ErrorCode.USER_HANDLER_SQL_FAILED, Phase.HANDLER_INVOKE);
            m.error(ErrorCode.SYSTEM_SINK_UNREACHABLE, Phase.SINK_FLUSH);
            if (stateful) {
                m.error(ErrorCode.SYSTEM_ENGINE_FAILED, Phase.STATE_COMMIT);
            }
        });
        calls.put("consumerLag", m -> {
            m.consumerLag("events", 0, 5);
            m.consumerLag("events", 1, 5);
        });
        calls.put("partitionRevoked", m -> m.partitionRevoked("events", 1));
        if (stateful) {
            calls.put("stateCommitted", m -> m.stateCommitted(1_000_000));
            calls.put("stateDbSize", m -> m.stateDbSize(4096));
            calls.put("stateTableRows", m -> m.stateTableRows("agg", 24));
        }
        return calls;
    }

    private record Shape(String type, Set<String> labels) {}

    private static String doc() throws IOException {
        return Files.readString(Path.of("..", "docs", "metrics.md"));
    }

    /**
     * series → (type, labels) from the rows of the series table (series | type | labels | unit | SQLFlow |
     * pipelines | meaning) whose pipelines column is one of {@code pipelines}.
     */
    private static Map<String, Shape> documented(Set<String> pipelines) throws IOException {
        Map<String, Shape> rows = new TreeMap<>();
        Matcher row = SERIES_ROW.matcher(doc());
        while (row.find()) {
            String[] cells = row.group(2).split("\\|");
            if (cells.length < 6) {
                continue;
            }
            Set<String> labels = Arrays.stream(cells[1].split(","))
                    .map(label -> label.strip().replace("`", ""))
                    .filter(label -> !label.isEmpty())
                    .collect(Collectors.toCollection(TreeSet::new));
            String column = cells[4].strip();
            assertThat(column).as("pipelines of %s", row.group(1)).isIn("all", "stateful");
            if (pipelines.contains(column)) {
                rows.put(row.group(1), new Shape(cells[0].strip(), labels));
            }
        }
        return rows;
    }

    private static Map<String, Shape> exposedAfterEveryCall(boolean stateful) {
        try (MetricsRegistry registry = new MetricsRegistry(); PipelineMetrics metrics = new PipelineMetrics(registry, "p", "kafka", stateful)) {
            everyMethodOnce(stateful).values().forEach(call -> call.accept(metrics));
            Exposition exposed = new Exposition(registry.scrape());
            Map<String, Shape> series = new TreeMap<>();
            exposed.types().forEach((name, type) -> series.put(name, new Shape(type, exposed.labels().get(name))));
            return series;
        }
    }

    @Test
    void theTestCallsEveryPublicMethodOfPipelineMetrics() {
        Set<String> methods = Arrays.stream(PipelineMetrics.class.getDeclaredMethods())
                .filter(method -> Modifier.isPublic(method.getModifiers()) && !Modifier.isStatic(method.getModifiers()))
                .map(Method::getName)
                .filter(name -> !name.equals("close"))
                .collect(Collectors.toCollection(TreeSet::new));
        assertThat(everyMethodOnce(true).keySet()).containsExactlyInAnyOrderElementsOf(methods);
    }

    @Test
    void theDocumentedSeriesOfAPipelineWithoutAStatePathAreExactlyTheExposedOnes() throws IOException {
        assertThat(exposedAfterEveryCall(false)).isEqualTo(documented(Set.of("all")));
    }

    @Test
    void theDocumentedSeriesOfAPipelineWithAStatePathAreExactlyTheExposedOnes() throws IOException {
        assertThat(exposedAfterEveryCall(true)).isEqualTo(documented(Set.of("all", "stateful")));
    }

    @Test
    void theDocumentedPhasesAreThePhaseLabels() throws IOException {
        Set<String> documented = new TreeSet<>();
        Matcher row = PHASE_ROW.matcher(doc());
        while (row.find()) {
            documented.add(row.group(1));
        }
        assertThat(documented).isEqualTo(Arrays.stream(Phase.values()).map(Phase::label).collect(Collectors.toCollection(TreeSet::new)));
    }

    @Test
    void theDocumentedBucketBoundsAreTheSharedLayout() throws IOException {
        Matcher bounds = BOUNDS.matcher(doc());
        assertThat(bounds.find()).as("a line 'Bounds (seconds): `...`' in docs/metrics.md").isTrue();
        List<BigDecimal> documented = Arrays.stream(bounds.group(1).split(",")).map(String::strip).map(BigDecimal::new).toList();
        List<BigDecimal> shared = MetricsRegistry.LATENCY_BUCKETS.stream()
                .map(bound -> BigDecimal.valueOf(bound.toNanos()).movePointLeft(9))
                .toList();
        assertThat(documented).usingElementComparator(BigDecimal::compareTo).containsExactlyElementsOf(shared);
    }
}
