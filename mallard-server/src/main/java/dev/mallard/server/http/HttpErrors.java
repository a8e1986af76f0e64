// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.error.Redactor;
import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerResponse;
import org.slf4j.Logger;

/**
 * The HTTP status of every error code and the {@code {"error":{"code","message"}}} body of a failure: one table for
 * every route of the server (the query API, pipelines, named queries, ingestion), so a code answers the same status
 * wherever it is raised.
 */
public final class HttpErrors {
    private static final ObjectMapper JSON = new ObjectMapper();

    private HttpErrors() {}

    public static Status status(ErrorCode code) {
        return switch (code) {
            case USER_AUTH_FAILED -> Status.UNAUTHORIZED_401;
            case USER_ACCESS_DENIED -> Status.FORBIDDEN_403;
            case USER_SESSIONS_EXHAUSTED, USER_AUTH_THROTTLED, USER_INGEST_PENDING_WRITE_EXCEEDED -> Status.TOO_MANY_REQUESTS_429;
            case USER_SQL_TIMEOUT, USER_DATASET_TIMEOUT -> Status.GATEWAY_TIMEOUT_504;
            case USER_SQL_CANCELLED, USER_SESSION_BUSY -> Status.CONFLICT_409;
            case USER_REQUEST_TOO_LARGE, USER_INGEST_BATCH_TOO_LARGE -> Status.REQUEST_ENTITY_TOO_LARGE_413;
            case USER_INGEST_CONTENT_TYPE -> Status.UNSUPPORTED_MEDIA_TYPE_415;
            case USER_QUERY_NOT_FOUND, USER_PIPELINE_NOT_FOUND, USER_NAMED_QUERY_NOT_FOUND, USER_INGEST_QUEUE_NOT_FOUND, USER_DATASET_NOT_FOUND ->
                    Status.NOT_FOUND_404;
            case SYSTEM_LOGIN_SERVICE_FAILED -> Status.BAD_GATEWAY_502;
            default -> code.errorClass().equals("user") ? Status.BAD_REQUEST_400 : Status.INTERNAL_SERVER_ERROR_500;
        };
    }

    public static String body(String code, String message) {
        ObjectNode root = JSON.createObjectNode();
        ObjectNode error = root.putObject("error");
        error.put("code", code);
        error.put("message", message);
        return root.toString();
    }

    /**
     * Answers {@code failure} with its code's status and Mallard's error body. A failure that is not a
     * {@link MallardException} is a defect: it is logged on {@code log} (what {@code what} names) and answered
     * {@code system.internal} with its text redacted.
     */
    public static void send(ServerResponse response, Exception failure, Logger log, String what) {
        String code;
        String message;
        Status status;
        if (failure instanceof MallardException mallard) {
            code = mallard.errorCode().code();
            message = mallard.getMessage();
            status = status(mallard.errorCode());
        } else {
            log.error("{} failed", what, failure);
            code = ErrorCode.SYSTEM_INTERNAL.code();
            message = Redactor.redact(String.valueOf(failure));
            status = Status.INTERNAL_SERVER_ERROR_500;
        }
        response.status(status).header(HeaderNames.CONTENT_TYPE, "application/json").send(body(code, message));
    }
}
