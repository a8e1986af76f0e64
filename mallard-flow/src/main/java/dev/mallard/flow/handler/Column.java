// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.handler;

import static java.util.Objects.requireNonNull;

/**
 * One column of a handler's table: its name as the JSON key it is read from, and its DuckDB type as DuckDB
 * spells it ({@code BIGINT}, {@code VARCHAR[]}, {@code STRUCT("a" BIGINT)}, {@code TIMESTAMP WITH TIME ZONE}).
 */
public record Column(String name, String type) {
    public Column {
        requireNonNull(name, "name is null");
        requireNonNull(type, "type is null");
        if (type.isBlank()) {
            throw new IllegalArgumentException("column " + name + " has a blank type");
        }
    }
}
