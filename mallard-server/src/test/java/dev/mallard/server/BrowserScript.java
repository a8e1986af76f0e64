// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * Runs {@code src/test/browser/console-e2e.mjs} with node in headless Chromium (playwright-core), for the console's
 * browser tests. Without node, Chromium or playwright-core it fails under CI ({@code CI} set) and aborts the test
 * elsewhere, naming what to install. Screenshots and logs go to {@code target/console-browser/}.
 */
final class BrowserScript {
    static final Path SCRIPTS = Path.of("src", "test", "browser");
    static final Path ARTIFACTS = Path.of("target", "console-browser");
    static final Path SCREENSHOTS = ARTIFACTS.resolve("screenshots");

    private BrowserScript() {}

    static Path chromium() {
        return Path.of(Optional.ofNullable(System.getenv("CHROMIUM")).orElse("/usr/bin/chromium"));
    }

    /** Fails under CI, or aborts the test elsewhere, when a tool the script needs is missing. */
    static void requireTools() {
        List<String> missing = new ArrayList<>();
        if (!nodeRuns()) {
            missing.add("node (apt-get install nodejs npm)");
        }
        if (!Files.isExecutable(chromium())) {
            missing.add("Chromium at " + chromium() + " (apt-get install chromium)");
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
    }

    /** Runs the script with {@code environment}, logging to {@code target/console-browser/<log>}, and asserts every step passed. */
    static void run(Map<String, String> environment, String log) throws Exception {
        Files.createDirectories(SCREENSHOTS);
        Path logFile = ARTIFACTS.resolve(log);
        ProcessBuilder node = new ProcessBuilder("node", "console-e2e.mjs").directory(SCRIPTS.toFile()).redirectErrorStream(true)
                .redirectOutput(logFile.toFile());
        node.environment().putAll(environment);
        node.environment().put("SCREENSHOTS", SCREENSHOTS.toAbsolutePath().toString());
        node.environment().put("CHROMIUM", chromium().toString());
        Process process = node.start();
        // A bound against a hung browser, not a timing check.
        boolean ended = process.waitFor(5, TimeUnit.MINUTES);
        if (!ended) {
            process.destroyForcibly();
        }
        String output = Files.readString(logFile);
        assertThat(ended).as("the browser script ended within five minutes:\n%s", output).isTrue();
        assertThat(process.exitValue()).as("the browser script's steps:\n%s", output).isZero();
        assertThat(output).contains("console e2e: all steps passed");
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
