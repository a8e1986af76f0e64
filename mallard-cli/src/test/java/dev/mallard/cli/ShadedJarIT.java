// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.JarFile;
import java.util.zip.ZipEntry;
import org.junit.jupiter.api.Test;

/**
 * The runnable jar keeps what Helidon discovers at run time: the merged ServiceLoader files and one
 * metadata manifest listing every module's registry files. Without the merged manifest Helidon still
 * starts, but only after scanning every entry of the jar.
 */
class ShadedJarIT {
    private static final Path JAR = Path.of("target", "mallard.jar");
    private static final String MANIFEST = "META-INF/helidon/manifest";

    private static String read(JarFile jar, String name) throws IOException {
        ZipEntry entry = jar.getEntry(name);
        assertThat(entry).as(name).isNotNull();
        try (InputStream in = jar.getInputStream(entry)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void everyHelidonModulesMetadataIsListedInOneMergedManifest() throws IOException {
        try (JarFile jar = new JarFile(JAR.toFile())) {
            String manifest = read(jar, MANIFEST);
            List<String> metadata = jar.stream()
                    .map(ZipEntry::getName)
                    .filter(name -> name.matches("META-INF/helidon/[^/]+/(service-registry\\.json|service\\.loader|feature-registry\\.json)"))
                    .toList();
            assertThat(metadata).as("Helidon module metadata in the jar").hasSizeGreaterThan(5);
            assertThat(manifest.lines().filter(line -> line.equals("#HELIDON MANIFEST#")).count()).isGreaterThan(1);
            assertThat(manifest.lines()).containsAll(metadata);
        }
    }

    @Test
    void theHttp1ConnectionProviderIsRegisteredForTheServiceLoader() throws IOException {
        try (JarFile jar = new JarFile(JAR.toFile())) {
            assertThat(read(jar, "META-INF/services/io.helidon.webserver.spi.ServerConnectionSelectorProvider"))
                    .contains("io.helidon.webserver.http1.Http1ConnectionProvider");
        }
    }

    @Test
    void theJarCarriesExactlyOneArrowAllocationManager() throws IOException {
        try (JarFile jar = new JarFile(JAR.toFile())) {
            List<String> factories = jar.stream()
                    .map(ZipEntry::getName)
                    .filter(name -> name.matches("org/apache/arrow/memory/[a-z]+/DefaultAllocationManagerFactory\\.class"))
                    .toList();
            assertThat(factories).containsExactly("org/apache/arrow/memory/unsafe/DefaultAllocationManagerFactory.class");
        }
    }
}
