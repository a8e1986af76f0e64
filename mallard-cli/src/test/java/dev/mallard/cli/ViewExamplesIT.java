// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * The scripts of examples/views (docs/views.md's and the seed's kind of script), each run unchanged through
 * {@code mallard sql <file> < script.sql} in a fresh JVM; its standard output must be the script's {@code .out} file.
 */
class ViewExamplesIT {
    private static final Path EXAMPLES = Path.of("..", "examples", "views").toAbsolutePath();

    @TempDir
    Path dir;

    private String run(String database, String script) throws IOException, InterruptedException {
        Path out = dir.resolve(script + ".stdout");
        Path err = dir.resolve(script + ".stderr");
        Process process = new ProcessBuilder(MallardJar.command("sql", database)).directory(dir.toFile())
                .redirectInput(EXAMPLES.resolve(script + ".sql").toFile()).redirectOutput(out.toFile())
                .redirectError(err.toFile()).start();
        assertThat(process.waitFor(180, TimeUnit.SECONDS)).as("mallard sql finished " + script).isTrue();
        String stderr = Files.readString(err, StandardCharsets.UTF_8);
        assertThat(process.exitValue()).as(script + ": " + stderr).isZero();
        return Files.readString(out, StandardCharsets.UTF_8);
    }

    private static String expected(String script) throws IOException {
        return Files.readString(EXAMPLES.resolve(script + ".out"), StandardCharsets.UTF_8);
    }

    @ParameterizedTest
    @ValueSource(strings = {"basic", "cascading", "recursive", "settings", "shop"})
    void eachExampleScriptRunsUnchangedThroughMallardSqlAndPrintsItsExpectedOutput(String script) throws Exception {
        assertThat(run(script + ".duckdb", script)).isEqualTo(expected(script));
    }

    @Test
    void aViewSetSavedByOneScriptIsLoadedByAnotherIntoASecondDatabase() throws Exception {
        assertThat(run("first.duckdb", "persistence")).isEqualTo(expected("persistence"));
        assertThat(dir.resolve("views.json")).exists();
        assertThat(run("second.duckdb", "load")).isEqualTo(expected("load"));
    }

    @Test
    void everyScriptInTheDirectoryHasItsExpectedOutput() throws Exception {
        try (var files = Files.list(EXAMPLES)) {
            List<Path> scripts = files.filter(p -> p.toString().endsWith(".sql")).toList();
            assertThat(scripts).hasSize(7);
            for (Path script : scripts) {
                String name = script.getFileName().toString().replace(".sql", ".out");
                assertThat(EXAMPLES.resolve(name)).as("expected output of " + script).exists();
            }
        }
    }
}
