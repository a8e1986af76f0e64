// SPDX-License-Identifier: Apache-2.0
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

    private static final UserDirectory USERS = users("lovelace");

    static UserDirectory users(String adasPassword) {
        return new UserDirectory(java.util.List.of(new dev.mallard.server.config.UserAccount("ada", PasswordHash.of(adasPassword)),
                new dev.mallard.server.config.UserAccount("eve", PasswordHash.of("eve's password"))));
    }

    private static TokenService at(Instant instant) {
        return new TokenService(SECRET, TokenAlgorithm.HS256, Duration.ofMinutes(60), Clock.fixed(instant, ZoneOffset.UTC), USERS);
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
        TokenService tokens = new TokenService(SECRET, TokenAlgorithm.HS256, Duration.ofMinutes(60), clock, USERS);
        String token = tokens.issue("ada", Map.of());
        assertThat(tokens.verify(token).username()).isEqualTo("ada");
        assertThat(tokens.verify(token).username()).isEqualTo("ada");
        now[0] = NOW.plus(Duration.ofMinutes(61));
        assertThatThrownBy(() -> tokens.verify(token)).isInstanceOf(MallardException.class).hasMessageContaining("expired");
        assertThatThrownBy(() -> tokens.verify(token)).isInstanceOf(MallardException.class).hasMessageContaining("expired");
    }

    @Test
    void aTokenSignedWithAnotherKeyIsRefused() {
        TokenService other = new TokenService("another-secret-another-secret-xx".getBytes(StandardCharsets.UTF_8), TokenAlgorithm.HS256,
                Duration.ofMinutes(60), Clock.fixed(NOW, ZoneOffset.UTC), USERS);
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

    @Test
    void aTokenForAUserWhoIsNotConfiguredIsRefused() {
        TokenService everyone = new TokenService(SECRET, TokenAlgorithm.HS256, Duration.ofMinutes(60), Clock.fixed(NOW, ZoneOffset.UTC),
                new UserDirectory(java.util.List.of(new dev.mallard.server.config.UserAccount("mallory", PasswordHash.of("x")))));
        String neverConfigured = everyone.issue("mallory", Map.of());
        assertThatThrownBy(() -> at(NOW).verify(neverConfigured)).hasMessageContaining("not configured")
                .extracting(e -> ((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_AUTH_FAILED);
        String adas = at(NOW).issue("ada", Map.of());
        TokenService adaRemoved = new TokenService(SECRET, TokenAlgorithm.HS256, Duration.ofMinutes(60), Clock.fixed(NOW, ZoneOffset.UTC),
                new UserDirectory(java.util.List.of(new dev.mallard.server.config.UserAccount("eve", PasswordHash.of("eve's password")))));
        assertThatThrownBy(() -> adaRemoved.verify(adas)).hasMessageContaining("not configured");
    }

    @Test
    void aChangedPasswordEndsTheTokensIssuedBeforeAndTheSamePasswordKeepsThem() {
        String token = at(NOW).issue("ada", Map.of());
        TokenService restartedSamePassword = new TokenService(SECRET, TokenAlgorithm.HS256, Duration.ofMinutes(60), Clock.fixed(NOW, ZoneOffset.UTC),
                users("lovelace"));
        assertThat(restartedSamePassword.verify(token).username()).isEqualTo("ada");
        TokenService restartedNewPassword = new TokenService(SECRET, TokenAlgorithm.HS256, Duration.ofMinutes(60), Clock.fixed(NOW, ZoneOffset.UTC),
                users("babbage"));
        assertThatThrownBy(() -> restartedNewPassword.verify(token)).hasMessageContaining("password").hasMessageContaining("changed");
        assertThat(restartedNewPassword.verify(restartedNewPassword.issue("ada", Map.of())).username()).isEqualTo("ada");
    }

    @Test
    void aTokenExpiringFurtherAheadThanTheServerIssuesIsRefused() {
        TokenService longLived = new TokenService(SECRET, TokenAlgorithm.HS256, Duration.ofDays(3650), Clock.fixed(NOW, ZoneOffset.UTC), USERS);
        String token = longLived.issue("ada", Map.of());
        assertThatThrownBy(() -> at(NOW).verify(token)).hasMessageContaining("further ahead");
    }

    @Test
    void claimsLargerThanTheBoundAreRefusedAtLogin() {
        Map<String, Object> huge = Map.of("blob", "x".repeat(TokenService.MAX_CLAIMS_BYTES));
        assertThatThrownBy(() -> at(NOW).issue("ada", huge))
                .hasMessageContaining("bytes as JSON")
                .extracting(e -> ((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_ARGUMENT_INVALID);
        assertThat(at(NOW).verify(at(NOW).issue("ada", Map.of("tenant", "x".repeat(1000)))).claims()).containsKey("tenant");
    }

    @Test
    void anHs512TokenMintedElsewhereWithTheSameBase64KeyIsAcceptedAndOursVerifyThere() throws Exception {
        byte[] key = new byte[64];
        new java.security.SecureRandom().nextBytes(key);
        String base64 = java.util.Base64.getEncoder().encodeToString(key);
        TokenService tokens = new TokenService(TokenAlgorithm.HS512.key(base64), TokenAlgorithm.HS512, Duration.ofMinutes(60),
                Clock.fixed(NOW, ZoneOffset.UTC), USERS);
        // Minted as another server would with the same key: subject and expiry, no jti, no generation, no issuer.
        com.nimbusds.jwt.SignedJWT foreign = new com.nimbusds.jwt.SignedJWT(new com.nimbusds.jose.JWSHeader(com.nimbusds.jose.JWSAlgorithm.HS512),
                new com.nimbusds.jwt.JWTClaimsSet.Builder().subject("ada").issueTime(java.util.Date.from(NOW))
                        .expirationTime(java.util.Date.from(NOW.plusSeconds(600))).claim("database", "memory").build());
        foreign.sign(new com.nimbusds.jose.crypto.MACSigner(java.util.Base64.getDecoder().decode(base64)));
        AccessToken accepted = tokens.verify(foreign.serialize());
        assertThat(accepted.username()).isEqualTo("ada");
        assertThat(accepted.claims()).containsEntry("database", "memory");
        assertThat(accepted.sessionId()).isEqualTo(tokens.verify(foreign.serialize()).sessionId());
        // Ours, checked as another server would: HS512 under the base64-decoded key.
        com.nimbusds.jwt.SignedJWT ours = com.nimbusds.jwt.SignedJWT.parse(tokens.issue("ada", Map.of()));
        assertThat(ours.getHeader().getAlgorithm()).isEqualTo(com.nimbusds.jose.JWSAlgorithm.HS512);
        assertThat(ours.verify(new com.nimbusds.jose.crypto.MACVerifier(key))).isTrue();
        assertThat(ours.getJWTClaimsSet().getSubject()).isEqualTo("ada");
        // An HS256 token under the same key is refused: the algorithm is the server's, never the token's.
        com.nimbusds.jwt.SignedJWT downgraded = new com.nimbusds.jwt.SignedJWT(new com.nimbusds.jose.JWSHeader(com.nimbusds.jose.JWSAlgorithm.HS256),
                new com.nimbusds.jwt.JWTClaimsSet.Builder().subject("ada").expirationTime(java.util.Date.from(NOW.plusSeconds(600))).build());
        downgraded.sign(new com.nimbusds.jose.crypto.MACSigner(key));
        assertThatThrownBy(() -> tokens.verify(downgraded.serialize())).hasMessageContaining("HS512");
    }
}
