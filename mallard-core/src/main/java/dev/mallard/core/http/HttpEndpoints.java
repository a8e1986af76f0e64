// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.http;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.WebServerConfig;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.http1.Http1Config;
import io.helidon.common.socket.SocketOptions;
import io.helidon.common.tls.Tls;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Consumer;
import javax.net.ssl.SSLContext;

/**
 * The one HTTP server Mallard starts: Helidon SE, one virtual thread per request. The caller declares its
 * routes in one method, Helidon SE style:
 *
 * <pre>{@code
 * try (HttpEndpoints http = HttpEndpoints.start("0.0.0.0", 8000, routes -> routes
 *         .get("/metrics", this::metrics)
 *         .get("/healthz", this::healthz))) { ... }
 * }</pre>
 *
 * A request no route matches, by path or by method, answers Helidon's 404.
 */
public final class HttpEndpoints implements AutoCloseable {
    /**
     * What every listener Mallard starts bounds, so a stalled or abusive client cannot hold the server's resources:
     *
     * @param readTimeout the socket read timeout given to Helidon (a blocking read that waits longer fails)
     * @param idleTimeout a connection that has not sent a whole request line this long is closed: one that connected
     *     and sent nothing, stalled in its request line, or kept alive with no next request (Helidon checks every
     *     quarter of it, at least every second)
     * @param headerTimeout a request whose headers are not all read this long after its request line is closed
     * @param maxConnections open connections at most; one more is answered {@code 503}
     *     ({@code system.http.too_many_connections}, {@code Retry-After}) and closed, over TLS only closed
     * @param maxConcurrentRequests requests in flight at most; one more is answered {@code 503} at once
     */
    public record ConnectionLimits(Duration readTimeout, Duration idleTimeout, Duration headerTimeout, int maxConnections, int maxConcurrentRequests) {
        public static final Duration DEFAULT_HEADER_TIMEOUT = Duration.ofSeconds(30);
        public static final ConnectionLimits DEFAULT = new ConnectionLimits(Duration.ofSeconds(30), Duration.ofMinutes(5), DEFAULT_HEADER_TIMEOUT,
                1_024, 512);

        public ConnectionLimits {
            requireNonNull(readTimeout, "readTimeout is null");
            requireNonNull(idleTimeout, "idleTimeout is null");
            requireNonNull(headerTimeout, "headerTimeout is null");
            if (readTimeout.isNegative() || readTimeout.isZero() || idleTimeout.isNegative() || idleTimeout.isZero() || headerTimeout.isNegative()
                    || headerTimeout.isZero() || maxConnections <= 0 || maxConcurrentRequests <= 0) {
                throw new IllegalArgumentException("connection limits must be positive");
            }
        }

        /** These limits with another header timeout. */
        public ConnectionLimits withHeaderTimeout(Duration headerTimeout) {
            return new ConnectionLimits(readTimeout, idleTimeout, headerTimeout, maxConnections, maxConcurrentRequests);
        }
    }

    private final WebServer server;
    private final Optional<ListenerGuard> guard;

    private HttpEndpoints(WebServer server, Optional<ListenerGuard> guard) {
        this.server = requireNonNull(server, "server is null");
        this.guard = requireNonNull(guard, "guard is null");
    }

    /**
     * Binds and starts serving before it returns.
     *
     * @param port 0 picks a free port; {@link #port()} tells which
     * @throws MallardException {@code system.http.bind_failed} when the address cannot be bound
     */
    public static HttpEndpoints start(String host, int port, Consumer<HttpRouting.Builder> routes) {
        return start(host, port, Optional.empty(), listener -> {}, routes);
    }

    /**
     * Binds and starts serving before it returns, over HTTPS when {@code tls} is given.
     *
     * @param tls the server's key and certificates; empty serves plain HTTP
     */
    public static HttpEndpoints start(String host, int port, Optional<SSLContext> tls, Consumer<HttpRouting.Builder> routes) {
        return start(host, port, tls, listener -> {}, routes);
    }

    /**
     * As {@link #start(String, int, Consumer)}, with the listener's limits and timeouts set by {@code listener}
     * (payload size, connections, socket timeouts).
     */
    public static HttpEndpoints start(String host, int port, Consumer<WebServerConfig.Builder> listener, Consumer<HttpRouting.Builder> routes) {
        return start(host, port, Optional.empty(), listener, routes);
    }

    /**
     * Binds and starts serving before it returns.
     *
     * @param tls the server's key and certificates; empty serves plain HTTP
     * @param listener sets the listener's limits and timeouts (payload size, connections, socket timeouts)
     */
    public static HttpEndpoints start(String host, int port, Optional<SSLContext> tls, Consumer<WebServerConfig.Builder> listener,
            Consumer<HttpRouting.Builder> routes) {
        return start(host, port, tls, ConnectionLimits.DEFAULT, false, listener, routes);
    }

