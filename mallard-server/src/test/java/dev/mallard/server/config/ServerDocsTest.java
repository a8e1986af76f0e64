// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.config;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mallard.core.config.ConfigEnvironment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** docs/server.md documents every key the server schema accepts, and its example configuration reads. */
class ServerDocsTest {
    private static final Path DOC = Path.of("..", "docs", "server.md");

    @Test
    void everySchemaKeyIsInTheConfigurationTable() throws Exception {
        String doc = Files.readString(DOC);
        List<String> keys = new ArrayList<>();
        collect(ServerConfigReader.schema().document(), "", keys);
        assertThat(keys).isNotEmpty();
        for (String key : keys) {
            assertThat(doc).as("docs/server.md documents " + key).contains("`" + key + "`");
        }
    }

    @Test
    void theExampleConfigurationReads(@TempDir Path dir) throws Exception {
        String doc = Files.readString(DOC);
        int start = doc.indexOf("```yaml\n") + "```yaml\n".length();
        String yaml = doc.substring(start, doc.indexOf("```", start));
        Path file = dir.resolve("server.yml");
        Files.writeString(file, yaml);
        Files.writeString(dir.resolve("startup.sql"), "SELECT 1;");
        ServerConfig config = new ServerConfigReader(ConfigEnvironment.from(Map.of("MALLARD_ADMIN_PASSWORD", "pw")))
                .read(Optional.of(file), List.of());
        assertThat(config.accessMode()).isEqualTo(AccessMode.READ_ONLY);
        assertThat(config.users()).extracting(UserAccount::username).containsExactly("admin");
        assertThat(config.httpConnections().headerTimeout()).isEqualTo(java.time.Duration.ofSeconds(10));
        assertThat(config.httpConnections().maxConnections()).isEqualTo(2048);
        assertThat(config.httpConnections().idleTimeout()).isEqualTo(dev.mallard.core.http.HttpEndpoints.ConnectionLimits.DEFAULT.idleTimeout());
    }

    @Test
    void theLoginPathsExampleReads(@TempDir Path dir) throws Exception {
        String doc = Files.readString(DOC);
        int at = doc.indexOf("login_paths: [");
        int start = doc.lastIndexOf("```yaml\n", at) + "```yaml\n".length();
        String yaml = doc.substring(start, doc.indexOf("```", start)).stripIndent();
        Path file = dir.resolve("server.yml");
        Files.writeString(file, yaml);
        ServerConfig config = new ServerConfigReader(ConfigEnvironment.from(Map.of("MALLARD_TENANT1_PASSWORD", "pw"))).read(Optional.of(file), List.of());
        assertThat(config.accessMode()).isEqualTo(AccessMode.RESTRICTED);
        assertThat(config.users().getFirst().loginPaths()).containsExactly("/data/tenants/t1/");
        dev.mallard.server.rls.ClaimPolicy policy = new dev.mallard.server.rls.ClaimPolicy(config.accessMode(), config.users());
        assertThat(policy.grantedPaths()).containsExactly("/data/tenants/t1/");
        policy.checkLogin("tenant1", Map.of("x-dd-access", "[[\"path\",\"/data/tenants/t1/2025/\",\"*\",\"true\"]]"));
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> policy.checkLogin("tenant1",
                Map.of("x-dd-access", "[[\"path\",\"/data/tenants/t2/\",\"*\",\"true\"]]"))).hasMessageContaining("login_paths");
    }

    private static void collect(JsonNode schema, String prefix, List<String> keys) {
        JsonNode properties = schema.path("properties");
        if (properties.isObject()) {
            properties.fieldNames().forEachRemaining(name -> {
                JsonNode child = properties.get(name);
                String path = prefix + name;
                if (child.path("properties").isObject()) {
                    collect(child, path + ".", keys);
                } else if (child.path("items").path("properties").isObject()) {
                    collect(child.path("items"), path + ".N.", keys);
                } else {
                    keys.add(path);
                }
            });
        }
    }
}
