// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.sql;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlText;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Which files SQL may read and write ({@code file_access}), enforced by DuckDB itself: {@code allowed_directories}
 * then {@code enable_external_access=false}, set on the database after the startup script ran. Once external access
 * is off DuckDB refuses to turn it back on or to widen the allowed directories for as long as the database runs, so a
 * client's {@code SET} cannot undo it (the server does not also set {@code lock_configuration}: it would refuse the
 * per-session settings the server itself makes, such as {@code jdbc_stream_results}).
 */
public enum FileAccess {
    /** No file, directory or URL outside the database: {@code read_csv}, {@code COPY}, {@code ATTACH}, {@code INSTALL} all refused. */
    NONE,
    /** The warehouse directory and DuckDB's temporary directory, nothing else (not /proc, /etc, nor the signing key). */
    WAREHOUSE,
    /** Every file the server's process can read or write, as DuckDB allows by default (/proc/self/environ too). */
    ALL;

    public static final String KEY = "file_access";
    public static final FileAccess DEFAULT = WAREHOUSE;

    /** @throws MallardException {@code user.config.invalid} for a value that is not none, warehouse or all */
    public static FileAccess parse(String value) {
        try {
            return valueOf(value.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, KEY + " takes none, warehouse or all, not '" + value + "'");
        }
    }

    /** Applies this access to the database {@code connection} belongs to: once, after the startup script. */
    public void apply(Connection connection, Path warehouse) {
        if (this == ALL) {
            return;
        }
        try (Statement statement = connection.createStatement()) {
            if (this == WAREHOUSE) {
                List<String> directories = new ArrayList<>();
                // A trailing separator, so that a sibling such as <warehouse>.mallard is not matched as a prefix.
                directories.add(directory(warehouse.toAbsolutePath().normalize()));
                try (ResultSet rs = statement.executeQuery("SELECT current_setting('temp_directory')")) {
                    if (rs.next() && rs.getString(1) != null && !rs.getString(1).isBlank()) {
                        directories.add(directory(Path.of(rs.getString(1)).toAbsolutePath().normalize()));
                    }
                }
                statement.execute("SET allowed_directories = [" + String.join(", ", directories.stream().map(SqlText::literal).toList()) + "]");
            }
            statement.execute("SET enable_external_access = false");
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot restrict DuckDB's file access (" + KEY + ": "
                    + name().toLowerCase(Locale.ROOT) + "): " + e.getMessage(), e);
        }
    }

    private static String directory(Path path) {
        String text = path.toString();
        return text.endsWith("/") ? text : text + "/";
    }
}
