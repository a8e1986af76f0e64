// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mallard.server.config.AccessMode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The console's routes over real HTTP: the page and its assets from the jar, its security headers, the session route. */
class ConsoleIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final HttpClient http = HttpClient.newHttpClient();

    @TempDir
    static Path root;

    private static MallardServer complete;
    private static MallardServer readOnly;

    @BeforeAll
    static void start() {
        complete = MallardServer.start(TestServers.config(root.resolve("c"), AccessMode.COMPLETE, Optional.empty()));
        readOnly = MallardServer.start(TestServers.config(root.resolve("r"), AccessMode.READ_ONLY, Optional.empty()));
    }

    @AfterAll
    static void stop() {
        try (MallardServer first = complete; MallardServer second = readOnly) {
            // closed in reverse order
        }
    }

    @Test
    void thePageAndItsAssetsComeFromTheJarUnderAContentSecurityPolicyThatAllowsNoOtherHost() throws Exception {
        for (String prefix : new String[] {"/ui", "/v1/ui"}) {
            HttpResponse<String> redirect = get(complete, prefix, null);
            assertThat(redirect.statusCode()).isEqualTo(301);
            assertThat(redirect.headers().firstValue("Location")).contains(prefix + "/");
            HttpResponse<String> page = get(complete, prefix + "/", null);
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(page.headers().firstValue("Content-Type")).hasValueSatisfying(type -> assertThat(type).startsWith("text/html"));
            String csp = page.headers().firstValue("Content-Security-Policy").orElseThrow();
            assertThat(csp).contains("default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'")
                    .doesNotContain("unsafe-inline", "unsafe-eval", "http:", "https:");
            assertThat(page.headers().firstValue("X-Content-Type-Options")).contains("nosniff");
            assertThat(page.headers().firstValue("Cache-Control")).contains("no-store");
            assertThat(page.body()).doesNotContain("http://", "https://").doesNotContainPattern("<script>[^<]");
            Matcher script = Pattern.compile("src=\"\\./(assets/[^\"]+\\.js)\"").matcher(page.body());
            assertThat(script.find()).as("the page loads its script from ./assets").isTrue();
            HttpResponse<String> asset = get(complete, prefix + "/" + script.group(1), null);
            assertThat(asset.statusCode()).isEqualTo(200);
            assertThat(asset.headers().firstValue("Content-Type")).hasValueSatisfying(type -> assertThat(type).startsWith("text/javascript"));
            assertThat(asset.headers().firstValue("Cache-Control")).hasValueSatisfying(value -> assertThat(value).contains("immutable"));
            assertThat(get(complete, prefix + "/assets/none.js", null).statusCode()).isEqualTo(404);
            // Any other path below the prefix is the page (it routes itself); nothing outside the console's files is read.
            assertThat(get(complete, prefix + "/assets/../../config/server.schema.json", null).body()).doesNotContain("$schema");
        }
    }

    @Test
    void theSessionRouteNamesTheTokensUserAndTheServersAccessModeAndRefusesAMissingToken() throws Exception {
        HttpResponse<String> none = get(complete, "/ui/api/session", null);
        assertThat(none.statusCode()).isEqualTo(401);
        assertThat(JSON.readTree(none.body()).path("error").path("code").asText()).isEqualTo("user.auth.failed");
        JsonNode writer = JSON.readTree(get(complete, "/ui/api/session", HttpApiITSupport.login(complete.httpPort())).body());
        assertThat(writer.path("username").asText()).isEqualTo(TestServers.USER);
        assertThat(writer.path("access_mode").asText()).isEqualTo("COMPLETE");
        assertThat(writer.path("can_write").asBoolean()).isTrue();
        JsonNode reader = JSON.readTree(get(readOnly, "/v1/ui/api/session", HttpApiITSupport.login(readOnly.httpPort())).body());
        assertThat(reader.path("access_mode").asText()).isEqualTo("READ_ONLY");
        assertThat(reader.path("can_write").asBoolean()).isFalse();
    }

    private HttpResponse<String> get(MallardServer server, String path, String token) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + path));
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
