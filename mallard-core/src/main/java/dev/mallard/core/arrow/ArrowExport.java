// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.arrow;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.duckdb.DuckDBResultSet;

/** Exports a DuckDB query result as Arrow record batches, through the Arrow C stream interface (no copy per value). */
public final class ArrowExport {
    /**
     * The DuckDB setting under which the export marks JSON columns ({@code arrow.json}, so {@link JsonLinesWriter}
     * embeds them raw) and keeps types Arrow has no exact match for: UUID as {@code arrow.uuid}, HUGEINT and
     * UHUGEINT as 128-bit integers (without it, UHUGEINT above 2^127 - 1 comes out negative), TIMETZ with its
     * offset, BIT as bits. It applies to queries run after it is set on the connection.
     */
    public static final String LOSSLESS_SETTING = "SET arrow_lossless_conversion = true";

    private ArrowExport() {}

    /**
     * Streams the rows of an unread DuckDB result set as batches of at most {@code batchRows} rows. The reader's
     * buffers come from {@code allocator}. Close the reader before the result set: it reads DuckDB's result.
     *
     * @throws IllegalArgumentException if {@code rs} is not a DuckDB result set or {@code batchRows} is not positive
     * @throws MallardException ({@code system.engine.failed}) if DuckDB cannot export the result
     */
    public static ArrowReader export(ResultSet rs, BufferAllocator allocator, int batchRows) {
        requireNonNull(rs, "rs is null");
        requireNonNull(allocator, "allocator is null");
        if (batchRows <= 0) {
            throw new IllegalArgumentException("batchRows must be positive, was " + batchRows);
        }
        DuckDBResultSet duckDb;
        try {
            duckDb = rs.unwrap(DuckDBResultSet.class);
        } catch (SQLException e) {
            throw new IllegalArgumentException("not a DuckDB result set: " + rs.getClass().getName(), e);
        }
        try {
            return (ArrowReader) duckDb.arrowExportStream(allocator, batchRows);
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED,
                    "DuckDB could not export a query result as Arrow: " + e.getMessage(), e);
        }
    }
}
