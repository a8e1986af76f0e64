// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.ingest;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;

/** Resolves a queue's configured path inside the warehouse, refusing every way out of it. */
final class WarehousePaths {
    private WarehousePaths() {}

    /**
     * The queue's directory, created if missing. Refused with {@code user.ingest.path_invalid}: an absolute path, a
     * {@code ..} segment, and a path that, symlinks followed, ends outside the warehouse.
     */
    static Path resolve(Path warehouse, String queue, String configured) {
        Path relative;
        try {
            relative = Path.of(configured);
        } catch (InvalidPathException e) {
            throw invalid(queue, configured, "it is not a path");
        }
        if (configured.isBlank() || relative.isAbsolute() || configured.startsWith("/") || configured.startsWith("\\")) {
            throw invalid(queue, configured, "give a path relative to the warehouse");
        }
        for (Path segment : relative) {
            if (segment.toString().equals("..")) {
                throw invalid(queue, configured, "'..' would leave the warehouse");
            }
        }
        try {
            Files.createDirectories(warehouse);
            Path root = warehouse.toRealPath();
            Path target = root.resolve(relative).normalize();
            Files.createDirectories(target);
            Path real = target.toRealPath();
            if (!real.startsWith(root)) {
                throw invalid(queue, configured, "a symlink takes it to " + real + ", outside the warehouse " + root);
            }
            // The path as configured (not the real one): DuckDB's allowed_directories names the warehouse so.
            return warehouse.toAbsolutePath().normalize().resolve(relative).normalize();
        } catch (IOException e) {
            throw new MallardException(ErrorCode.SYSTEM_IO_FAILED, "cannot create ingestion queue " + queue + "'s directory " + configured
                    + " in the warehouse " + warehouse + ": " + e.getMessage(), e);
        }
    }

    private static MallardException invalid(String queue, String path, String why) {
        return new MallardException(ErrorCode.USER_INGEST_PATH_INVALID, "ingestion queue " + queue + " path " + path + ": " + why);
    }
}
