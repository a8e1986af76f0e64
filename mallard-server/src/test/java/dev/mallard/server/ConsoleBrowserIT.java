package dev.mallard.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.server.config.AccessMode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The console end to end in a real browser: headless Chromium driven by playwright-core
 * ({@code src/test/browser/console-e2e.mjs}) against a COMPLETE and a READ_ONLY server this test starts. Screenshots
 * go to {@code target/console-browser/}. Needs node, Chromium ({@code /usr/bin/chromium}, or {@code CHROMIUM}) and
 * {@code npm ci --prefix mallard-server/src/test/browser}; without them it fails under CI ({@code CI} set) and is
 * skipped elsewhere, saying how to install them.
 */
class ConsoleBrowserIT {
    private static final Path SCRIPTS = Path.of("src", "test", "browser");
    private static final Path ARTIFACTS = Path.of("target", "console-browser");

    @TempDir
    Path root;

    @Test
    void aUserLogsInQueriesCancelsAndBrowsesWhileAReadOnlyUserIsRefusedAWrite() throws Exception {
        Path chromium = Path.of(Optional.ofNullable(System.getenv("CHROMIUM")).orElse("/usr/bin/chromium"));
        List<String> missing = new ArrayList<>();
        if (!nodeRuns()) {
            missing.add("node (apt-get install nodejs npm)");
        }
        if (!Files.isExecutable(chromium)) {
            missing.add("Chromium at " + chromium + " (apt-get install chromium)");
        }
        if (!Files.isDirectory(SCRIPTS.resolve("node_modules").resolve("playwright-core"))) {
            missing.add("playwright-core (npm ci --prefix mallard-server/src/test/browser)");
        }
        if (!missing.isEmpty()) {
            String message = "the console's browser test needs " + String.join(", ", missing) + "; .ci/run installs them";
            if (System.getenv("CI") != null) {
                throw new AssertionError(message);
            }
            Assumptions.abort(message);
        }
        Path screenshots = ARTIFACTS.resolve("screenshots");
        Files.createDirectories(screenshots);
        try (var old = Files.list(screenshots)) {
            for (Path shot : old.toList()) {
                Files.delete(shot);
            }
        }
        try (MallardServer complete = MallardServer.start(TestServers.config(root.resolve("complete"), AccessMode.COMPLETE, Optional.empty()));
                MallardServer readOnly = MallardServer.start(TestServers.config(root.resolve("read-only"), AccessMode.READ_ONLY, Optional.empty()))) {
            ProcessBuilder node = new ProcessBuilder("node", "console-e2e.mjs").directory(SCRIPTS.toFile()).redirectErrorStream(true)
                    .redirectOutput(ARTIFACTS.resolve("console-e2e.log").toFile());
            node.environment().putAll(Map.of("MALLARD_URL", "http://127.0.0.1:" + complete.httpPort(),
                    "MALLARD_RO_URL", "http://127.0.0.1:" + readOnly.httpPort(), "MALLARD_USER", TestServers.USER,
                    "MALLARD_PASSWORD", TestServers.PASSWORD, "SCREENSHOTS", screenshots.toAbsolutePath().toString(), "CHROMIUM", chromium.toString()));
            Process process = node.start();
            // A bound against a hung browser, not a timing check.
            boolean ended = process.waitFor(5, TimeUnit.MINUTES);
            if (!ended) {
                process.destroyForcibly();
            }
            String log = Files.readString(ARTIFACTS.resolve("console-e2e.log"));
            assertThat(ended).as("the browser script ended within five minutes:\n%s", log).isTrue();
            assertThat(process.exitValue()).as("the browser script's steps:\n%s", log).isZero();
            assertThat(log).contains("console e2e: all steps passed");
            assertThat(screenshots.resolve("01-query-and-chart.png")).isNotEmptyFile();
            assertThat(screenshots.resolve("06-read-only-refused.png")).isNotEmptyFile();
        }
    }

    private static boolean nodeRuns() {
        try {
            Process process = new ProcessBuilder("node", "--version").redirectErrorStream(true).start();
            process.getInputStream().readAllBytes();
            return process.waitFor(30, TimeUnit.SECONDS) && process.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
