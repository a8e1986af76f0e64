// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.flight;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.error.Redactor;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightRuntimeException;

/** Maps Mallard's failures to Flight status codes: SQL errors INVALID_ARGUMENT, auth UNAUTHENTICATED, and so on. */
final class FlightErrors {
    private FlightErrors() {}

    static FlightRuntimeException toFlight(Throwable failure) {
        if (failure instanceof FlightRuntimeException flight) {
            return flight;
        }
        if (failure instanceof MallardException mallard) {
            return status(mallard.errorCode()).withDescription(mallard.getMessage()).withCause(mallard).toRuntimeException();
        }
        return CallStatus.INTERNAL.withDescription(ErrorCode.SYSTEM_INTERNAL.code() + ": " + Redactor.redact(String.valueOf(failure)))
                .withCause(failure).toRuntimeException();
    }

    static CallStatus status(ErrorCode code) {
        return switch (code) {
            case USER_SQL_INVALID, USER_ARGUMENT_INVALID -> CallStatus.INVALID_ARGUMENT;
            case USER_AUTH_FAILED -> CallStatus.UNAUTHENTICATED;
            case USER_ACCESS_DENIED -> CallStatus.UNAUTHORIZED;
            case USER_SESSIONS_EXHAUSTED, USER_AUTH_THROTTLED -> CallStatus.RESOURCE_EXHAUSTED;
            case USER_SQL_TIMEOUT -> CallStatus.TIMED_OUT;
            case USER_SQL_CANCELLED -> CallStatus.CANCELLED;
            case USER_PREPARED_STATEMENT_CLOSED -> CallStatus.NOT_FOUND;
            case USER_SESSION_BUSY, SYSTEM_LOGIN_SERVICE_FAILED -> CallStatus.UNAVAILABLE;
            default -> code.errorClass().equals("user") ? CallStatus.INVALID_ARGUMENT : CallStatus.INTERNAL;
        };
    }

    static FlightRuntimeException notFound(String what) {
        return CallStatus.NOT_FOUND.withDescription(what).toRuntimeException();
    }
}
