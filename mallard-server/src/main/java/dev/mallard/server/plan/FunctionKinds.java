// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.plan;

import static java.util.Objects.requireNonNull;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;

/** What DuckDB says a function name is ({@code duckdb_functions()}), asked once per name and plan. */
final class FunctionKinds {
    /** How a name may be used by a split query: row by row, and also in a predicate decided at planning. */
    enum Kind {
        /** Scalar in all overloads, the same result for the same arguments: usable in pruning. */
        CONSISTENT_SCALAR,
        /** Scalar in all overloads: computed row by row, so it keeps a query splittable. */
        SCALAR,
        /** Aggregate, window, macro, table or unknown: the query does not split. */
        OTHER
    }

    private final Connection connection;
    private final Map<String, Kind> known = new HashMap<>();

    FunctionKinds(Connection connection) {
        this.connection = requireNonNull(connection, "connection is null");
    }

    Kind of(String name) throws SQLException {
        String key = name.toLowerCase(java.util.Locale.ROOT);
        Kind kind = known.get(key);
        if (kind == null) {
            kind = lookUp(key);
            known.put(key, kind);
        }
        return kind;
    }

    private Kind lookUp(String name) throws SQLException {
        boolean any = false;
        boolean consistent = true;
        try (PreparedStatement statement = connection.prepareStatement(
                "SELECT function_type, stability FROM duckdb_functions() WHERE lower(function_name) = ?")) {
            statement.setString(1, name);
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    any = true;
                    if (!"scalar".equals(rs.getString(1))) {
                        return Kind.OTHER;
                    }
                    consistent &= "CONSISTENT".equals(rs.getString(2));
                }
            }
        }
        return !any ? Kind.OTHER : consistent ? Kind.CONSISTENT_SCALAR : Kind.SCALAR;
    }
}
