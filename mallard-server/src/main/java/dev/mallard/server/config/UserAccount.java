// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.config;

import static java.util.Objects.requireNonNull;

import dev.mallard.server.auth.PasswordHash;
import java.util.List;
import java.util.Map;

/**
 * A user who may log in, with the hash of their password.
 *
 * @param claims row-level security claims the user's tokens always carry, which a login cannot change
 * @param loginClaims the row-level security claims a login may give for this user (under RESTRICTED and
 *     RESTRICT_READ_ONLY, any other is refused)
 * @param groups DazzleDuck's {@code users[].groups}: the groups the user belongs to (empty when none were given)
 * @param loginPaths the path prefixes a {@code path} grant given at login may name ({@code users.N.login_paths}); DuckDB's
 *     {@code allowed_directories} admits them as it admits the fixed grants
 */
public record UserAccount(String username, PasswordHash password, Map<String, Object> claims, List<String> loginClaims, List<String> groups,
        List<String> loginPaths) {
    public UserAccount {
        requireNonNull(username, "username is null");
        requireNonNull(password, "password is null");
        claims = Map.copyOf(claims);
        loginClaims = List.copyOf(loginClaims);
        groups = List.copyOf(groups);
        loginPaths = List.copyOf(loginPaths);
    }

    public UserAccount(String username, PasswordHash password, Map<String, Object> claims, List<String> loginClaims, List<String> groups) {
        this(username, password, claims, loginClaims, groups, List.of());
    }

    public UserAccount(String username, PasswordHash password, Map<String, Object> claims, List<String> loginClaims) {
        this(username, password, claims, loginClaims, List.of());
    }

    public UserAccount(String username, PasswordHash password) {
        this(username, password, Map.of(), List.of());
    }
}
