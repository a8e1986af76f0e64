// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.ops;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.mallard.core.metrics.MetricsRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The operator files in {@code docs/ops}: promtool accepts the alert rules and their unit tests pass, and every
 * series the rules and the Grafana dashboard read is one Mallard exports (the server's from a real
 * {@link ServerMetrics} scrape; a pipeline's from docs/metrics.md and docs/windows.md, which MetricsDocsTest and
 * the windows' tests check against the pipeline's real exporter).
 */
class OperatorRulesTest {
    private static final Path OPS = Path.of("..", "docs", "ops");
    private static final Pattern IDENTIFIER = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
    private static final Set<String> PROMQL = Set.of("sum", "max", "min", "avg", "by", "without", "rate", "delta", "increase", "and", "or",
            "unless", "time", "histogram_quantile", "label_values", "up");

    @Test
    void promtoolAcceptsTheAlertRulesAndTheirUnitTestsPass() throws Exception {
        Path promtool = Path.of(System.getenv().getOrDefault("PROMTOOL", "/usr/bin/promtool"));
        if (!Files.isExecutable(promtool)) {
            String message = "promtool is not installed at " + promtool + " (apt-get install prometheus; .ci/run installs it)";
            if (System.getenv("CI") != null) {
                throw new AssertionError(message);
            }
            Assumptions.abort(message);
        }
        assertThat(run(promtool.toString(), "check", "rules", "mallard-alerts.yml")).contains("SUCCESS");
        assertThat(run(promtool.toString(), "test", "rules", "mallard-alerts.test.yml")).contains("SUCCESS");
    }

    @Test
    void everySeriesTheRulesAndTheDashboardReadIsOneMallardExports() throws IOException {
        Set<String> exported = new TreeSet<>(serverSeries());
        exported.addAll(documentedPipelineSeries());
        List<String> expressions = new ArrayList<>();
        JsonNode rules = new ObjectMapper(new YAMLFactory()).readTree(OPS.resolve("mallard-alerts.yml").toFile());
        rules.path("groups").forEach(group -> group.path("rules").forEach(rule -> expressions.add(rule.path("expr").asText())));
        JsonNode dashboard = new ObjectMapper().readTree(OPS.resolve("grafana-dashboard.json").toFile());
        dashboard.path("panels").forEach(panel -> panel.path("targets").forEach(target -> expressions.add(target.path("expr").asText())));
        dashboard.path("templating").path("list").forEach(variable -> {
            if (variable.has("definition")) {
                expressions.add(variable.path("definition").asText());
            }
        });
        assertThat(expressions).hasSizeGreaterThan(20);
        Set<String> read = new TreeSet<>();
        for (String expression : expressions) {
            read.addAll(seriesIn(expression));
        }
        assertThat(read).contains("consumer_lag_messages", "error_count_total", "window_close_lag_seconds", "sink_rows_written_total",
                "mallard_server_query_seconds_bucket", "mallard_server_queries_total", "mallard_server_sessions", "mallard_server_logins_failed_total");
        for (String series : read) {
            assertThat(exported).as("series %s, read by docs/ops, is exported", series).contains(series);
        }
    }

    /** The metric names in a PromQL expression: identifiers that are not functions, keywords, label names or label values. */
    static Set<String> seriesIn(String expression) {
        String text = expression.replaceAll("\"[^\"]*\"", "\"\"").replaceAll("\\[[^\\]]*\\]", "[]").replace("$__rate_interval", "")
                .replaceAll("(by|without) \\([^)]*\\)", "")
                .replaceAll("\\{[^}]*\\}", "{}");
        Set<String> names = new TreeSet<>();
        Matcher matcher = IDENTIFIER.matcher(text);
        while (matcher.find()) {
            String name = matcher.group();
            if (!PROMQL.contains(name) && name.contains("_")) {
                names.add(name);
            }
        }
        return names;
    }

    /** The series a server's /metrics shows once it has run statements and refused a login. */
    private static Set<String> serverSeries() throws IOException {
        try (ServerMetrics metrics = new ServerMetrics(new MetricsRegistry(), () -> 1)) {
            metrics.statement("http", "ok", Duration.ofMillis(3));
            metrics.statement("http", "error", Duration.ofMillis(3));
            metrics.loginFailed("http");
            metrics.bytesIn(1);
            metrics.bytesOut(1);
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            metrics.scrape(out);
            Set<String> names = new TreeSet<>();
            for (String line : out.toString(StandardCharsets.UTF_8).split("\n")) {
                if (!line.startsWith("#") && !line.isBlank()) {
                    names.add(line.split("[{ ]", 2)[0]);
                }
            }
            return names;
        }
    }

    /** Series named in the first column of docs/metrics.md's and docs/windows.md's tables, with a histogram's bucket series. */
    private static Set<String> documentedPipelineSeries() throws IOException {
        Set<String> names = new TreeSet<>();
        Pattern row = Pattern.compile("^\\| `([a-z_]+)` \\| (counter|gauge|histogram)", Pattern.MULTILINE);
        for (String doc : List.of("metrics.md", "windows.md")) {
            Matcher matcher = row.matcher(Files.readString(Path.of("..", "docs", doc)));
            while (matcher.find()) {
                names.add(matcher.group(1));
                if (matcher.group(2).equals("histogram")) {
                    names.add(matcher.group(1) + "_bucket");
                    names.add(matcher.group(1) + "_count");
                    names.add(matcher.group(1) + "_sum");
                }
            }
        }
        assertThat(names).contains("consumer_lag_messages", "window_close_lag_seconds");
        return names;
    }

    private static String run(String... command) throws Exception {
        Process process = new ProcessBuilder(command).directory(OPS.toFile()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(2, TimeUnit.MINUTES)).as("%s ended", String.join(" ", command)).isTrue();
        assertThat(process.exitValue()).as("%s:%n%s", String.join(" ", command), output).isZero();
        return output;
    }
}
