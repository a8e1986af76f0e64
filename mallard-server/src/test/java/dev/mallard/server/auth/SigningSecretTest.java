// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SigningSecretTest {
    @TempDir
    Path root;
    Path warehouse;

    @org.junit.jupiter.api.BeforeEach
    void warehouse() {
        warehouse = root.resolve("warehouse");
    }

    @Test
    void aGeneratedSecretIsKeptSoTokensSurviveARestart() throws Exception {
        byte[] first = SigningSecret.resolve(Optional.empty(), warehouse);
        String token = new TokenService(first, TokenAlgorithm.HS256, Duration.ofHours(1), Clock.systemUTC(), TokenServiceTest.users("lovelace")).issue("ada", Map.of());
        byte[] second = SigningSecret.resolve(Optional.empty(), warehouse);
        assertThat(second).isEqualTo(first);
        assertThat(new TokenService(second, TokenAlgorithm.HS256, Duration.ofHours(1), Clock.systemUTC(), TokenServiceTest.users("lovelace")).verify(token).username()).isEqualTo("ada");
        Path file = SigningSecret.file(warehouse);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
        assertThat(file.startsWith(warehouse.toAbsolutePath())).isFalse();
    }

    @Test
    void aKeyKeptInsideTheWarehouseByAnEarlierVersionIsMovedOutOfIt() throws Exception {
        byte[] key = new byte[32];
        new java.security.SecureRandom().nextBytes(key);
        Path legacy = warehouse.resolve(SigningSecret.LEGACY_FILE);
        Files.createDirectories(legacy.getParent());
        Files.writeString(legacy, java.util.Base64.getEncoder().encodeToString(key));
        assertThat(SigningSecret.resolve(Optional.empty(), warehouse)).isEqualTo(key);
        assertThat(legacy).doesNotExist();
        assertThat(SigningSecret.file(warehouse)).exists();
    }

    @Test
    void anHs512SecretIsReadAsBase64() {
        byte[] key = new byte[64];
        new java.security.SecureRandom().nextBytes(key);
        assertThat(SigningSecret.resolve(Optional.of(java.util.Base64.getEncoder().encodeToString(key)), warehouse, TokenAlgorithm.HS512)).isEqualTo(key);
        assertThatThrownBy(() -> SigningSecret.resolve(Optional.of("not base64 at all, but long enough to pass as a key!!"), warehouse,
                TokenAlgorithm.HS512)).hasMessageContaining("not base64");
    }

    @Test
    void aShortConfiguredSecretIsRefused() {
        assertThatThrownBy(() -> SigningSecret.resolve(Optional.of("short"), warehouse))
                .hasMessageContaining("secret_key must be at least 32 bytes")
                .hasMessageNotContaining("short");
    }
}
