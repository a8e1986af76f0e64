// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.error;

import static java.util.Objects.requireNonNull;

/**
 * A failure a user can see. The message names what is wrong (file, key, column, value) and what to do;
 * it never carries a secret (see {@link Redactor}).
 */
public class MallardException extends RuntimeException {
    private final ErrorCode errorCode;

    public MallardException(ErrorCode errorCode, String message) {
        super(Redactor.redact(requireNonNull(message, "message is null")));
        this.errorCode = requireNonNull(errorCode, "errorCode is null");
    }

    public MallardException(ErrorCode errorCode, String message, Throwable cause) {
        super(Redactor.redact(requireNonNull(message, "message is null")), cause);
        this.errorCode = requireNonNull(errorCode, "errorCode is null");
    }

    public ErrorCode errorCode() {
        return errorCode;
    }

    /** {@code code: message}, the form the CLI prints. */
    public String describe() {
        return errorCode.code() + ": " + getMessage();
    }
}
