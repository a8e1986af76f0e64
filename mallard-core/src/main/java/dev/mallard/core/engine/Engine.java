// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.engine;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.arrow.ArrowExport;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Optional;
import java.util.Properties;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.duckdb.DuckDBConnection;

/**
 * One embedded DuckDB database and the Arrow allocator that reads results out of it. A process opens one
 * per pipeline (or server); threads that need the database take their own {@link #newSession()}.
 */
public final class Engine implements AutoCloseable {
    private final Optional<Path> file;
    private final DuckDBConnection connection;
    private final BufferAllocator allocator;

    private Engine(Optional<Path> file, DuckDBConnection connection, BufferAllocator allocator) {
        this.file = file;
        this.connection = connection;
        this.allocator = allocator;
    }

    public static Engine inMemory() {
        return open(Optional.empty(), StorageCompatibility.DEFAULT);
    }

    /** The file, created in DuckDB's default format ({@link StorageCompatibility#DEFAULT}) if it does not exist. */
    public static Engine onFile(Path file) {
        return onFile(file, StorageCompatibility.DEFAULT);
    }

    /** The file, created in the format {@code compatibility} names if it does not exist (and refused if it is newer). */
    public static Engine onFile(Path file, StorageCompatibility compatibility) {
        return open(Optional.of(requireNonNull(file, "file is null")), requireNonNull(compatibility, "compatibility is null"));
    }

    private static Engine open(Optional<Path> file, StorageCompatibility compatibility) {
        String url = file.map(path -> "jdbc:duckdb:" + path.toAbsolutePath()).orElse("jdbc:duckdb:");
        try {
            DuckDBConnection connection = (DuckDBConnection) DriverManager.getConnection(url, compatibility.applyTo(new Properties()));
            try {
                compatibility.check(connection, file.map(Path::toString).orElse(":memory:"));
                try (java.sql.Statement statement = connection.createStatement()) {
                    // Without it DuckDB exports JSON as plain text, UHUGEINT above 2^127 as negative decimals and
                    // TIMETZ without its offset; JsonLinesWriter reads the lossless forms.
                    statement.execute(ArrowExport.LOSSLESS_SETTING);
                }
            } catch (SQLException | RuntimeException e) {
                connection.close();
                throw e;
            }
            return new Engine(file, connection, new RootAllocator());
        } catch (SQLException e) {
            String where = file.map(Path::toString).orElse("an in-memory database");
            if (e.getMessage() != null && e.getMessage().contains("Could not set lock")) {
                throw new MallardException(ErrorCode.USER_STATE_LOCKED, "the database " + where
                        + " is in use by another process; stop it or give this one its own state path", e);
            }
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot open DuckDB on " + where + ": " + e.getMessage(), e);
        }
    }

    /** The connection of the thread that opened the engine (a pipeline's own thread). */
    public DuckDBConnection connection() {
        return connection;
    }

    /** A new connection to the same database, for another thread. */
    public DuckDBConnection newSession() {
        try {
            return connection.duplicate();
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot open a DuckDB session: " + e.getMessage(), e);
        }
    }

    /**
     * An engine on the same database with a connection and an allocator of its own, for a component that runs on its
     * own thread inside a process that owns this engine (a pipeline hosted by a server); closing it leaves this one open.
     */
    public Engine session() {
        DuckDBConnection own = newSession();
        return new Engine(file, own, allocator.newChildAllocator("session", 0, Long.MAX_VALUE));
    }

    public BufferAllocator allocator() {
        return allocator;
    }

    public Optional<Path> file() {
        return file;
    }

    /** The file's DuckDB storage version ({@code v1.0.0+}, {@code v2.0.0+}); empty in memory. */
    public Optional<String> storageVersion() {
        return StorageCompatibility.storageVersion(connection);
    }

    @Override
    public void close() {
        try {
            connection.close();
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "closing DuckDB failed: " + e.getMessage(), e);
        } finally {
            allocator.close();
        }
    }
}
