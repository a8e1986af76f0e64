package dev.mallard.server.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TokenServiceTest {
    private static final byte[] SECRET = "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.UTF_8);
    private static final Instant NOW = Instant.parse("2026-11-29T12:00:00Z");

    private static TokenService at(Instant instant) {
        return new TokenService(SECRET, Duration.ofMinutes(60), Clock.fixed(instant, ZoneOffset.UTC));
    }

    @Test
    void anIssuedTokenVerifiesWithItsUserClaimsAndAFreshSessionId() {
        TokenService tokens = at(NOW);
        AccessToken first = tokens.verify(tokens.issue("ada", Map.of("tenant", "acme")));
        AccessToken second = tokens.verify(tokens.issue("ada", Map.of()));
        assertThat(first.username()).isEqualTo("ada");
        assertThat(first.claims()).containsEntry("tenant", "acme").doesNotContainKeys("sub", "jti", "exp");
        assertThat(first.expiresAt()).isEqualTo(NOW.plus(Duration.ofMinutes(60)));
        assertThat(first.sessionId()).isNotEqualTo(second.sessionId());
    }

    @Test
    void anExpiredTokenIsRefused() {
        String token = at(NOW).issue("ada", Map.of());
        assertThatThrownBy(() -> at(NOW.plus(Duration.ofMinutes(61))).verify(token))
                .isInstanceOf(MallardException.class)
                .hasMessageContaining("expired")
                .extracting(e -> ((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_AUTH_FAILED);
    }

    @Test
    void aTokenVerifiedBeforeIsRefusedOnceItExpires() {
        Instant[] now = {NOW};
        Clock clock = new Clock() {
            @Override
            public java.time.ZoneId getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(java.time.ZoneId zone) {
                return this;
            }

            @Override
            public Instant instant() {
                return now[0];
            }
        };
        TokenService tokens = new TokenService(SECRET, Duration.ofMinutes(60), clock);
        String token = tokens.issue("ada", Map.of());
        assertThat(tokens.verify(token).username()).isEqualTo("ada");
        assertThat(tokens.verify(token).username()).isEqualTo("ada");
        now[0] = NOW.plus(Duration.ofMinutes(61));
        assertThatThrownBy(() -> tokens.verify(token)).isInstanceOf(MallardException.class).hasMessageContaining("expired");
        assertThatThrownBy(() -> tokens.verify(token)).isInstanceOf(MallardException.class).hasMessageContaining("expired");
    }

    @Test
    void aTokenSignedWithAnotherKeyIsRefused() {
        TokenService other = new TokenService("another-secret-another-secret-xx".getBytes(StandardCharsets.UTF_8),
                Duration.ofMinutes(60), Clock.fixed(NOW, ZoneOffset.UTC));
        String token = other.issue("ada", Map.of());
        assertThatThrownBy(() -> at(NOW).verify(token)).hasMessageContaining("signature does not match");
    }

    @Test
    void aTokenWithAChangedPayloadIsRefused() {
        String token = at(NOW).issue("ada", Map.of());
        String[] parts = token.split("\\.");
        String forgedPayload = java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(
                new String(java.util.Base64.getUrlDecoder().decode(parts[1]), StandardCharsets.UTF_8).replace("ada", "eve").getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> at(NOW).verify(parts[0] + "." + forgedPayload + "." + parts[2])).hasMessageContaining("signature does not match");
    }

    @Test
    void garbageIsRefusedWithoutEchoingIt() {
        assertThatThrownBy(() -> at(NOW).verify("not-a-jwt")).hasMessage("the access token is not a JWT");
    }

    @Test
    void reservedClaimsCannotBeGivenAtLogin() {
        assertThatThrownBy(() -> at(NOW).issue("ada", Map.of("sub", "root"))).hasMessageContaining("'sub' is set by the server");
    }
}
