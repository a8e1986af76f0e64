// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.server.config.AccessMode;
import dev.mallard.server.config.ServerConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ServerConfigReaderTest {
    @TempDir
    Path dir;

    private final ServerConfigReader reader = new ServerConfigReader(ConfigEnvironment.from(Map.of("MALLARD_ADMIN_PASSWORD", "s3cret")));

    @Test
    void aFileIsReadWithDefaultsAndConfOverridesWin() throws Exception {
        Path file = dir.resolve("server.yml");
        Files.writeString(file, """
                warehouse: wh
                database: mallard.duckdb
                http:
                  port: 9000
                users:
                  - username: admin
                    password: "{{ MALLARD_ADMIN_PASSWORD }}"
                access_mode: READ_ONLY
                """);
        ServerConfig config = reader.read(Optional.of(file), List.of("http.port=9100", "users.1.username=ada", "users.1.password=pw"));
        assertThat(config.warehouse()).isEqualTo(dir.resolve("wh"));
        assertThat(config.database()).contains(dir.resolve("wh").resolve("mallard.duckdb"));
        assertThat(config.httpPort()).isEqualTo(9100);
        assertThat(config.flightPort()).isEqualTo(ServerConfig.DEFAULT_FLIGHT_PORT);
        assertThat(config.accessMode()).isEqualTo(AccessMode.READ_ONLY);
        assertThat(config.users()).extracting(UserAccount::username).containsExactly("admin", "ada");
        assertThat(config.users().get(0).password().matches("s3cret")).isTrue();
        assertThat(config.toString()).doesNotContain("s3cret").doesNotContain("pw,");
    }

    @Test
    void confAloneIsEnoughAndTheDatabaseDefaultsToMemory() {
        ServerConfig config = reader.read(Optional.empty(), List.of("users.0.username=ada", "users.0.password=pw", "flight.port=0"));
        assertThat(config.database()).isEmpty();
        assertThat(config.flightPort()).isZero();
        assertThat(config.httpPort()).isEqualTo(ServerConfig.DEFAULT_HTTP_PORT);
        assertThat(config.sessionLimits().maxPreparedStatements()).isEqualTo(256);
        assertThat(config.streamResults()).isTrue();
        assertThat(reader.read(Optional.empty(), List.of("users.0.username=ada", "users.0.password=pw", "stream_results=false")).streamResults())
                .isFalse();
    }

    @Test
    void thePreparedStatementCapIsReadFromConfAndMustBePositive() {
        ServerConfig config = reader.read(Optional.empty(), List.of("users.0.username=ada", "users.0.password=pw",
                "max_prepared_statements_per_session=16"));
        assertThat(config.sessionLimits().maxPreparedStatements()).isEqualTo(16);
        assertThatThrownBy(() -> reader.read(Optional.empty(), List.of("users.0.username=ada", "users.0.password=pw",
                "max_prepared_statements_per_session=0"))).hasMessageContaining("max_prepared_statements_per_session");
    }

    @Test
    void anUnknownKeyIsAnError() {
        assertThatThrownBy(() -> reader.read(Optional.empty(), List.of("users.0.username=a", "users.0.password=b", "flight.prot=1")))
                .isInstanceOf(MallardException.class)
                .hasMessageContaining("prot");
    }

    @Test
    void noUsersIsAnError() {
        assertThatThrownBy(() -> reader.read(Optional.empty(), List.of()))
                .hasMessageContaining("users");
    }

    @Test
    void restrictedModesAreReadWithEachUsersFixedClaimsAndLoginClaims() {
        for (String mode : List.of("RESTRICTED", "RESTRICT_READ_ONLY")) {
            ServerConfig config = reader.read(Optional.empty(), List.of("users.0.username=a", "users.0.password=b", "access_mode=" + mode,
                    "users.0.claims.x-dd-table=orders", "users.0.claims.x-dd-filter=tenant = 'abc'", "users.0.login_claims.0=x-dd-variables"));
            assertThat(config.accessMode()).isEqualTo(AccessMode.valueOf(mode));
            assertThat(config.users().get(0).claims()).containsEntry("x-dd-table", "orders").containsEntry("x-dd-filter", "tenant = 'abc'");
            assertThat(config.users().get(0).loginClaims()).containsExactly("x-dd-variables");
        }
    }

    @Test
    void aConfWithoutEqualsSignIsAnArgumentError() {
        assertThatThrownBy(() -> reader.read(Optional.empty(), List.of("http.port")))
                .extracting(e -> ((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_ARGUMENT_INVALID);
    }

    @Test
    void theSecurityKeysAreReadWithTheirDefaults() {
        ServerConfig defaults = reader.read(Optional.empty(), List.of("users.0.username=ada", "users.0.password=pw"));
        assertThat(defaults.fileAccess()).isEqualTo(dev.mallard.server.sql.FileAccess.WAREHOUSE);
        assertThat(defaults.loginLimits()).isEqualTo(ServerConfig.LoginLimits.DEFAULT);
        assertThat(defaults.tokenAlgorithm()).isEqualTo(dev.mallard.server.auth.TokenAlgorithm.HS256);
        ServerConfig given = reader.read(Optional.empty(), List.of("users.0.username=ada", "users.0.password=pw", "file_access=none",
                "login_max_failures=3", "login_failure_window_seconds=60", "jwt_token.algorithm=HS512"));
        assertThat(given.fileAccess()).isEqualTo(dev.mallard.server.sql.FileAccess.NONE);
        assertThat(given.loginLimits()).isEqualTo(new ServerConfig.LoginLimits(3, 60));
        assertThat(given.tokenAlgorithm()).isEqualTo(dev.mallard.server.auth.TokenAlgorithm.HS512);
        assertThatThrownBy(() -> reader.read(Optional.empty(), List.of("users.0.username=ada", "users.0.password=pw", "file_access=some")))
                .isInstanceOf(dev.mallard.core.error.MallardException.class);
    }

    @Test
    void theDatabasesStorageCompatibilityDefaultsToLatestAndAnUnknownReleaseIsRefusedNamingTheKey() {
        List<String> user = List.of("users.0.username=ada", "users.0.password=pw");
        assertThat(reader.read(Optional.empty(), user).storageCompatibility().version()).isEqualTo("latest");
        List<String> v1 = new java.util.ArrayList<>(user);
        v1.add("storage_compatibility=v1.0.0");
        assertThat(reader.read(Optional.empty(), v1).storageCompatibility().version()).isEqualTo("v1.0.0");
        List<String> unknown = new java.util.ArrayList<>(user);
        unknown.add("storage_compatibility=v1.99.0");
        assertThatThrownBy(() -> reader.read(Optional.empty(), unknown))
                .isInstanceOfSatisfying(MallardException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_CONFIG_INVALID))
                .hasMessageContaining("storage_compatibility").hasMessageContaining("v1.99.0");
    }

    @Test
    void aServerCreatesItsDatabaseFileInTheFormatStorageCompatibilityNames() throws Exception {
        ServerConfig config = reader.read(Optional.empty(), List.of("users.0.username=ada", "users.0.password=pw",
                "warehouse=" + dir.resolve("wh"), "database=portable.duckdb", "storage_compatibility=v1.0.0",
                "http.port=0", "flight.port=0", "host=127.0.0.1"));
        try (dev.mallard.server.MallardServer server = dev.mallard.server.MallardServer.start(config)) {
            assertThat(server).isNotNull();
        }
        try (java.sql.Connection connection = java.sql.DriverManager.getConnection("jdbc:duckdb:" + dir.resolve("wh").resolve("portable.duckdb"));
                java.sql.Statement statement = connection.createStatement();
                java.sql.ResultSet rows = statement.executeQuery(
                        "SELECT tags['storage_version'] FROM duckdb_databases() WHERE database_name = 'portable'")) {
            assertThat(rows.next()).isTrue();
            assertThat(rows.getString(1)).isEqualTo("v1.0.0+");
        }
    }
}
