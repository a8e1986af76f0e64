// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.handler;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.util.List;

/**
 * A batch was not loaded because some of its messages do not fit the table. Nothing of the batch was
 * written. Carries every bad message so that an on_error policy can drop them (or send them to a dead
 * letter queue) and load the rest.
 */
public final class BadMessagesException extends MallardException {
    private final transient List<BadMessage> badMessages;

    public BadMessagesException(String message, List<BadMessage> badMessages, Throwable cause) {
        super(ErrorCode.USER_HANDLER_PARSE_FAILED, message, cause);
        this.badMessages = List.copyOf(requireNonNull(badMessages, "badMessages is null"));
    }

    /** The bad messages in batch order; never empty. */
    public List<BadMessage> badMessages() {
        return badMessages;
    }
}
