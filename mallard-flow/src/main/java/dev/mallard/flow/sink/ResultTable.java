// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink;

import static java.util.Objects.requireNonNull;

import org.duckdb.DuckDBConnection;

/**
 * A handler's output for one batch: a temporary DuckDB table on the pipeline's connection. A sink reads
 * it as often as it needs (a retry reads it again), so the output is never lost between attempts.
 *
 * @param name the quoted-as-needed table name to read with {@code SELECT * FROM name}
 */
public record ResultTable(DuckDBConnection connection, String name, long rows) {
    public ResultTable {
        requireNonNull(connection, "connection is null");
        requireNonNull(name, "name is null");
    }

    public boolean isEmpty() {
        return rows == 0;
    }
}
