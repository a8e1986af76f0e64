// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.http;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.util.List;
import java.util.Optional;

/**
 * Cross-origin access per {@code http.allow-origin}: a request from an allowed origin gets
 * {@code Access-Control-Allow-Origin}, and a preflight {@code OPTIONS} the methods and headers it asked for. With no
 * origins configured no CORS header is ever sent, and a browser keeps other sites' pages out.
 */
final class CorsPolicy {
    private static final HeaderName ALLOW_ORIGIN = HeaderNames.create("Access-Control-Allow-Origin");
    private static final HeaderName ALLOW_METHODS = HeaderNames.create("Access-Control-Allow-Methods");
    private static final HeaderName ALLOW_HEADERS = HeaderNames.create("Access-Control-Allow-Headers");
    private static final HeaderName EXPOSE_HEADERS = HeaderNames.create("Access-Control-Expose-Headers");
    private static final HeaderName MAX_AGE = HeaderNames.create("Access-Control-Max-Age");
    private static final HeaderName REQUEST_HEADERS = HeaderNames.create("Access-Control-Request-Headers");
    private static final String METHODS = "GET, POST, HEAD, OPTIONS";
    private static final String DEFAULT_HEADERS = "Authorization, Content-Type, Accept, Accept-Encoding, x-dd-fetch-size, x-dd-query-timeout,"
            + " x-dd-query-id, x-dd-arrow-compression, x-dd-limit, x-dd-offset";

    private final List<String> origins;

    CorsPolicy(List<String> origins) {
        this.origins = List.copyOf(requireNonNull(origins, "origins is null"));
    }

    private Optional<String> allowed(Optional<String> origin) {
        if (origin.isEmpty() || origins.isEmpty()) {
            return Optional.empty();
        }
        if (origins.contains("*")) {
            return Optional.of("*");
        }
        return origins.contains(origin.get()) ? origin : Optional.empty();
    }

    void filter(FilterChain chain, RoutingRequest request, RoutingResponse response) {
        allowed(request.headers().first(HeaderNames.ORIGIN)).ifPresent(origin -> {
            response.header(ALLOW_ORIGIN, origin);
            response.header(HeaderNames.VARY, "Origin");
            response.header(EXPOSE_HEADERS, "x-dd-query-id, x-dd-update-count");
        });
        chain.proceed();
    }

    /** A browser's preflight: 200 with what it may send from an allowed origin, 403 from any other. */
    void preflight(ServerRequest request, ServerResponse response) {
        Optional<String> origin = request.headers().first(HeaderNames.ORIGIN);
        if (allowed(origin).isEmpty()) {
            response.status(Status.FORBIDDEN_403).header(HeaderNames.CONTENT_TYPE, "application/json").send(HttpErrors.body(
                    ErrorCode.USER_ACCESS_DENIED.code(), "origin " + origin.orElse("(none)") + " is not in the server's http.allow-origin"));
            return;
        }
        response.header(ALLOW_METHODS, METHODS);
        response.header(ALLOW_HEADERS, request.headers().first(REQUEST_HEADERS).orElse(DEFAULT_HEADERS));
        response.header(MAX_AGE, "3600");
        response.status(Status.OK_200).send();
    }
}