    /**
     * Binds and starts serving before it returns, with {@code limits} on connections instead of the defaults, all of
     * them enforced: the header timeout, and a connection past the cap refused rather than left waiting.
     *
     * @param tls the server's key and certificates; empty serves plain HTTP
     * @param listener sets the listener's other options (payload size); applied after {@code limits}, and must not
     *     replace the connection options or the HTTP/1 protocol, which carry the guard
     */
    public static HttpEndpoints start(String host, int port, Optional<SSLContext> tls, ConnectionLimits limits,
            Consumer<WebServerConfig.Builder> listener, Consumer<HttpRouting.Builder> routes) {
        return start(host, port, tls, limits, true, listener, routes);
    }

    /** @param guarded whether the header timeout and the refusing cap apply (a listener that sets its own protocol does without) */
    private static HttpEndpoints start(String host, int port, Optional<SSLContext> tls, ConnectionLimits limits, boolean guarded,
            Consumer<WebServerConfig.Builder> listener, Consumer<HttpRouting.Builder> routes) {
        requireNonNull(limits, "limits is null");
        requireNonNull(host, "host is null");
        requireNonNull(tls, "tls is null");
        requireNonNull(listener, "listener is null");
        requireNonNull(routes, "routes is null");
        if (port < 0 || port > 65_535) {
            throw new IllegalArgumentException("port " + port + " is outside 0..65535");
        }
        // Without TCP_NODELAY a response's last small write (a chunked body's end) waits for the client's ACK
        // of the one before, which Linux delays by up to 40 ms: a one-row query took 44 ms with idle cores.
        SocketOptions socketOptions = SocketOptions.builder().tcpNoDelay(true).readTimeout(limits.readTimeout()).build();
        Optional<ListenerGuard> guard = guarded
                ? Optional.of(new ListenerGuard(socketOptions, limits.headerTimeout(), limits.idleTimeout(), limits.maxConnections(), tls.isEmpty()))
                : Optional.empty();
        WebServerConfig.Builder builder = WebServer.builder()
                .connectionOptions(guard.<SocketOptions>map(g -> g).orElse(socketOptions))
                .idleConnectionTimeout(limits.idleTimeout())
                .idleConnectionPeriod(limits.idleTimeout().dividedBy(4).compareTo(Duration.ofSeconds(1)) < 0
                        ? Duration.ofSeconds(1) : limits.idleTimeout().dividedBy(4))
                // The guard counts and refuses past the cap; Helidon's own cap would stop accepting instead.
                .maxTcpConnections(guarded ? -1 : limits.maxConnections())
                .maxConcurrentRequests(limits.maxConcurrentRequests());
        guard.ifPresent(g -> builder.addProtocol(Http1Config.builder().addReceiveListener(g.receiveListener()).build()));
        tls.ifPresent(context -> builder.tls(Tls.builder().sslContext(context).build()));
        listener.accept(builder);
        WebServer server = builder
                .host(host)
                .port(port)
                // Helidon's own hook would stop the server as soon as the JVM begins to exit, while the
                // pipeline is still draining and /healthz must keep answering 503; the owner closes it last.
                .shutdownHook(false)
                .routing(routing -> {
                    guard.ifPresent(g -> routing.addFilter(g::filter));
                    routes.accept(routing);
                })
                .build();
        // Helidon does not throw when it cannot bind: it logs the cause and returns a server that is not running.
        try {
            server.start();
        } catch (RuntimeException e) {
            guard.ifPresent(ListenerGuard::close);
            throw bindFailed(host, port, e);
        }
        if (!server.isRunning()) {
            guard.ifPresent(ListenerGuard::close);
            throw bindFailed(host, port, null);
        }
        return new HttpEndpoints(server, guard);
    }

    /** Connections refused past {@link ConnectionLimits#maxConnections()} since the listener started (0 without limits). */
    public long refusedConnections() {
        return guard.map(ListenerGuard::refusedConnections).orElse(0L);
    }

    /** Connections closed because their headers did not arrive within {@link ConnectionLimits#headerTimeout()}. */
    public long headerTimeouts() {
        return guard.map(ListenerGuard::headerTimeouts).orElse(0L);
    }

    /** The bound port, the real one when 0 was asked for. */
    public int port() {
        return server.port();
    }

    /** Stops accepting connections and waits for requests in flight, up to Helidon's grace period. */
    @Override
    public void close() {
        server.stop();
        guard.ifPresent(ListenerGuard::close);
    }

    private static MallardException bindFailed(String host, int port, RuntimeException cause) {
        return new MallardException(ErrorCode.SYSTEM_HTTP_BIND_FAILED, "cannot serve HTTP on " + host + ":" + port
                + ": the address is in use or may not be bound (the log above names the cause);"
                + " choose another port or stop the process that holds it", cause);
    }
}
