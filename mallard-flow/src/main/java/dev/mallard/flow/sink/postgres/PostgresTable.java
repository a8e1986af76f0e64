// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink.postgres;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlText;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The destination table's name, schema-qualified or not, as Postgres reads it: an unquoted part folds to lower
 * case, a double-quoted part keeps its case and characters.
 *
 * @param parts the name's parts after folding and unquoting, e.g. {@code [public, city_counts]}
 */
public record PostgresTable(List<String> parts) {
    public PostgresTable {
        parts = List.copyOf(parts);
        if (parts.isEmpty() || parts.size() > 3) {
            throw new IllegalArgumentException("a table name has one to three parts: " + parts);
        }
    }

    public static PostgresTable parse(String text, String where) {
        requireNonNull(text, "text is null");
        List<String> parts = new ArrayList<>();
        StringBuilder part = new StringBuilder();
        boolean quoted = false;
        boolean wasQuoted = false;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (quoted) {
                if (c == '"' && i + 1 < text.length() && text.charAt(i + 1) == '"') {
                    part.append('"');
                    i++;
                } else if (c == '"') {
                    quoted = false;
                } else {
                    part.append(c);
                }
            } else if (c == '"') {
                quoted = true;
                wasQuoted = true;
            } else if (c == '.') {
                parts.add(finish(part, wasQuoted, text, where));
                part.setLength(0);
                wasQuoted = false;
            } else {
                part.append(c);
            }
        }
        if (quoted) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, where + " has an unterminated quote: " + text);
        }
        parts.add(finish(part, wasQuoted, text, where));
        if (parts.size() > 3) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, where + " has more than three dotted parts: " + text);
        }
        return new PostgresTable(parts);
    }

    private static String finish(StringBuilder part, boolean wasQuoted, String text, String where) {
        String name = wasQuoted ? part.toString() : part.toString().strip().toLowerCase(Locale.ROOT);
        if (name.isEmpty()) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, where + " has an empty part: '" + text
                    + "'; write table or schema.table");
        }
        return name;
    }

    /** The name as SQL, every part quoted. */
    public String sql() {
        return SqlText.qualified(parts.toArray(String[]::new));
    }

    @Override
    public String toString() {
        return String.join(".", parts);
    }
}
