// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** DazzleDuck's HOCON configuration read by {@code mallard server}: the keys it maps, and the ones it refuses by name. */
class DazzleDuckConfigTest {
    @TempDir
    Path dir;

    private final ServerConfigReader reader = new ServerConfigReader(ConfigEnvironment.from(Map.of()),
            Map.of("DD_PASSWORD", "s3cret", "DD_TABLE", "t1"));

    private static ErrorCode code(Throwable e) {
        return ((MallardException) e).errorCode();
    }

    @Test
    void aDazzleDuckConfFileIsReadAndItsConfOverridesWin() throws Exception {
        Path script = dir.resolve("startup.sql");
        Files.writeString(script, "CREATE TABLE ${DD_TABLE} AS SELECT 1 AS n;");
        Path file = dir.resolve("server.conf");
        Files.writeString(file, """
                dazzleduck_server {
                  flight_sql { host = "127.0.0.1", port = 59999, use_encryption = false }
                  http { port = 8099, allow-origin = ["https://ui.example.test"], authentication = "jwt" }
                  warehouse = wh
                  access_mode = READ_ONLY
                  secret_key = "VGhpcyBpcyBhIDY0IGJpdCBsb25nIGtleSB3aGljaCBzaG91bGQgYmUgY2hhbmdlZCBpbiBwcm9kdWN0aW9u"
                  users = [{ username = admin, password = ${DD_PASSWORD}, groups = [admin, general] }]
                  jwt_token { expiration = 60m, generation = true }
                  query_timeout_ms = 30000
                  max_query_timeout_ms = 30000
                  startup_script_provider {
                    class = "io.dazzleduck.sql.flight.ConfigBasedStartupScriptProvider"
                    content = "SET threads = 2;"
                    script_location = "startup.sql"
                  }
                }
                """);
        ServerConfig config = reader.read(Optional.of(file), List.of("dazzleduck_server.http.port=8100"));
        assertThat(config.host()).isEqualTo("127.0.0.1");
        assertThat(config.flightPort()).isEqualTo(59999);
        assertThat(config.httpPort()).isEqualTo(8100);
        assertThat(config.allowOrigins()).containsExactly("https://ui.example.test");
        assertThat(config.warehouse()).isEqualTo(dir.resolve("wh"));
        assertThat(config.accessMode()).isEqualTo(AccessMode.READ_ONLY);
        assertThat(config.users()).singleElement().satisfies(user -> {
            assertThat(user.username()).isEqualTo("admin");
            assertThat(user.password().matches("s3cret")).isTrue();
            assertThat(user.groups()).containsExactly("admin", "general");
        });
        assertThat(config.tokenExpiryMinutes()).isEqualTo(60);
        assertThat(config.queryTimeoutSeconds()).isEqualTo(30);
        assertThat(config.tls()).isEmpty();
        assertThat(config.startupSql()).contains("SET threads = 2;\nCREATE TABLE t1 AS SELECT 1 AS n;\n");
        assertThat(config.toString()).doesNotContain("s3cret");
    }

    @Test
    void confOverridesAloneAreADazzleDuckConfiguration() {
        ServerConfig config = reader.read(Optional.empty(), List.of("dazzleduck_server.http.port=0", "dazzleduck_server.flight_sql.port=0",
                "dazzleduck_server.users=[{username=ada,password=pw}]", "dazzleduck_server.max_query_timeout_ms=10000"));
        assertThat(config.httpPort()).isZero();
        assertThat(config.flightPort()).isZero();
        assertThat(config.users()).extracting(UserAccount::username).containsExactly("ada");
        assertThat(config.queryTimeoutSeconds()).isEqualTo(10);
    }

