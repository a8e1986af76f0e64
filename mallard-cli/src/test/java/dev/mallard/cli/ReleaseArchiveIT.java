// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The release archive as a user gets it: unpacked into an empty directory far from the source checkout, and run
 * through its own bin/mallard with only a JDK.
 */
class ReleaseArchiveIT {
    static final String VERSION = System.getProperty("mallard.version");
    static final Path ARCHIVE = Path.of("target", "mallard-" + VERSION + ".tar.gz").toAbsolutePath();

    @TempDir
    static Path unpacked;

    static Path home;

    record Run(int exit, String out, String err) {}

    @BeforeAll
    static void unpack() throws Exception {
        assertThat(ARCHIVE).exists();
        Process tar = new ProcessBuilder("tar", "xzf", ARCHIVE.toString(), "-C", unpacked.toString()).inheritIO().start();
        assertThat(tar.waitFor(120, TimeUnit.SECONDS)).as("tar finished").isTrue();
        assertThat(tar.exitValue()).isZero();
        home = unpacked.resolve("mallard-" + VERSION);
    }

    private static Run mallard(String... args) throws IOException, InterruptedException {
        List<String> command = new java.util.ArrayList<>(List.of(home.resolve("bin/mallard").toString()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).directory(home.toFile());
        // Only a JDK: JAVA_HOME names the one running this test; nothing of the checkout is reachable.
        builder.environment().keySet().removeIf(name -> name.startsWith("MALLARD_"));
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        Path out = Files.createTempFile(unpacked, "out", ".txt");
        Path err = Files.createTempFile(unpacked, "err", ".txt");
        Process process = builder.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).as("mallard finished").isTrue();
        return new Run(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
    }

    @Test
    void theArchiveHoldsTheLauncherTheJarTheDocsTheExamplesAndTheLicence() {
        assertThat(home.resolve("bin/mallard")).isExecutable();
        assertThat(home.resolve("lib/mallard.jar")).isRegularFile();
        assertThat(home.resolve("docs/cli.md")).isRegularFile();
        assertThat(home.resolve("examples/city-counts.yml")).isRegularFile();
        assertThat(home.resolve("LICENSE")).content().contains("Apache License", "Version 2.0, January 2004");
        assertThat(home.resolve("NOTICE")).isRegularFile();
        assertThat(home.resolve("mvnw")).doesNotExist();
        assertThat(home.resolve("pom.xml")).doesNotExist();
    }

    @Test
    void theUnpackedLauncherPrintsItsVersion() throws Exception {
        Run run = mallard("--version");
        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(run.out()).startsWith("mallard " + VERSION + "\n").contains("duckdb v");
    }

    @Test
    void theUnpackedLauncherRunsAnExamplePipelineOverItsFixture() throws Exception {
        Run run = mallard("dev", "invoke", "examples/city-counts.yml", "examples/fixtures/city-events.jsonl");
        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(run.out()).isEqualTo("{\"city\":\"New York\",\"city_count\":1}\n{\"city\":\"Baltimore\",\"city_count\":1}\n");
    }
}
