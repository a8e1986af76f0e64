// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.hosted;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.engine.Engine;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.metrics.MetricsRegistry;
import dev.mallard.server.auth.AccessToken;
import dev.mallard.server.auth.TokenService;
import dev.mallard.server.config.AccessMode;
import io.helidon.http.HeaderNames;
import io.helidon.webserver.http.ServerRequest;
import java.util.Optional;

/**
 * What a hosted component gets from its server: the database (each thread takes its own {@link Engine#session()}),
 * the registry {@code /metrics} serves, the hosted configuration, the access mode, and who calls a route.
 */
public final class HostContext {
    private final Engine database;
    private final MetricsRegistry metrics;
    private final HostedConfig config;
    private final AccessMode accessMode;
    private final TokenService tokens;

    public HostContext(Engine database, MetricsRegistry metrics, HostedConfig config, AccessMode accessMode, TokenService tokens) {
        this.database = requireNonNull(database, "database is null");
        this.metrics = requireNonNull(metrics, "metrics is null");
        this.config = requireNonNull(config, "config is null");
        this.accessMode = requireNonNull(accessMode, "accessMode is null");
        this.tokens = requireNonNull(tokens, "tokens is null");
    }

    public Engine database() {
        return database;
    }

    public MetricsRegistry metrics() {
        return metrics;
    }

    public HostedConfig config() {
        return config;
    }

    public AccessMode accessMode() {
        return accessMode;
    }

    /**
     * The user whose bearer token the request carries, as every {@code /v1} route checks it.
     *
     * @throws MallardException {@code user.auth.failed} without a valid token
     */
    public String caller(ServerRequest request) {
        requireNonNull(request, "request is null");
        Optional<String> header = request.headers().first(HeaderNames.AUTHORIZATION);
        if (header.isEmpty() || !header.get().regionMatches(true, 0, "Bearer ", 0, 7)) {
            throw new MallardException(ErrorCode.USER_AUTH_FAILED,
                    "no access token; get one from POST /v1/login and send it as Authorization: Bearer <token>");
        }
        AccessToken token = tokens.verify(header.get().substring(7).trim());
        return token.username();
    }
}
