package dev.mallard.server.config;

import static java.util.Objects.requireNonNull;

import dev.mallard.server.auth.PasswordHash;

/** A user who may log in, with the hash of their password. */
public record UserAccount(String username, PasswordHash password) {
    public UserAccount {
        requireNonNull(username, "username is null");
        requireNonNull(password, "password is null");
    }
}
