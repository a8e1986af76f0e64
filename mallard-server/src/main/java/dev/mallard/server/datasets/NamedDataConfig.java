// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.datasets;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Optional;

/**
 * A server's named data: the datasets of its {@code serve:} block (docs/datasets.md) and DazzleDuck's
 * {@code named_query_table}, the DuckDB table of named query templates.
 */
public record NamedDataConfig(Optional<ServeConfig.Settings> serve, Optional<String> namedQueryTable) {
    public static final NamedDataConfig NONE = new NamedDataConfig(Optional.empty(), Optional.empty());

    public NamedDataConfig {
        requireNonNull(serve, "serve is null");
        requireNonNull(namedQueryTable, "namedQueryTable is null");
    }

    /** The {@code serve} and {@code named_query_table} keys of a server configuration tree (already schema-checked). */
    public static NamedDataConfig read(JsonNode root) {
        JsonNode serve = root.get("serve");
        JsonNode table = root.get("named_query_table");
        return new NamedDataConfig(
                serve == null || serve.isNull() ? Optional.empty() : Optional.of(ServeConfigReader.readBlock(serve, "serve")),
                table == null || table.isNull() ? Optional.empty() : Optional.of(table.asText()));
    }
}
