package dev.mallard.server.rls;

import static java.util.Objects.requireNonNull;

import java.util.Locale;
import java.util.Optional;

/**
 * One datasource a token may read: an {@code x-dd-access} entry {@code [type, name, projection, filter]}, or the
 * legacy {@code x-dd-table}/{@code x-dd-path}/{@code x-dd-function} claim with {@code x-dd-filter}.
 *
 * @param filter the row filter, a SQL expression; empty when the grant reads every row ({@code "true"})
 */
public record AccessGrant(Kind kind, String name, Optional<String> filter) {
    public AccessGrant {
        requireNonNull(kind, "kind is null");
        requireNonNull(name, "name is null");
        requireNonNull(filter, "filter is null");
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
