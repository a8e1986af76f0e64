// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.datasets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code serve.storage_compatibility}: the file {@code mallard serve} creates opens in the DuckDB release it names. */
class ServeStorageCompatibilityIT {
    @TempDir
    Path dir;

    private Path config(String compatibility) throws Exception {
        Path file = dir.resolve("serve.yml");
        Files.writeString(file, """
                commands:
                  - name: totals
                    sql: CREATE TABLE IF NOT EXISTS totals AS SELECT 'Lisbon' AS city, 3 AS n
                serve:
                  port: 0
                  database: served.duckdb
                  %s
                  datasets:
                    - name: totals
                      sql: SELECT city, n FROM totals
                """.formatted(compatibility));
        return file;
    }

    private static String storageVersion(Path database) throws Exception {
        try (Connection connection = DriverManager.getConnection("jdbc:duckdb:" + database);
                Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SELECT tags['storage_version'] FROM duckdb_databases() WHERE database_name = 'served'")) {
            assertThat(rows.next()).isTrue();
            return rows.getString(1);
        }
    }

    @Test
    void aServedFileCreatedForDuckDbOneIsInTheOneFormat() throws Exception {
        ServeConfig config = new ServeConfigReader(ConfigEnvironment.from(Map.of())).read(config("storage_compatibility: v1.0.0"));
        try (DatasetServer server = DatasetServer.start(config, dir)) {
            assertThat(server.port()).isPositive();
        }
        assertThat(storageVersion(dir.resolve("served.duckdb"))).isEqualTo("v1.0.0+");
    }

    @Test
    void withoutTheKeyTheFileIsInDuckDbTwosOwnFormat() throws Exception {
        ServeConfig config = new ServeConfigReader(ConfigEnvironment.from(Map.of())).read(config(""));
        try (DatasetServer server = DatasetServer.start(config, dir)) {
            assertThat(server.port()).isPositive();
        }
        assertThat(storageVersion(dir.resolve("served.duckdb"))).isNotEqualTo("v1.0.0+");
    }

    @Test
    void aReleaseThisDuckDbDoesNotKnowIsAConfigErrorNamingTheKey() throws Exception {
        Path file = config("storage_compatibility: v9.9.9");
        assertThatThrownBy(() -> new ServeConfigReader(ConfigEnvironment.from(Map.of())).read(file))
                .isInstanceOfSatisfying(MallardException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_CONFIG_INVALID))
                .hasMessageContaining("serve.storage_compatibility");
    }
}
