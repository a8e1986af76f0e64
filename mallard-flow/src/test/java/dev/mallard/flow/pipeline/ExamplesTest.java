// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.flow.config.PipelineConfigReader;
import dev.mallard.flow.validate.ValidationReport;
import dev.mallard.flow.validate.PipelineValidator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/** Every config in examples/ validates and, run with `dev invoke` on its fixture, prints exactly its expected rows. */
class ExamplesTest {
    private static final Path EXAMPLES = Path.of("..", "examples");

    private record Expectation(String fixture, List<String> rows) {}

    private static final Map<String, Expectation> EXPECTED = Map.of(
            "city-counts.yml", new Expectation("city-events.jsonl", List.of(
                    "{\"city\":\"New York\",\"city_count\":1}",
                    "{\"city\":\"Baltimore\",\"city_count\":1}")),
            "city-counts-structured.yml", new Expectation("city-events.jsonl", List.of(
                    "{\"city\":\"New York\",\"city_count\":1}",
                    "{\"city\":\"Baltimore\",\"city_count\":1}")),
            "city-counts-disk.yml", new Expectation("city-events.jsonl", List.of(
                    "{\"city\":\"New York\",\"city_count\":1}",
                    "{\"city\":\"Baltimore\",\"city_count\":1}")),
            "enrich.yml", new Expectation("city-events.jsonl", List.of(
                    "{\"event\":\"search\",\"properties\":{\"city\":\"New York\"},\"user\":{\"id\":\"u-1001\"},\"location\":{\"home\":\"New York\"},\"stage\":\"enriched\"}",
                    "{\"event\":\"search\",\"properties\":{\"city\":\"Baltimore\"},\"user\":{\"id\":\"u-1002\"},\"location\":{\"home\":\"Baltimore\"},\"stage\":\"enriched\"}")),
            "csv-join.yml", new Expectation("timed-events.jsonl", List.of(
                    "{\"city\":\"Baltimore\",\"state_full\":\"Maryland\",\"events\":2}",
                    "{\"city\":\"New York\",\"state_full\":\"New York\",\"events\":2}")),
            "parquet-sink.yml", new Expectation("timed-events.jsonl", List.of("{\"num_records\":4}")),
            "city-windows.yml", new Expectation("timed-events.jsonl", List.of(
                    "{\"bucket\":\"2015-12-12T19:00:00Z\",\"city\":\"New York\",\"n\":2}",
                    "{\"bucket\":\"2015-12-12T19:00:00Z\",\"city\":\"Baltimore\",\"n\":2}")),
            "event-time.yml", new Expectation("timed-events.jsonl", List.of(
                    "{\"city\":\"Baltimore\",\"hour\":\"2015-12-12T19:00:00Z\",\"events\":2,\"last_offset\":3}",
                    "{\"city\":\"New York\",\"hour\":\"2015-12-12T19:00:00Z\",\"events\":2,\"last_offset\":1}")),
            "kafka-sasl-tls.yml", new Expectation("city-events.jsonl", List.of(
                    "{\"event\":\"search\",\"properties\":{\"city\":\"New York\"},\"user\":{\"id\":\"u-1001\"}}",
                    "{\"event\":\"search\",\"properties\":{\"city\":\"Baltimore\"},\"user\":{\"id\":\"u-1002\"}}")),
            "stateful-counts.yml", new Expectation("city-events.jsonl", List.of(
                    "{\"city\":\"Baltimore\",\"total\":1}",
                    "{\"city\":\"New York\",\"total\":1}")));

    /** Examples of the webhook, WebSocket, Postgres and Iceberg connectors (Map.of holds at most ten entries). */
    private static final Map<String, Expectation> CONNECTOR_EXAMPLES = Map.of(
            "websocket-bluesky.yml", new Expectation("jetstream-events.jsonl", List.of(
                    "{\"collection\":\"app.bsky.feed.post\",\"created\":2}",
                    "{\"collection\":\"app.bsky.feed.like\",\"created\":1}")),
            "webhook-github.yml", new Expectation("github-events.jsonl", List.of(
                    "{\"action\":\"opened\",\"number\":7,\"repo\":\"octo-org/hello-world\",\"sender\":\"octocat\"}",
                    "{\"action\":\"labeled\",\"number\":7,\"repo\":\"octo-org/hello-world\",\"sender\":\"hubot\"}",
                    "{\"action\":\"closed\",\"number\":7,\"repo\":\"octo-org/hello-world\",\"sender\":\"octocat\"}")),
            "postgres-upsert.yml", new Expectation("city-events.jsonl", List.of(
                    "{\"city\":\"Baltimore\",\"total\":1}",
                    "{\"city\":\"New York\",\"total\":1}")),
            "kafka-iceberg.yml", new Expectation("timed-events.jsonl", List.of(
                    "{\"timestamp\":\"2015-12-12T19:11:01.249\",\"city\":\"New York\"}",
                    "{\"timestamp\":\"2015-12-12T19:11:01.249\",\"city\":\"New York\"}",
                    "{\"timestamp\":\"2015-12-12T19:11:01.249\",\"city\":\"Baltimore\"}",
                    "{\"timestamp\":\"2015-12-12T19:11:01.249\",\"city\":\"Baltimore\"}")));

    private static Expectation expected(String example) {
        return CONNECTOR_EXAMPLES.containsKey(example) ? CONNECTOR_EXAMPLES.get(example) : EXPECTED.get(example);
    }

    @TempDir
    Path temp;

    private ConfigEnvironment environment() {
        return ConfigEnvironment.from(Map.of(
                "MALLARD_EXAMPLES", EXAMPLES.toString(),
                "MALLARD_SQL_RESULTS_CACHE_DIR", temp.resolve("cache").toString(),
                "MALLARD_OUTPUT_DIR", temp.resolve("out").toString(),
                "MALLARD_STATE_DIR", temp.toString()));
    }

    private static List<Path> examples() throws IOException {
        try (Stream<Path> files = Files.list(EXAMPLES)) {
            return files.filter(p -> p.toString().endsWith(".yml")).sorted().toList();
        }
    }

    @TestFactory
    Stream<DynamicTest> everyExampleHasAnExpectation() throws IOException {
        return examples().stream().map(example -> DynamicTest.dynamicTest(example.getFileName().toString(),
                () -> assertThat(expected(example.getFileName().toString())).isNotNull()));
    }

    @TestFactory
    Stream<DynamicTest> everyExampleValidates() throws IOException {
        return examples().stream().map(example -> DynamicTest.dynamicTest(example.getFileName().toString(), () -> {
            ValidationReport report = new PipelineValidator(environment()).validate(example);
            assertThat(report.errors()).as(report.toText()).isEmpty();
        }));
    }

    @TestFactory
    Stream<DynamicTest> everyExamplePrintsItsExpectedRowsUnderDevInvoke() throws IOException {
        return examples().stream().map(example -> DynamicTest.dynamicTest(example.getFileName().toString(), () -> {
            Expectation expected = expected(example.getFileName().toString());
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            DevInvoke.run(new PipelineConfigReader(environment()).read(example).orThrow(),
                    EXAMPLES.resolve("fixtures").resolve(expected.fixture()), environment(), out);
            assertThat(out.toString(StandardCharsets.UTF_8).lines().toList()).containsExactlyElementsOf(expected.rows());
        }));
    }
}
