package dev.mallard.server.auth;

import static java.util.Objects.requireNonNull;

import java.time.Instant;
import java.util.Map;

/**
 * A verified access token.
 *
 * @param sessionId the token's id ({@code jti}): every call carrying this token shares one DuckDB session
 * @param claims the extra claims given at login
 */
public record AccessToken(String username, String sessionId, Instant expiresAt, Map<String, Object> claims) {
    public AccessToken {
        requireNonNull(username, "username is null");
        requireNonNull(sessionId, "sessionId is null");
        requireNonNull(expiresAt, "expiresAt is null");
        claims = Map.copyOf(claims);
    }
}
