// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.engine;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;
import java.util.Properties;

/**
 * The oldest DuckDB release that must be able to open a database file Mallard creates ({@code storage_compatibility}),
 * passed to DuckDB as {@code storage_compatibility_version}. It decides the format of a new file only: an existing
 * file keeps the format it was created in. {@code latest} (the default, DuckDB 2.0's own for a new file) writes the
 * 2.0 format, which DuckDB 1.x cannot open and which the capture triggers of materialized views need; {@code v1.0.0}
 * (or any later 1.x release) writes a file every DuckDB from that release on opens, without materialized views.
 *
 * @param version a DuckDB release ({@code v1.0.0}) or {@code latest}
 */
public record StorageCompatibility(String version) {
    /** DuckDB's name for the setting. */
    public static final String DUCKDB_SETTING = "storage_compatibility_version";
    public static final StorageCompatibility DEFAULT = new StorageCompatibility("latest");
    /** DuckDB 2.0 writes no format older than 1.0's (the one 0.10 also reads): an older release asks for that one. */
    private static final int[] OLDEST_WRITTEN = {1, 0, 0};

    public StorageCompatibility {
        requireNonNull(version, "version is null");
    }

    /**
     * The setting, checked against the releases the embedded DuckDB knows; {@code key} names where it was given
     * (a config key, a flag) for the error.
     */
    public static StorageCompatibility of(String version, String key) {
        requireNonNull(version, "version is null");
        requireNonNull(key, "key is null");
        StorageCompatibility compatibility = new StorageCompatibility(version);
        if (compatibility.isLatest()) {
            return compatibility;
        }
        try (Connection sandbox = DriverManager.getConnection("jdbc:duckdb:", compatibility.applyTo(new Properties()))) {
            return compatibility;
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, key + " '" + version + "' is not a DuckDB release the "
                    + "embedded DuckDB knows: give one as vMAJOR.MINOR.PATCH (v1.0.0 for a file every DuckDB 1.x opens) or latest", e);
        }
    }

    public boolean isLatest() {
        return version.equals(DEFAULT.version);
    }

    /** {@code properties} with DuckDB's setting added (nothing for {@code latest}, DuckDB's default); returns them. */
    public Properties applyTo(Properties properties) {
        if (!isLatest()) {
            properties.setProperty(DUCKDB_SETTING, version);
        }
        return properties;
    }

    /**
     * The storage version of the connection's current database as DuckDB tags it ({@code v1.0.0+}: readable from
     * DuckDB 1.0 on); empty for an in-memory database.
     */
    public static Optional<String> storageVersion(Connection connection) {
        try (PreparedStatement statement = connection.prepareStatement(
                "SELECT tags['storage_version'] FROM duckdb_databases() WHERE database_name = current_database()");
                ResultSet rows = statement.executeQuery()) {
            return rows.next() ? Optional.ofNullable(rows.getString(1)) : Optional.empty();
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot read the database's storage version: " + e.getMessage(), e);
        }
    }

    /**
     * Refuses a file that existed in a newer format than asked for: DuckDB keeps an existing file's format, so asking
     * for an older one cannot be met, and the releases the setting names would fail to open it.
     */
    public void check(Connection connection, String where) {
        if (isLatest()) {
            return;
        }
        Optional<String> found = storageVersion(connection);
        if (found.isPresent() && compare(release(found.get()), atLeastOldestWritten(release(version))) > 0) {
            throw new MallardException(ErrorCode.USER_STATE_STORAGE_VERSION, "the database " + where + " exists in DuckDB's "
                    + found.get() + " format, newer than storage_compatibility " + version + " asks for, and DuckDB keeps an "
                    + "existing file's format; copy it into a new file (in DuckDB: ATTACH 'new.duckdb' (STORAGE_VERSION '"
                    + version + "'); COPY FROM DATABASE old TO new) or set storage_compatibility to latest");
        }
    }

    /** Whether a database tagged {@code storageVersion} ({@code v1.0.0+}) is older than the 2.0 format. */
    public static boolean beforeTwo(String storageVersion) {
        return release(storageVersion)[0] < 2;
    }

    private static int[] atLeastOldestWritten(int[] release) {
        return compare(release, OLDEST_WRITTEN) < 0 ? OLDEST_WRITTEN : release;
    }

    /** {@code v1.4.0} or {@code v1.4.0+} as {1, 4, 0}. */
    private static int[] release(String text) {
        String[] parts = text.replaceFirst("^v", "").replaceFirst("\\+$", "").split("\\.");
        int[] numbers = new int[3];
        for (int i = 0; i < Math.min(parts.length, 3); i++) {
            numbers[i] = Integer.parseInt(parts[i]);
        }
        return numbers;
    }

    private static int compare(int[] a, int[] b) {
        for (int i = 0; i < 3; i++) {
            if (a[i] != b[i]) {
                return Integer.compare(a[i], b[i]);
            }
        }
        return 0;
    }
}
