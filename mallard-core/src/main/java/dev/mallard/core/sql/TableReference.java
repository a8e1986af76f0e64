// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.sql;

import static java.util.Objects.requireNonNull;

/**
 * A table (or view, or CTE) named in a FROM clause or a DML target, as written: catalog and schema empty when not
 * given. A name that is a file path ({@code FROM 'data.csv'}) is DuckDB's replacement scan of that file.
 */
public record TableReference(String catalog, String schema, String name) {
    public TableReference {
        requireNonNull(catalog, "catalog is null");
        requireNonNull(schema, "schema is null");
        requireNonNull(name, "name is null");
    }

    @Override
    public String toString() {
        return (catalog.isEmpty() ? "" : catalog + ".") + (schema.isEmpty() ? "" : schema + ".") + name;
    }
}
