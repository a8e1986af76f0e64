package dev.mallard.server.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.core.error.ErrorCode;
import io.helidon.http.Status;

/** The HTTP status and the {@code {"error":{"code","message"}}} body of a failure. */
final class HttpErrors {
    private static final ObjectMapper JSON = new ObjectMapper();

    private HttpErrors() {}

    static Status status(ErrorCode code) {
        return switch (code) {
            case USER_AUTH_FAILED -> Status.UNAUTHORIZED_401;
            case USER_ACCESS_DENIED -> Status.FORBIDDEN_403;
            case USER_SESSIONS_EXHAUSTED, USER_AUTH_THROTTLED -> Status.TOO_MANY_REQUESTS_429;
            case USER_SQL_TIMEOUT -> Status.GATEWAY_TIMEOUT_504;
            case USER_SQL_CANCELLED, USER_SESSION_BUSY -> Status.CONFLICT_409;
            case USER_REQUEST_TOO_LARGE -> Status.REQUEST_ENTITY_TOO_LARGE_413;
            case USER_QUERY_NOT_FOUND -> Status.NOT_FOUND_404;
            case SYSTEM_LOGIN_SERVICE_FAILED -> Status.BAD_GATEWAY_502;
            default -> code.errorClass().equals("user") ? Status.BAD_REQUEST_400 : Status.INTERNAL_SERVER_ERROR_500;
        };
    }

    static String body(String code, String message) {
        ObjectNode root = JSON.createObjectNode();
        ObjectNode error = root.putObject("error");
        error.put("code", code);
        error.put("message", message);
        return root.toString();
    }
}
