// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.rls;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlText;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Turns DuckDB's external access off for the whole database, once, after the startup script: under RESTRICTED and
 * RESTRICT_READ_ONLY no statement reads or writes a file, except under the path prefixes the configured users'
 * fixed {@code path} grants name ({@code allowed_directories}, set first, since DuckDB refuses to change it later).
 * DuckDB cannot turn external access back on while the database runs.
 */
public final class FileLockdown {
    private FileLockdown() {}

    public static void apply(Connection connection, List<String> allowedPrefixes) {
        try (Statement statement = connection.createStatement()) {
            List<String> local = allowedPrefixes.stream().filter(prefix -> !prefix.contains("://")).toList();
            if (!local.isEmpty()) {
                statement.execute("SET allowed_directories = [" + local.stream().map(SqlText::literal).collect(Collectors.joining(", ")) + "]");
            }
            statement.execute("SET enable_external_access = false");
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot turn DuckDB's external access off: " + e.getMessage(), e);
        }
    }
}
