// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.session;

import java.sql.SQLException;
import org.duckdb.DuckDBConnection;

/** Work on a session's DuckDB connection, run while the session's lock is held. */
@FunctionalInterface
public interface SqlWork<T> {
    T run(DuckDBConnection connection) throws SQLException;
}
