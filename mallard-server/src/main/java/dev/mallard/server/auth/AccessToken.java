// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.auth;

import static java.util.Objects.requireNonNull;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/**
 * A verified access token.
 *
 * @param sessionId the token's id ({@code jti}, or a digest of a token without one): every call carrying this token
 *     shares one DuckDB session
 * @param claims the extra claims given at login
 * @param generation the user's password generation the token was issued under; empty for a token minted elsewhere
 *     (DazzleDuck) with the same key
 */
public record AccessToken(String username, String sessionId, Instant expiresAt, Map<String, Object> claims, Optional<String> generation) {
    public AccessToken {
        requireNonNull(username, "username is null");
        requireNonNull(sessionId, "sessionId is null");
        requireNonNull(expiresAt, "expiresAt is null");
        claims = Map.copyOf(claims);
        requireNonNull(generation, "generation is null");
    }

    public AccessToken(String username, String sessionId, Instant expiresAt, Map<String, Object> claims) {
        this(username, sessionId, expiresAt, claims, Optional.empty());
    }
}
