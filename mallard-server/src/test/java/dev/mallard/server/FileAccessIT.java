// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.server.auth.SigningSecret;
import dev.mallard.server.config.AccessMode;
import dev.mallard.server.config.ServerConfig;
import dev.mallard.server.sql.FileAccess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * file_access, enforced by DuckDB: by default SQL reaches the warehouse and nothing else (not the process's
 * environment or command line, not /etc, not the generated signing key beside the warehouse), in COMPLETE and
 * READ_ONLY alike; the startup script still reads where it likes.
 */
class FileAccessIT {
    @TempDir
    Path root;

    private MallardServer start(AccessMode mode, FileAccess access) throws Exception {
        Path outside = root.resolve("outside.csv");
        Files.writeString(outside, "a,b\n1,2\n");
        Path script = root.resolve("startup.sql");
        Files.writeString(script, "CREATE TABLE loaded AS SELECT * FROM read_csv('" + outside + "');");
        ServerConfig config = TestServers.config(root, mode, Optional.of(script));
        Files.createDirectories(config.warehouse());
        Files.writeString(config.warehouse().resolve("inside.csv"), "a,b\n3,4\n");
        return MallardServer.start(config.withSecurity(access, config.loginLimits(), config.tokenAlgorithm()));
    }

    private static long count(Statement statement, String sql) throws SQLException {
        try (ResultSet rs = statement.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @ParameterizedTest
    @EnumSource(value = AccessMode.class, names = {"COMPLETE", "READ_ONLY"})
    void byDefaultSqlReadsTheWarehouseAndNothingElse(AccessMode mode) throws Exception {
        try (MallardServer server = start(mode, FileAccess.WAREHOUSE); Connection connection = TestServers.connect(server)) {
            Path warehouse = root.resolve("warehouse");
            Path key = SigningSecret.file(warehouse);
            assertThat(key).exists();
            for (String sql : new String[] {
                "SELECT count(*) FROM read_text('/proc/self/environ')",
                "SELECT count(*) FROM read_text('/proc/self/cmdline')",
                "SELECT count(*) FROM read_csv('/etc/passwd')",
                "SELECT count(*) FROM read_text('" + key + "')",
                "SELECT count(*) FROM read_text('" + warehouse + "/../" + warehouse.getFileName() + ".mallard/jwt-secret')",
                "SELECT count(*) FROM read_csv('" + root.resolve("outside.csv") + "')",
                "SELECT count(*) FROM glob('/etc/*')"
            }) {
                try (Statement statement = connection.createStatement()) {
                    assertThatThrownBy(() -> count(statement, sql)).as(sql).isInstanceOf(SQLException.class)
                            .hasStackTraceContaining("disabled by configuration");
                }
            }
            try (Statement statement = connection.createStatement()) {
                assertThat(count(statement, "SELECT count(*) FROM read_csv('" + warehouse.resolve("inside.csv") + "')")).isEqualTo(1);
                assertThat(count(statement, "SELECT count(*) FROM loaded")).as("the startup script read outside the warehouse").isEqualTo(1);
            }
            if (mode == AccessMode.COMPLETE) {
                try (Statement statement = connection.createStatement()) {
                    assertThatThrownBy(() -> statement.execute("SET enable_external_access = true")).isInstanceOf(SQLException.class);
                    assertThatThrownBy(() -> statement.execute("SET allowed_directories = ['/']")).isInstanceOf(SQLException.class);
                    statement.execute("SET threads = 2");
                    assertThatThrownBy(() -> count(statement, "SELECT count(*) FROM read_csv('/etc/passwd')")).isInstanceOf(SQLException.class);
                    statement.execute("COPY (SELECT 1 AS x) TO '" + warehouse.resolve("out.csv") + "'");
                    assertThatThrownBy(() -> statement.execute("COPY (SELECT 1 AS x) TO '" + root.resolve("out.csv") + "'"))
                            .isInstanceOf(SQLException.class);
                    assertThatThrownBy(() -> statement.execute("ATTACH '" + root.resolve("other.duckdb") + "' AS other")).isInstanceOf(SQLException.class);
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(value = FileAccess.class)
    void eachSettingAllowsWhatTheDocsSay(FileAccess access) throws Exception {
        try (MallardServer server = start(AccessMode.COMPLETE, access); Connection connection = TestServers.connect(server)) {
            String inside = "SELECT count(*) FROM read_csv('" + root.resolve("warehouse").resolve("inside.csv") + "')";
            String outside = "SELECT count(*) FROM read_csv('" + root.resolve("outside.csv") + "')";
            try (Statement statement = connection.createStatement()) {
                if (access == FileAccess.NONE) {
                    assertThatThrownBy(() -> count(statement, inside)).isInstanceOf(SQLException.class);
                } else {
                    assertThat(count(statement, inside)).isEqualTo(1);
                }
            }
            try (Statement statement = connection.createStatement()) {
                if (access == FileAccess.ALL) {
                    assertThat(count(statement, outside)).isEqualTo(1);
                } else {
                    assertThatThrownBy(() -> count(statement, outside)).isInstanceOf(SQLException.class);
                }
            }
        }
    }
}
