// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * No DuckDB 1.x binary is available here, so a file's format is read two ways DuckDB 2.0 itself offers: the
 * {@code storage_version} tag of {@code duckdb_databases()}, and the version number in the file's header (DuckDB
 * 1.x opens a file whose header says 64; DuckDB 2.0's own format says 999).
 */
class StorageCompatibilityTest {
    @TempDir
    Path dir;

    @Test
    void aFileCreatedForDuckDbOneReportsTheOneFormatAndTheHeaderDuckDbOneReads() throws Exception {
        Path file = dir.resolve("v1.duckdb");
        try (Engine engine = Engine.onFile(file, StorageCompatibility.of("v1.0.0", "storage_compatibility"))) {
            execute(engine, "CREATE TABLE t AS SELECT 1 AS a");
            assertThat(engine.storageVersion()).contains("v1.0.0+");
        }
        assertThat(headerVersion(file)).isEqualTo(64);
        try (Engine reopened = Engine.onFile(file)) {
            assertThat(reopened.storageVersion()).contains("v1.0.0+");
        }
    }

    @Test
    void theDefaultIsDuckDbsOwnForANewFileTheTwoFormat() throws Exception {
        Path file = dir.resolve("latest.duckdb");
        try (Engine engine = Engine.onFile(file)) {
            execute(engine, "CREATE TABLE t AS SELECT 1 AS a");
            assertThat(engine.storageVersion()).contains("v2.0.0+");
        }
        assertThat(StorageCompatibility.DEFAULT.version()).isEqualTo("latest");
        assertThat(headerVersion(file)).isNotEqualTo(64);
    }

    @Test
    void aVersionDuckDbDoesNotKnowIsRefusedNamingTheKey() {
        assertThatThrownBy(() -> StorageCompatibility.of("v1.1", "pipeline.state.storage_compatibility"))
                .isInstanceOf(MallardException.class)
                .satisfies(e -> assertThat(((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_CONFIG_INVALID))
                .hasMessageContaining("pipeline.state.storage_compatibility")
                .hasMessageContaining("v1.1")
                .hasMessageContaining("v1.0.0");
    }

    @Test
    void anExistingTwoFormatFileAskedToBeReadableByDuckDbOneIsRefusedWithWhatToDo() throws Exception {
        Path file = dir.resolve("made-by-two.duckdb");
        try (Engine engine = Engine.onFile(file)) {
            execute(engine, "CREATE TABLE t AS SELECT 1 AS a");
        }
        assertThatThrownBy(() -> Engine.onFile(file, StorageCompatibility.of("v1.0.0", "storage_compatibility")))
                .isInstanceOf(MallardException.class)
                .satisfies(e -> assertThat(((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_STATE_STORAGE_VERSION))
                .hasMessageContaining(file.toString())
                .hasMessageContaining("v2.0.0+")
                .hasMessageContaining("COPY FROM DATABASE");
    }

    @Test
    void anExistingOneFormatFileStaysOneWhenOpenedWithTheDefault() throws Exception {
        Path file = dir.resolve("old.duckdb");
        try (Engine engine = Engine.onFile(file, StorageCompatibility.of("v1.0.0", "storage_compatibility"))) {
            execute(engine, "CREATE TABLE t AS SELECT 1 AS a");
        }
        try (Engine engine = Engine.onFile(file, StorageCompatibility.DEFAULT)) {
            execute(engine, "INSERT INTO t VALUES (2)");
        }
        assertThat(headerVersion(file)).isEqualTo(64);
    }

    @Test
    void anInMemoryDatabaseHasNoStorageVersion() {
        try (Engine engine = Engine.inMemory()) {
            assertThat(engine.storageVersion()).isEmpty();
        }
    }

    private static void execute(Engine engine, String sql) throws SQLException {
        try (Statement statement = engine.connection().createStatement()) {
            statement.execute(sql);
        }
    }

    /** The main header's version number: 8 bytes of checksum, the magic "DUCK", then a little-endian uint64. */
    private static long headerVersion(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            byte[] head = in.readNBytes(20);
            assertThat(new String(head, 8, 4, java.nio.charset.StandardCharsets.US_ASCII)).isEqualTo("DUCK");
            return ByteBuffer.wrap(head, 12, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
        }
    }
}
