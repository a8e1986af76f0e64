// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Every Java source of the checkout, in every module, starts with the SPDX line of the project's licence (LICENSE,
 * Apache-2.0). The test runs in the first module built, so a source added without the line fails the build early.
 */
class LicenseHeadersTest {
    static final String HEADER = "// SPDX-License-Identifier: Apache-2.0";
    private static final String FIX = "git ls-files --cached --others --exclude-standard '*.java' | xargs grep -L '^" + HEADER + "$' | xargs -r sed -i '1i " + HEADER + "'";
    private static final Set<String> NOT_SOURCES = Set.of("target", "node_modules", ".git", ".mallard");

    @Test
    void everyJavaSourceStartsWithTheSpdxLicenceLine() throws IOException {
        Path root = Path.of("..").toAbsolutePath().normalize();
        assertThat(root.resolve("LICENSE")).as("the checkout's root").isRegularFile();
        List<Path> sources = new ArrayList<>();
        Files.walkFileTree(root, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attributes) {
                return NOT_SOURCES.contains(dir.getFileName().toString()) ? FileVisitResult.SKIP_SUBTREE : FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) {
                if (file.getFileName().toString().endsWith(".java")) {
                    sources.add(root.relativize(file));
                }
                return FileVisitResult.CONTINUE;
            }
        });
        assertThat(sources).as("this test's own source is among those checked")
                .contains(Path.of("mallard-core/src/test/java/dev/mallard/core/LicenseHeadersTest.java"));
        List<Path> missing = sources.stream().filter(source -> !HEADER.equals(firstLine(root.resolve(source)))).sorted().toList();
        assertThat(missing).as("sources whose first line is not '" + HEADER + "'; from the root, add it with: " + FIX).isEmpty();
    }

    private static String firstLine(Path file) {
        try (BufferedReader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            return reader.readLine();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
