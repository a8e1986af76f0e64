package dev.mallard.server.auth;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Optional;

/**
 * The HS256 key that signs access tokens: the configured {@code secret_key}, or one generated once and kept in
 * {@code <warehouse>/.mallard/jwt-secret} (owner-only), so tokens stay valid across restarts.
 */
public final class SigningSecret {
    static final String FILE = ".mallard/jwt-secret";
    private static final int MIN_BYTES = 32;

    private SigningSecret() {}

    public static byte[] resolve(Optional<String> configured, Path warehouse) {
        if (configured.isPresent()) {
            byte[] key = configured.get().getBytes(StandardCharsets.UTF_8);
            if (key.length < MIN_BYTES) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID,
                        "secret_key must be at least " + MIN_BYTES + " bytes for HS256; give a longer one or leave it out to have one generated");
            }
            return key;
        }
        Path file = warehouse.resolve(FILE);
        try {
            if (Files.exists(file)) {
                byte[] key = Base64.getDecoder().decode(Files.readString(file, StandardCharsets.US_ASCII).trim());
                if (key.length < MIN_BYTES) {
                    throw new MallardException(ErrorCode.USER_CONFIG_INVALID, file + " holds a key shorter than "
                            + MIN_BYTES + " bytes; delete it to have a new one generated (issued tokens become invalid)");
                }
                return key;
            }
            byte[] key = new byte[MIN_BYTES];
            new SecureRandom().nextBytes(key);
            Files.createDirectories(file.getParent());
            Path temporary = file.resolveSibling("jwt-secret.tmp");
            Files.writeString(temporary, Base64.getEncoder().encodeToString(key) + "\n", StandardCharsets.US_ASCII);
            try {
                Files.setPosixFilePermissions(temporary, PosixFilePermissions.fromString("rw-------"));
            } catch (UnsupportedOperationException e) {
                // Not a POSIX file system: the directory's own permissions protect it.
            }
            Files.move(temporary, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            return key;
        } catch (IOException | IllegalArgumentException e) {
            throw new MallardException(ErrorCode.SYSTEM_IO_FAILED, "cannot read or create the token signing key "
                    + file + ": " + e.getMessage() + "; check the warehouse directory's permissions or set secret_key", e);
        }
    }
}
