// SPDX-License-Identifier: Apache-2.0
package dev.mallard.client;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.Optional;

/**
 * How one send went.
 *
 * @param retryAfter the wait the server asked for (Retry-After), if any
 * @param detail what the server or the network said, for logs
 */
record SendOutcome(Kind kind, Optional<Duration> retryAfter, String detail) {
    enum Kind {
        /** Written (or recognised as a batch it already wrote). */
        ACKNOWLEDGED,
        /** The server is reachable but asks to slow down: retry later, keep the batch where it is. */
        BUSY,
        /** No answer, a timeout, a 5xx or failed authentication: retry later, spill while it lasts. */
        UNREACHABLE,
        /** Refused for good (the batch or the request is wrong): dropped and counted. */
        REJECTED
    }

    SendOutcome {
        requireNonNull(kind, "kind is null");
        requireNonNull(retryAfter, "retryAfter is null");
        requireNonNull(detail, "detail is null");
    }

    static SendOutcome acknowledged() {
        return new SendOutcome(Kind.ACKNOWLEDGED, Optional.empty(), "ok");
    }

    static SendOutcome busy(Optional<Duration> retryAfter, String detail) {
        return new SendOutcome(Kind.BUSY, retryAfter, detail);
    }

    static SendOutcome unreachable(Optional<Duration> retryAfter, String detail) {
        return new SendOutcome(Kind.UNREACHABLE, retryAfter, detail);
    }

    static SendOutcome rejected(String detail) {
        return new SendOutcome(Kind.REJECTED, Optional.empty(), detail);
    }

    /** DazzleDuck answers a batch id it has already passed with this message instead of acknowledging it again. */
    static boolean alreadyWritten(String message) {
        return message != null && message.contains("Out of sequence batch");
    }
}
