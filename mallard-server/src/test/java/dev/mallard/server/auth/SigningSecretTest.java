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
    Path warehouse;

    @Test
    void aGeneratedSecretIsKeptSoTokensSurviveARestart() throws Exception {
        byte[] first = SigningSecret.resolve(Optional.empty(), warehouse);
        String token = new TokenService(first, Duration.ofHours(1), Clock.systemUTC()).issue("ada", Map.of());
        byte[] second = SigningSecret.resolve(Optional.empty(), warehouse);
        assertThat(second).isEqualTo(first);
        assertThat(new TokenService(second, Duration.ofHours(1), Clock.systemUTC()).verify(token).username()).isEqualTo("ada");
        Path file = warehouse.resolve(SigningSecret.FILE);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
    }

    @Test
    void aShortConfiguredSecretIsRefused() {
        assertThatThrownBy(() -> SigningSecret.resolve(Optional.of("short"), warehouse))
                .hasMessageContaining("secret_key must be at least 32 bytes")
                .hasMessageNotContaining("short");
    }
}
