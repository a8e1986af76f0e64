// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.auth;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;

/** {@code user.auth.throttled}, with how long the client should wait (HTTP's Retry-After). */
public final class LoginThrottledException extends MallardException {
    private final long retryAfterSeconds;

    LoginThrottledException(String message, long retryAfterSeconds) {
        super(ErrorCode.USER_AUTH_THROTTLED, message);
        this.retryAfterSeconds = Math.max(1, retryAfterSeconds);
    }

    public long retryAfterSeconds() {
        return retryAfterSeconds;
    }
}
