// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink.iceberg;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;

/**
 * Iceberg's file access for a warehouse on the local file system ({@code file:///...} or a plain path), so the
 * sink needs no Hadoop: Iceberg's catalog loads it by name ({@code io-impl}), hence public with a no-argument
 * constructor.
 */
public final class LocalFileIO implements FileIO {
    public LocalFileIO() {}

    /** The local file a warehouse location names: {@code file:/x}, {@code file:///x} or {@code /x}. */
    static Path path(String location) {
        if (location.startsWith("file:")) {
            return Path.of(URI.create(location.startsWith("file://") || location.startsWith("file:/") ? location : "file:" + location));
        }
        return Path.of(location);
    }

    @Override
    public InputFile newInputFile(String location) {
        return org.apache.iceberg.Files.localInput(file(location));
    }

    @Override
    public OutputFile newOutputFile(String location) {
        return org.apache.iceberg.Files.localOutput(file(location));
    }

    @Override
    public void deleteFile(String location) {
        try {
            Files.deleteIfExists(path(location));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + location, e);
        }
    }

    private static File file(String location) {
        return path(location).toFile();
    }
}
