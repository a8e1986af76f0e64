// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ConfigLoaderTest {
    private final ConfigLoader loader = new ConfigLoader(ConfigSchema.fromResource(ConfigLoaderTest.class, "test.schema.json"),
            ConfigEnvironment.from(Map.of("SQLFLOW_SIZE", "5")));

    @Test
    void aSoundFileLoads() {
        ConfigLoader.Loaded loaded = loader.load("t.yml", "job:\n  size: {{ SQLFLOW_SIZE }}\n  mode: fast\n");
        assertThat(loaded.errors()).isEmpty();
        assertThat(loaded.orThrow().root().path("job").path("size").asInt()).isEqualTo(5);
    }

    @Test
    void anUnknownKeyIsReportedAtItsLineWithASuggestion() {
        ConfigLoader.Loaded loaded = loader.load("t.yml", "job:\n  size: 1\n  mdoe: fast\n");
        assertThat(loaded.errors()).singleElement().satisfies(problem -> {
            assertThat(problem.code()).isEqualTo(ErrorCode.USER_CONFIG_UNKNOWN_KEY);
            assertThat(problem.format()).startsWith("t.yml:3:3: user.config.unknown_key: unknown key 'mdoe' under 'job'");
            assertThat(problem.message()).contains("did you mean 'mode'?");
        });
    }

    @Test
    void everyFaultIsReportedInOnePass() {
        ConfigLoader.Loaded loaded = loader.load("t.yml", "job:\n  size: 0\n  mode: slow\n  extra: 1\nother: 2\n");
        assertThat(loaded.errors()).extracting(ConfigProblem::path)
                .containsExactlyInAnyOrder("job.size", "job.mode", "job.extra", "other");
        assertThatThrownBy(loaded::orThrow).isInstanceOf(ConfigInvalidException.class)
                .hasMessageContaining("4 problems");
    }

    @Test
    void aMissingRequiredKeyNamesItAndItsDescription() {
        ConfigLoader.Loaded loaded = loader.load("t.yml", "job:\n  mode: fast\n");
        assertThat(loaded.errors()).singleElement().satisfies(problem -> {
            assertThat(problem.path()).isEqualTo("job.size");
            assertThat(problem.message()).contains("'job.size' is required").contains("How many");
            // The key is absent, so the fault points at its parent.
            assertThat(problem.line()).isEqualTo(1);
        });
    }

    @Test
    void aWrongTypeNamesTheKey() {
        ConfigLoader.Loaded loaded = loader.load("t.yml", "job:\n  size: lots\n");
        assertThat(loaded.errors()).singleElement().satisfies(problem -> {
            assertThat(problem.format()).startsWith("t.yml:2:3: user.config.invalid: 'job.size'");
            assertThat(problem.message()).contains("integer");
        });
    }

    @Test
    void malformedYamlIsAnErrorWithItsLine() {
        ConfigLoader.Loaded loaded = loader.load("t.yml", "job:\n  size: [1\n  mode: x\n");
        assertThat(loaded.sound()).isFalse();
        assertThat(loaded.errors().getFirst().code()).isEqualTo(ErrorCode.USER_CONFIG_TEMPLATE_INVALID);
        assertThat(loaded.errors().getFirst().line()).isPositive();
    }

    @Test
    void aDuplicateKeyIsAnError() {
        ConfigLoader.Loaded loaded = loader.load("t.yml", "job:\n  size: 1\n  size: 2\n");
        assertThat(loaded.errors()).extracting(ConfigProblem::message).anyMatch(m -> m.contains("appears twice"));
    }

    @Test
    void aMissingFileIsAUserFault() {
        assertThatThrownBy(() -> loader.load(Path.of("/nonexistent/x.yml")))
                .isInstanceOf(MallardException.class)
                .satisfies(e -> assertThat(((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_CONFIG_NOT_FOUND));
    }

    @Test
    void theExampleListsEveryKeyWithItsDescription() {
        String example = new ConfigExample(ConfigSchema.fromResource(ConfigLoaderTest.class, "test.schema.json")).render();
        assertThat(example).contains("# How many workers. Required.").contains("size: 3")
                .contains("# One of: fast, safe.").contains("mode: \"fast\"");
        ConfigLoader.Loaded reloaded = loader.load("example.yml", example);
        assertThat(reloaded.errors()).isEmpty();
    }
}
