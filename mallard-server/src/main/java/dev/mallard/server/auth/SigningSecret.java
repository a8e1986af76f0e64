// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.auth;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Optional;

/**
 * The key that signs access tokens: the configured {@code secret_key}, or one generated once and kept beside the
 * warehouse in {@code <warehouse>.mallard/jwt-secret} (owner-only), so tokens stay valid across restarts. It is kept
 * outside the warehouse because SQL may read the warehouse ({@code file_access: warehouse}); a key an earlier version
 * kept in {@code <warehouse>/.mallard/jwt-secret} is moved there.
 */
public final class SigningSecret {
    static final String LEGACY_FILE = ".mallard/jwt-secret";
    static final String DIRECTORY_SUFFIX = ".mallard";
    static final String FILE = "jwt-secret";

    private SigningSecret() {}

    /** Where a generated key of {@code warehouse} is kept. */
    public static Path file(Path warehouse) {
        Path absolute = warehouse.toAbsolutePath().normalize();
        return absolute.resolveSibling(absolute.getFileName() + DIRECTORY_SUFFIX).resolve(FILE);
    }

    public static byte[] resolve(Optional<String> configured, Path warehouse) {
        return resolve(configured, warehouse, TokenAlgorithm.DEFAULT);
    }

    public static byte[] resolve(Optional<String> configured, Path warehouse, TokenAlgorithm algorithm) {
        if (configured.isPresent()) {
            return algorithm.key(configured.get());
        }
        Path file = file(warehouse);
        try {
            Path legacy = warehouse.resolve(LEGACY_FILE);
            if (!Files.exists(file) && Files.exists(legacy)) {
                Files.createDirectories(file.getParent());
                Files.move(legacy, file, StandardCopyOption.ATOMIC_MOVE);
            }
            if (Files.exists(file)) {
                byte[] key = Base64.getDecoder().decode(Files.readString(file, StandardCharsets.US_ASCII).trim());
                if (key.length < algorithm.minKeyBytes()) {
                    throw new MallardException(ErrorCode.USER_CONFIG_INVALID, file + " holds a key shorter than " + algorithm.minKeyBytes()
                            + " bytes, which " + algorithm + " needs; delete it to have a new one generated (issued tokens become invalid)");
                }
                return key;
            }
            byte[] key = new byte[TokenAlgorithm.HS512.minKeyBytes()];
            new SecureRandom().nextBytes(key);
            Files.createDirectories(file.getParent());
            restrict(file.getParent(), "rwx------");
            Path temporary = file.resolveSibling(FILE + ".tmp");
            Files.writeString(temporary, Base64.getEncoder().encodeToString(key) + "\n", StandardCharsets.US_ASCII);
            restrict(temporary, "rw-------");
            Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE);
            return key;
        } catch (IOException | IllegalArgumentException e) {
            throw new MallardException(ErrorCode.SYSTEM_IO_FAILED, "cannot read or create the token signing key "
                    + file + ": " + e.getMessage() + "; check the permissions of the warehouse's parent directory or set secret_key", e);
        }
    }

    private static void restrict(Path path, String permissions) throws IOException {
        try {
            Files.setPosixFilePermissions(path, PosixFilePermissions.fromString(permissions));
        } catch (UnsupportedOperationException e) {
            // Not a POSIX file system: the directory's own permissions protect it.
        }
    }
}
