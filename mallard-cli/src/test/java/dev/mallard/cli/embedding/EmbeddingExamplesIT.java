// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli.embedding;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.testkit.EmbeddedKafka;
import dev.mallard.testkit.Progress;
import dev.mallard.testkit.Publisher;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** README.md's embedding examples: they run, and README quotes them as they are in {@link EmbeddingExamples}. */
class EmbeddingExamplesIT {
    private static final Path ROOT = Path.of("..");
    private static final Path SOURCE = Path.of("src/test/java/dev/mallard/cli/embedding/EmbeddingExamples.java");

    @TempDir
    Path dir;

    /** The lines between {@code // README:<name>} and {@code // README:end}, less their common indentation. */
    static String snippet(String name) throws IOException {
        Matcher match = Pattern.compile("(?s)// README:" + name + "\n(.*?)\n\\s*// README:end").matcher(Files.readString(SOURCE));
        assertThat(match.find()).as("README:" + name + " in " + SOURCE).isTrue();
        String[] lines = match.group(1).split("\n");
        int indent = Arrays.stream(lines).filter(line -> !line.isBlank())
                .mapToInt(line -> line.length() - line.stripLeading().length()).min().orElse(0);
        return String.join("\n", Arrays.stream(lines).map(line -> line.isBlank() ? "" : line.substring(indent)).toList());
    }

    @ParameterizedTest
    @ValueSource(strings = {"pipeline", "server", "views"})
    void theReadmeQuotesEachExampleAsItIsTested(String name) throws IOException {
        assertThat(Files.readString(ROOT.resolve("README.md"))).contains("```java\n" + snippet(name) + "\n```");
    }

    @Test
    void thePipelineExampleCountsTheEventsOfItsTopic() throws Exception {
        try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
            kafka.createTopic("input-city-events", 1);
            try (Publisher publisher = Publisher.connect(kafka.bootstrapServers(), Progress.silent())) {
                publisher.publishLines("input-city-events", ROOT.resolve("examples/fixtures/city-events.jsonl"), Long.MAX_VALUE);
            }
            assertThat(EmbeddingExamples.pipeline(ROOT.resolve("examples"), kafka.bootstrapServers()))
                    .isEqualTo("{\"city\":\"New York\",\"city_count\":1}\n{\"city\":\"Baltimore\",\"city_count\":1}\n");
        }
    }

    @Test
    void theServerExampleAnswersItsQueryOverHttp() throws Exception {
        assertThat(EmbeddingExamples.server(dir.resolve("warehouse"))).isEqualTo("{\"answer\":42}\n");
    }

    @Test
    void theViewsExampleReadsTheViewCurrentAfterTheWrite() throws Exception {
        assertThat(EmbeddingExamples.views(dir.resolve("shop.duckdb"))).isEqualTo(6);
    }
}
