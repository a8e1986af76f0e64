// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.server.config.AccessMode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The console end to end in a real browser: headless Chromium driven by playwright-core
 * ({@code src/test/browser/console-e2e.mjs}) against a COMPLETE and a READ_ONLY server this test starts. Screenshots
 * go to {@code target/console-browser/screenshots}. Needs node, Chromium ({@code /usr/bin/chromium}, or
 * {@code CHROMIUM}) and {@code npm ci --prefix mallard-server/src/test/browser} ({@link BrowserScript}).
 */
class ConsoleBrowserIT {
    @TempDir
    Path root;

    @Test
    void aUserLogsInQueriesCancelsAndBrowsesWhileAReadOnlyUserIsRefusedAWrite() throws Exception {
        BrowserScript.requireTools();
        for (String shot : new String[] {"01-query-and-chart.png", "06-read-only-refused.png", "failure.png"}) {
            Files.deleteIfExists(BrowserScript.SCREENSHOTS.resolve(shot));
        }
        try (MallardServer complete = MallardServer.start(TestServers.config(root.resolve("complete"), AccessMode.COMPLETE, Optional.empty()));
                MallardServer readOnly = MallardServer.start(TestServers.config(root.resolve("read-only"), AccessMode.READ_ONLY, Optional.empty()))) {
            BrowserScript.run(Map.of("MALLARD_URL", "http://127.0.0.1:" + complete.httpPort(), "MALLARD_RO_URL", "http://127.0.0.1:" + readOnly.httpPort(),
                    "MALLARD_USER", TestServers.USER, "MALLARD_PASSWORD", TestServers.PASSWORD), "console-e2e.log");
            assertThat(BrowserScript.SCREENSHOTS.resolve("01-query-and-chart.png")).isNotEmptyFile();
            assertThat(BrowserScript.SCREENSHOTS.resolve("06-read-only-refused.png")).isNotEmptyFile();
        }
    }
}
