package dev.mallard.server.config;

import static java.util.Objects.requireNonNull;

import dev.mallard.server.auth.PasswordHash;
import java.util.List;

/**
 * A user who may log in, with the hash of their password.
 *
 * @param groups DazzleDuck's {@code users[].groups}: the groups the user belongs to (empty when none were given)
 */
public record UserAccount(String username, PasswordHash password, List<String> groups) {
    public UserAccount(String username, PasswordHash password) {
        this(username, password, List.of());
    }

    public UserAccount {
        requireNonNull(username, "username is null");
        requireNonNull(password, "password is null");
        groups = List.copyOf(groups);
    }
}
