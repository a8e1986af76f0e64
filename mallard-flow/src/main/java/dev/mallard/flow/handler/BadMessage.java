// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.handler;

import static java.util.Objects.requireNonNull;

import dev.mallard.flow.source.Message;

/**
 * A message of a batch that could not be loaded.
 *
 * @param index the message's index in the batch as the caller passed it
 * @param where the message's position as a user reads it ({@code topic[0]@12}, {@code line 7})
 * @param column the column whose value does not fit, or null when the message as a whole is at fault
 *     (not JSON, not an object)
 * @param error what is wrong, in DuckDB's or the parser's words
 */
public record BadMessage(int index, Message message, String where, String column, String error) {
    public BadMessage {
        requireNonNull(message, "message is null");
        requireNonNull(where, "where is null");
        requireNonNull(error, "error is null");
    }

    /** One line for a log or an error: {@code topic[0]@12, column "n": Failed to cast ...}. */
    public String describe() {
        return column == null ? where + ": " + error : where + ", column \"" + column + "\": " + error;
    }
}
