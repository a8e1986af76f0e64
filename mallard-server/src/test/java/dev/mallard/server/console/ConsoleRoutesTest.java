// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.console;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ConsoleRoutesTest {
    @Test
    void onlyFilesUnderAssetsAreReadAndEveryOtherPathIsThePage() {
        assertThat(ConsoleRoutes.relative("/ui/", "/ui")).isEqualTo("index.html");
        assertThat(ConsoleRoutes.relative("/ui/assets/index-abc.js", "/ui")).isEqualTo("assets/index-abc.js");
        assertThat(ConsoleRoutes.relative("/v1/ui/assets/index-abc.css", "/v1/ui")).isEqualTo("assets/index-abc.css");
        assertThat(ConsoleRoutes.relative("/ui/pipelines", "/ui")).isEqualTo("index.html");
        assertThat(ConsoleRoutes.relative("/ui/assets/../../config/server.schema.json", "/ui")).isEqualTo("index.html");
        assertThat(ConsoleRoutes.relative("/ui/assets//etc/passwd", "/ui")).isEqualTo("index.html");
        assertThat(ConsoleRoutes.relative("/ui/assets/..\\x", "/ui")).isEqualTo("index.html");
    }

    @Test
    void thePolicyAllowsNothingFromAnotherHostAndNoInlineCode() {
        assertThat(ConsoleRoutes.CONTENT_SECURITY_POLICY).contains("default-src 'none'", "script-src 'self'", "connect-src 'self'",
                "frame-ancestors 'none'", "base-uri 'none'").doesNotContain("unsafe", "*", "http");
    }
}
