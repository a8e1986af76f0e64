// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.rls;

import static java.util.Objects.requireNonNull;

import java.util.Locale;
import java.util.Optional;

/**
 * One datasource a token may read: an {@code x-dd-access} entry {@code [type, name, projection, filter]}, or the
 * legacy {@code x-dd-table}/{@code x-dd-path}/{@code x-dd-function} claim with {@code x-dd-filter}.
 *
 * @param filter the row filter, a SQL expression; empty when the grant reads every row ({@code "true"})
 * @param projection the columns the grant exposes, as given (a comma-separated list of column names, read on DuckDB's
 *     parse tree when first used); empty for {@code "*"}, every column
 */
public record AccessGrant(Kind kind, String name, Optional<String> filter, Optional<String> projection) {
    public AccessGrant {
        requireNonNull(kind, "kind is null");
        requireNonNull(name, "name is null");
        requireNonNull(filter, "filter is null");
        requireNonNull(projection, "projection is null");
    }

    /** A grant of every column ({@code "*"}). */
    public AccessGrant(Kind kind, String name, Optional<String> filter) {
        this(kind, name, filter, Optional.empty());
    }

    /** What a grant names: a table (or view), a file path prefix, or a table function. */
    public enum Kind {
        TABLE, PATH, FUNCTION;

        static Optional<Kind> of(String text) {
            return switch (text.toLowerCase(Locale.ROOT)) {
                case "table" -> Optional.of(TABLE);
                case "path" -> Optional.of(PATH);
                case "function" -> Optional.of(FUNCTION);
                default -> Optional.empty();
            };
        }
    }
}
