// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.auth;

import static java.util.Objects.requireNonNull;

import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;

/** A salted PBKDF2-HMAC-SHA256 hash of a password; the password itself is never kept. */
public final class PasswordHash {
    private static final String ALGORITHM = "PBKDF2WithHmacSHA256";
    private static final int ITERATIONS = 100_000;
    private static final int KEY_BITS = 256;
    private static final SecureRandom RANDOM = new SecureRandom();

    /** The salt of the generation: fixed, so the same password gives the same generation across restarts. */
    private static final byte[] GENERATION_SALT = "mallard token generation".getBytes(java.nio.charset.StandardCharsets.UTF_8);

    private final byte[] salt;
    private final byte[] hash;
    private final byte[] generation;

    private PasswordHash(byte[] salt, byte[] hash, byte[] generation) {
        this.salt = salt;
        this.hash = hash;
        this.generation = generation;
    }

    public static PasswordHash of(String password) {
        requireNonNull(password, "password is null");
        byte[] salt = new byte[16];
        RANDOM.nextBytes(salt);
        return new PasswordHash(salt, derive(password, salt), derive(password, GENERATION_SALT));
    }

    /**
     * A value that changes when the password changes and is the same across restarts: tokens carry an HMAC of it
     * under the signing key (never the value itself), so a changed password ends the tokens issued before.
     */
    byte[] generation() {
        return generation.clone();
    }

    /** Compares in constant time. */
    public boolean matches(String password) {
        return password != null && MessageDigest.isEqual(hash, derive(password, salt));
    }

    private static byte[] derive(String password, byte[] salt) {
        PBEKeySpec spec = new PBEKeySpec(password.toCharArray(), salt, ITERATIONS, KEY_BITS);
        try {
            return SecretKeyFactory.getInstance(ALGORITHM).generateSecret(spec).getEncoded();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK lacks " + ALGORITHM, e);
        } finally {
            spec.clearPassword();
        }
    }

    @Override
    public String toString() {
        return "PasswordHash[" + ALGORITHM + "]";
    }
}
