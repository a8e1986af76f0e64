// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mallard.server.config.AccessMode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Issue 16: 700 nested subqueries killed the server (a segfault in DuckDB's planner); now a coded 400 before DuckDB plans it. */
class NestingDepthIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path root;

    static String nested(int depth) {
        String sql = "SELECT 1 AS x";
        for (int i = 0; i < depth; i++) {
            sql = "SELECT * FROM (" + sql + ")";
        }
        return sql;
    }

    @ParameterizedTest
    @EnumSource(value = AccessMode.class, names = {"COMPLETE", "READ_ONLY"})
    void aDeeplyNestedQueryIsACoded400AndTheServerLives(AccessMode mode) throws Exception {
        try (MallardServer server = MallardServer.start(TestServers.config(root, mode, Optional.empty()))) {
            String token = HttpApiITSupport.login(server.httpPort());
            HttpClient http = HttpClient.newHttpClient();
            for (String text : new String[] {nested(700), nested(5_000), "SELECT " + "(".repeat(3_000) + "1" + ")".repeat(3_000)}) {
                HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/v1/query"))
                        .header("Authorization", "Bearer " + token).header("Accept", "application/jsonl")
                        .POST(HttpRequest.BodyPublishers.ofString(text)).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(response.statusCode()).isEqualTo(400);
                assertThat(JSON.readTree(response.body()).path("error").path("code").asText()).isEqualTo("user.sql.too_deep");
                assertThat(response.body()).doesNotContain("jackson", "fasterxml", "StreamConstraints");
            }
            HttpResponse<String> deepLogin = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/v1/login"))
                    .POST(HttpRequest.BodyPublishers.ofString("{\"username\":\"ada\",\"password\":\"lovelace\",\"claims\":" + "[".repeat(5_000)
                            + "]".repeat(5_000) + "}")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(deepLogin.statusCode()).isEqualTo(400);
            assertThat(deepLogin.body()).doesNotContain("jackson", "fasterxml", "StreamReadConstraints");
            try (Connection connection = TestServers.connect(server); Statement statement = connection.createStatement()) {
                assertThatThrownBy(() -> statement.executeQuery(nested(700))).isInstanceOf(SQLException.class).hasStackTraceContaining("deep");
                try (ResultSet rs = statement.executeQuery(nested(60))) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getInt(1)).isEqualTo(1);
                }
            }
        }
    }
}
