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
 */
public record UserAccount(String username, PasswordHash password, Map<String, Object> claims, List<String> loginClaims) {
    public UserAccount {
        requireNonNull(username, "username is null");
        requireNonNull(password, "password is null");
        claims = Map.copyOf(claims);
        loginClaims = List.copyOf(loginClaims);
    }

    public UserAccount(String username, PasswordHash password) {
        this(username, password, Map.of(), List.of());
    }
}
