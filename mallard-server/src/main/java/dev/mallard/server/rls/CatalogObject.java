// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.rls;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.sql.SqlText;
import java.util.Locale;
import java.util.Optional;

/**
 * A table or view of DuckDB's catalog that a name in a query resolved to.
 *
 * @param definition the query a view runs (a DuckDB view, or a materialized view's defining query)
 */
record CatalogObject(String database, String schema, String name, Kind kind, Optional<String> definition) {
    CatalogObject {
        requireNonNull(database, "database is null");
        requireNonNull(schema, "schema is null");
        requireNonNull(name, "name is null");
        requireNonNull(kind, "kind is null");
        requireNonNull(definition, "definition is null");
    }

    enum Kind { TABLE, VIEW, MATERIALIZED_VIEW }

    /** The fully qualified, quoted name: what the rewritten statement reads, so DuckDB reads the object resolved here. */
    String sql() {
        return SqlText.qualified(database, schema, name);
    }

    boolean is(String database, String schema, String name) {
        return lower(this.database).equals(lower(database)) && lower(this.schema).equals(lower(schema)) && lower(this.name).equals(lower(name));
    }

    static String lower(String text) {
        return text.toLowerCase(Locale.ROOT);
    }

    @Override
    public String toString() {
        return database + "." + schema + "." + name;
    }
}