    @Test
    void aDazzleDuckKeyMallardDoesNotServeIsRefusedAsNotSupportedYetByName() {
        for (String key : List.of("flight_sql.service_name=\"mallard\"")) {
            assertThatThrownBy(() -> reader.read(Optional.empty(), List.of("dazzleduck_server.users=[{username=ada,password=pw}]",
                    "dazzleduck_server." + key)))
                    .hasMessageContaining("dazzleduck_server." + key.substring(0, key.indexOf('=')).split("\\.")[0])
                    .hasMessageContaining("not supported yet")
                    .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.USER_CONFIG_UNSUPPORTED));
        }
    }

    @Test
    void namedQueryTableIsReadAsMallardsKeyOfTheSameName() {
        ServerConfig config = reader.read(Optional.empty(), List.of("dazzleduck_server.users=[{username=ada,password=pw}]",
                "dazzleduck_server.named_query_table=\"app.named_queries\""));
        assertThat(config.namedData().namedQueryTable()).contains("app.named_queries");
    }

    @Test
    void loginUrlDelegatesLoginsAndNeedsNoUsers() {
        ServerConfig config = reader.read(Optional.empty(), List.of("dazzleduck_server.login_url=\"http://127.0.0.1:9/login\""));
        assertThat(config.plan().loginUrl()).hasValue(java.net.URI.create("http://127.0.0.1:9/login"));
        assertThat(config.users()).isEmpty();
        assertThatThrownBy(() -> reader.read(Optional.empty(), List.of("dazzleduck_server.login_url=\"ftp://127.0.0.1/login\"")))
                .hasMessageContaining("login_url")
                .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.USER_CONFIG_INVALID));
    }

    @Test
    void dataProcessorLocationsBecomeTheFlightLocationsOfSplitPlans() {
        ServerConfig config = reader.read(Optional.empty(), List.of("dazzleduck_server.users=[{username=ada,password=pw}]",
                "dazzleduck_server.flight_sql.data_processor_locations=[{host=worker-1, port=59307}, {host=worker-2, port=443, use_encryption=true}]"));
        assertThat(config.plan().dataProcessorLocations()).extracting(Object::toString)
                .containsExactly("grpc+tcp://worker-1:59307", "grpc+tls://worker-2:443");
        assertThatThrownBy(() -> reader.read(Optional.empty(), List.of("dazzleduck_server.users=[{username=ada,password=pw}]",
                "dazzleduck_server.flight_sql.data_processor_locations=[{host=worker-1, port=59307, weight=2}]")))
                .hasMessageContaining("dazzleduck_server.flight_sql.data_processor_locations.0.weight")
                .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.USER_CONFIG_UNKNOWN_KEY));
    }

    @Test
    void aKeyMallardDoesNotImplementIsAnErrorNamingIt() {
        assertThatThrownBy(() -> reader.read(Optional.empty(), List.of("dazzleduck_server.users=[{username=ada,password=pw}]",
                "dazzleduck_server.cursor_ttl_ms=60000")))
                .hasMessageContaining("dazzleduck_server.cursor_ttl_ms")
                .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.USER_CONFIG_UNKNOWN_KEY));
        assertThatThrownBy(() -> reader.read(Optional.empty(), List.of("dazzleduck_server.users=[{username=ada,password=pw}]",
                "dazzleduck_server.http.compression=true")))
                .hasMessageContaining("dazzleduck_server.http.compression");
        assertThatThrownBy(() -> reader.read(Optional.empty(), List.of("dazzleduck_server.users=[{username=ada,password=pw}]", "http.port=1")))
                .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.USER_CONFIG_INVALID));
    }

    @Test
    void anUndefinedVariableInTheStartupScriptIsAnErrorNamingIt() throws Exception {
        Path script = dir.resolve("startup.sql");
        Files.writeString(script, "SELECT '${NOT_SET}';");
        assertThatThrownBy(() -> reader.read(Optional.empty(), List.of("dazzleduck_server.users=[{username=ada,password=pw}]",
                "dazzleduck_server.startup_script_provider.script_location=\"" + script + "\"")))
                .hasMessageContaining("${NOT_SET}")
                .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.USER_CONFIG_TEMPLATE_UNDEFINED));
    }

    @Test
    void encryptionWithoutACertificateAndKeyIsAnError() {
        assertThatThrownBy(() -> reader.read(Optional.empty(), List.of("dazzleduck_server.users=[{username=ada,password=pw}]",
                "dazzleduck_server.flight_sql.use_encryption=true")))
                .hasMessageContaining("dazzleduck_server.server_cert").hasMessageContaining("dazzleduck_server.keystore");
    }

    @Test
    void differentDefaultAndMaximumTimeoutsAreRefusedNamingBoth() {
        assertThatThrownBy(() -> reader.read(Optional.empty(), List.of("dazzleduck_server.users=[{username=ada,password=pw}]",
                "dazzleduck_server.query_timeout_ms=120000", "dazzleduck_server.max_query_timeout_ms=10000")))
                .hasMessageContaining("query_timeout_ms").hasMessageContaining("max_query_timeout_ms");
    }
}
