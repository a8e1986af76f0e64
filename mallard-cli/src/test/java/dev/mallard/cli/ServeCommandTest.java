// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import static dev.mallard.cli.CommandLineTest.mallard;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code mallard validate} and {@code mallard config example --serve} cover serve configurations. */
class ServeCommandTest {
    private static final Path EXAMPLE = Path.of("..", "examples", "serve", "events.yml");

    @Test
    void theExampleServeConfigurationValidates() {
        CommandLineTest.Result result = mallard("validate", EXAMPLE.toString());
        assertThat(result.exit()).as(result.err()).isZero();
        assertThat(result.out()).contains("events.yml: valid");
    }

    @Test
    void aServeConfigurationsFaultsAreReportedWithTheirCodesInOnePass(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("bad.yml");
        Files.writeString(file, """
                serve:
                  datasets:
                    - name: both
                      sql: SELECT 1
                      grains: {1h: {sql: SELECT 2}}
                    - name: ranged
                      params: [{name: since, type: string}, {name: until, type: timestamp}]
                      range: {since: since, until: until, default: 24h}
                      grains: {5m: {sql: SELECT 1}}
                    - name: unbound
                      sql: SELECT $city AS city
                    - name: typo
                      sqll: SELECT 1
                """);
        CommandLineTest.Result result = mallard("validate", file.toString());
        assertThat(result.exit()).isEqualTo(10);
        assertThat(result.err()).contains("user.config.unknown_key").contains("sqll")
                .contains("give the dataset either sql or grains, not both")
                .contains("range.since names since, which is not a timestamp param")
                .contains("each need max_range");
        Files.writeString(file, """
                serve:
                  datasets:
                    - name: unbound
                      sql: SELECT $city AS city
                """);
        CommandLineTest.Result unbound = mallard("validate", file.toString());
        assertThat(unbound.exit()).isEqualTo(10);
        assertThat(unbound.err()).contains("binds $city, which is not one of its params");
    }

    @Test
    void configExampleServePrintsASkeletonOfEveryServeKey() {
        CommandLineTest.Result result = mallard("config", "example", "--serve");
        assertThat(result.exit()).isZero();
        assertThat(result.out()).contains("serve:").contains("datasets:").contains("ttl_seconds").contains("max_range").contains("client_id");
    }
}
