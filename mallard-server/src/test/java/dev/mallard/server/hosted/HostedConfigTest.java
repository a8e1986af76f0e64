// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.hosted;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.server.MallardServer;
import dev.mallard.server.config.ServerConfig;
import dev.mallard.server.config.ServerConfigReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The hosted keys: {@code pipelines} and {@code pipeline_admins} in the YAML configuration and under {@code dazzleduck_server}. */
class HostedConfigTest {
    @TempDir
    Path dir;

    private ServerConfig read(Optional<Path> file, List<String> overrides) {
        return new ServerConfigReader(ConfigEnvironment.from(Map.of()), Map.of()).read(file, overrides);
    }

    @Test
    void aYamlConfigurationsPipelinesAreRelativeToItsDirectory() throws Exception {
        Path file = dir.resolve("server.yml");
        Files.writeString(file, """
                users:
                  - username: ada
                    password: pw
                pipelines:
                  - pipelines/events.yml
                  - /abs/clicks.yml
                pipeline_admins: [ada]
                """);
        HostedConfig hosted = read(Optional.of(file), List.of()).hosted();
        assertThat(hosted.pipelines()).containsExactly(dir.resolve("pipelines/events.yml"), Path.of("/abs/clicks.yml"));
        assertThat(hosted.pipelineAdmins()).containsExactly("ada");
    }

    @Test
    void overridesGiveOnePipelineOrAList() {
        ServerConfig one = read(Optional.empty(), List.of("users.0.username=ada", "users.0.password=pw", "pipelines=a.yml"));
        assertThat(one.hosted().pipelines()).containsExactly(Path.of("a.yml"));
        ServerConfig two = read(Optional.empty(), List.of("users.0.username=ada", "users.0.password=pw", "pipelines.0=a.yml", "pipelines.1=b.yml"));
        assertThat(two.hosted().withPipelines(List.of(Path.of("c.yml"))).pipelines()).containsExactly(Path.of("a.yml"), Path.of("b.yml"), Path.of("c.yml"));
        assertThat(read(Optional.empty(), List.of("users.0.username=ada", "users.0.password=pw")).hosted()).isEqualTo(HostedConfig.NONE);
    }

    @Test
    void aDazzleDuckConfigurationGivesTheSameKeysUnderDazzleduckServer() throws Exception {
        Path file = dir.resolve("server.conf");
        Files.writeString(file, """
                dazzleduck_server {
                  warehouse = wh
                  users = [{ username = ada, password = pw }]
                  pipelines = ["pipelines/events.yml"]
                  pipeline_admins = [ada]
                }
                """);
        HostedConfig hosted = read(Optional.of(file), List.of()).hosted();
        assertThat(hosted.pipelines()).containsExactly(dir.resolve("pipelines/events.yml"));
        assertThat(hosted.pipelineAdmins()).containsExactly("ada");
    }

    @Test
    void theExamplesOfDocsHubMdRead() throws Exception {
        String doc = Files.readString(Path.of("..", "docs", "hub.md"));
        Path yaml = dir.resolve("server.yml");
        Files.writeString(yaml, block(doc, "```yaml\n"));
        HostedConfig fromYaml = new ServerConfigReader(ConfigEnvironment.from(Map.of("MALLARD_ADA_PASSWORD", "pw")), Map.of())
                .read(Optional.of(yaml), List.of()).hosted();
        assertThat(fromYaml).isEqualTo(new HostedConfig(List.of(dir.resolve("pipelines/events.yml")), List.of("ada")));
        Path hocon = dir.resolve("server.conf");
        Files.writeString(hocon, block(doc, "```hocon\n"));
        HostedConfig fromHocon = new ServerConfigReader(ConfigEnvironment.from(Map.of()), Map.of("ADA_PASSWORD", "pw"))
                .read(Optional.of(hocon), List.of()).hosted();
        assertThat(fromHocon).isEqualTo(fromYaml);
    }

    private static String block(String doc, String fence) {
        int start = doc.indexOf(fence) + fence.length();
        return doc.substring(start, doc.indexOf("```", start));
    }

    @Test
    void aServerStartedWithoutTheHubRefusesPipelinesInsteadOfIgnoringThem() {
        ServerConfig config = read(Optional.empty(), List.of("users.0.username=ada", "users.0.password=pw", "warehouse=" + dir.resolve("wh"),
                "http.port=0", "flight.port=0", "host=127.0.0.1", "pipelines=a.yml"));
        assertThatThrownBy(() -> MallardServer.start(config)).isInstanceOfSatisfying(MallardException.class,
                e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_CONFIG_UNSUPPORTED));
    }
}
