// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.datasets;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.core.config.ConfigEnvironment;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code serve.clients}: with tokens configured, every request needs one of them. */
class ServeClientsIT {
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @Test
    void aRequestWithoutOneOfTheClientsTokensIsUnauthorized(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("serve.yml");
        Files.writeString(file, """
                serve:
                  port: 0
                  clients:
                    - {client_id: dashboard, token: "{{ MALLARD_DASHBOARD_TOKEN }}"}
                  datasets:
                    - name: one
                      sql: SELECT 1 AS one
                """);
        ServeConfig config = new ServeConfigReader(ConfigEnvironment.from(Map.of("MALLARD_DASHBOARD_TOKEN", "dashboard-secret-token"))).read(file);
        assertThat(config.serve().clients().getFirst().toString()).doesNotContain("dashboard-secret-token");
        try (DatasetServer server = DatasetServer.start(config, dir)) {
            URI uri = URI.create("http://127.0.0.1:" + server.port() + "/v1/datasets/one");
            HttpResponse<String> none = HTTP.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(none.statusCode()).isEqualTo(401);
            assertThat(none.body()).contains("\"code\":\"unauthorized\"");
            HttpResponse<String> wrong = HTTP.send(HttpRequest.newBuilder(uri).header("Authorization", "Bearer another-token").build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(wrong.statusCode()).isEqualTo(401);
            assertThat(wrong.body()).doesNotContain("dashboard-secret-token");
            HttpResponse<String> right = HTTP.send(HttpRequest.newBuilder(uri).header("Authorization", "Bearer dashboard-secret-token").build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(right.statusCode()).isEqualTo(200);
            assertThat(right.body()).contains("\"rows\":[{\"one\":1}]");
            assertThat(HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/v1/datasets")).build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode()).as("the list too").isEqualTo(401);
        }
    }
}
