// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.sql;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.sql.Classification;

/**
 * A text the gate let through, and how it runs.
 *
 * @param sql the text to run: the client's, or for a view statement or {@code dbsp_*} call the front door's spelling of it
 * @param classification what DuckDB's parser made of the client's text
 * @param throughViews whether it runs through the views' front door (a view statement, a SELECT calling {@code dbsp_*} functions)
 */
public record CheckedSql(String sql, Classification classification, boolean throughViews) {
    public CheckedSql {
        requireNonNull(sql, "sql is null");
        requireNonNull(classification, "classification is null");
    }
}
