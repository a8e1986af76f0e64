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

    private final byte[] salt;
    private final byte[] hash;

    private PasswordHash(byte[] salt, byte[] hash) {
        this.salt = salt;
        this.hash = hash;
    }

    public static PasswordHash of(String password) {
        requireNonNull(password, "password is null");
        byte[] salt = new byte[16];
        RANDOM.nextBytes(salt);
        return new PasswordHash(salt, derive(password, salt));
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
