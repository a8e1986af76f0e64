// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.http;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import io.helidon.common.socket.SocketOptions;
import io.helidon.http.Headers;
import io.helidon.http.HttpPrologue;
import io.helidon.webserver.ConnectionContext;
import io.helidon.webserver.http1.Http1ConnectionListener;
import java.io.IOException;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a listener started with {@link HttpEndpoints.ConnectionLimits} enforces that Helidon does not: a header timeout
 * and a connection cap that refuses instead of blocking.
 *
 * <p>Helidon's own cap ({@code maxTcpConnections}) stops accepting at the cap, so a client past it waits in the
 * kernel's backlog with no answer. Here every connection is accepted; Helidon hands each one to
 * {@link #configureSocket(SocketChannel)} on its accepting thread, where one past the cap is marked, counted and given
 * a short deadline. Its first request is answered {@code 503} with the coded JSON body, {@code Retry-After} and
 * {@code Connection: close} by {@link #filter} (so the client reads the answer, which closing at accept would lose to a
 * reset); one that sends nothing is closed at the deadline. Past twice the cap a connection is closed at once
 * (throwing there makes Helidon drop it and accept the next).
 *
 * <p>Helidon tells its HTTP/1 listeners when a request line and then its headers have been read, on the thread that
 * reads the connection. The request line arms a timer; the headers disarm it; a timer that fires closes the
 * connection, which ends the read the thread blocks in. A connection accepted is timed until its first request line
 * (the idle timeout), since Helidon's idle check does not see a connection that never sent a byte.
 */
final class ListenerGuard extends ForwardingSocketOptions implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ListenerGuard.class);
    private static final int RETRY_AFTER_SECONDS = 1;

    /** Thrown to Helidon for a refused connection: it closes it and accepts the next; no stack trace is needed. */
    private static final class Refused extends RuntimeException {
        Refused() {
            super("connection refused past http.max_connections", null, false, false);
        }
    }

    private final Duration headerTimeout;
    private final Duration firstRequestTimeout;
    private final int maxConnections;
    private final boolean plain;
    private final Set<SocketChannel> open = ConcurrentHashMap.newKeySet();
    /** Connections accepted past the cap, by remote address, until their first request is refused or their deadline closes them. */
    private final Map<java.net.SocketAddress, SocketChannel> overCap = new ConcurrentHashMap<>();
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong headerTimeouts = new AtomicLong();
    private final AtomicBoolean refusing = new AtomicBoolean();
    /** Connections accepted whose first request line has not been read, by remote address, with their deadline. */
    private final Map<java.net.SocketAddress, ScheduledFuture<?>> awaitingFirstRequest = new ConcurrentHashMap<>();
    /** The header deadline of the request each connection thread is reading. */
    private final Map<Thread, ScheduledFuture<?>> readingHeaders = new ConcurrentHashMap<>();
    private final ScheduledExecutorService timer;

    /**
     * @param firstRequestTimeout how long an accepted connection may take to send its first request line (the idle
     *     timeout; Helidon's idle check does not see a connection before its first bytes)
     * @param plain whether the listener speaks plain HTTP (a refusal is then answered; over TLS it is only closed)
     */
    ListenerGuard(SocketOptions options, Duration headerTimeout, Duration firstRequestTimeout, int maxConnections, boolean plain) {
        super(options);
        this.headerTimeout = requireNonNull(headerTimeout, "headerTimeout is null");
        this.firstRequestTimeout = requireNonNull(firstRequestTimeout, "firstRequestTimeout is null");
        this.maxConnections = maxConnections;
        this.plain = plain;
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, Thread.ofPlatform().name("http-header-timeouts").daemon().factory());
        executor.setRemoveOnCancelPolicy(true);
        this.timer = Executors.unconfigurableScheduledExecutorService(executor);
    }

    /** Connections refused past the cap since the listener started. */
    long refusedConnections() {
        return refused.get();
    }

    /** Connections closed because their headers did not arrive within the header timeout. */
    long headerTimeouts() {
        return headerTimeouts.get();
    }

    @Override
    public void configureSocket(SocketChannel channel) {
        super.configureSocket(channel);
        open.removeIf(known -> !known.isOpen());
        if (open.size() < maxConnections) {
            open.add(channel);
            if (refusing.compareAndSet(true, false)) {
                LOG.info("http accepting connections again open={} max_connections={}", open.size(), maxConnections);
            }
            awaitFirstRequest(channel);
            return;
        }
        long count = refused.incrementAndGet();
        if (refusing.compareAndSet(false, true)) {
            LOG.warn("http connection cap reached, answering new connections 503 max_connections={} refused_total={}", maxConnections, count);
        }
        overCap.values().removeIf(known -> !known.isOpen());
        java.net.SocketAddress remote;
        try {
            remote = channel.getRemoteAddress();
        } catch (IOException e) {
            throw new Refused();
        }
        if (!plain || remote == null || overCap.size() >= maxConnections) {
            throw new Refused();
        }
        overCap.put(remote, channel);
        try {
            timer.schedule(() -> {
                if (overCap.remove(remote, channel)) {
                    closeQuietly(channel);
                }
            }, Math.min(headerTimeout.toMillis(), REFUSED_GRACE.toMillis()), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            throw new Refused();
        }
    }

    /** Closes the connection unless its first request line is read within the idle timeout. */
    private void awaitFirstRequest(SocketChannel channel) {
        java.net.SocketAddress remote;
        try {
            remote = channel.getRemoteAddress();
        } catch (IOException e) {
            return; // already closed
        }
        if (remote == null) {
            return;
        }
        try {
            ScheduledFuture<?> deadline = timer.schedule(() -> {
                if (awaitingFirstRequest.remove(remote) != null && channel.isOpen()) {
                    LOG.info("http connection sent no request in time, closing it remote={} idle_timeout={}", remote, firstRequestTimeout);
                    closeQuietly(channel);
                }
            }, firstRequestTimeout.toNanos(), TimeUnit.NANOSECONDS);
            ScheduledFuture<?> previous = awaitingFirstRequest.put(remote, deadline);
            if (previous != null) {
                previous.cancel(false);
            }
        } catch (RejectedExecutionException e) {
            // closing: the server stops its connections itself
        }
    }

    /** A connection's time past the cap to send the request its refusal answers. */
    private static final Duration REFUSED_GRACE = Duration.ofSeconds(10);

    private static void closeQuietly(SocketChannel channel) {
        try {
            channel.close();
        } catch (IOException e) {
            LOG.debug("http connection close failed cause={}", e.toString());
        }
    }

    /** The first filter of the listener: a request on a connection accepted past the cap is answered 503 and its connection closed. */
    void filter(io.helidon.webserver.http.FilterChain chain, io.helidon.webserver.http.RoutingRequest request,
            io.helidon.webserver.http.RoutingResponse response) {
        SocketChannel refusedChannel = overCap.isEmpty() ? null : overCap.remove(request.remotePeer().address());
        if (refusedChannel != null) {
            try {
                response.status(io.helidon.http.Status.SERVICE_UNAVAILABLE_503)
                        .header(io.helidon.http.HeaderNames.CONTENT_TYPE, "application/json")
                        .header(io.helidon.http.HeaderNames.RETRY_AFTER, Integer.toString(RETRY_AFTER_SECONDS))
                        .header(io.helidon.http.HeaderValues.CONNECTION_CLOSE)
                        .send(refusalBody(maxConnections));
            } finally {
                // The answer is written; the connection does not stay open for another request.
                closeQuietly(refusedChannel);
            }
            return;
        }
        chain.proceed();
    }

    static String refusalBody(int maxConnections) {
        return "{\"error\":{\"code\":\"" + ErrorCode.SYSTEM_HTTP_TOO_MANY_CONNECTIONS.code() + "\",\"message\":\"the server holds "
                + maxConnections + " connections (http.max_connections); retry after " + RETRY_AFTER_SECONDS + " second\"}}";
    }

    /** Told of each request line (arms the header deadline) and each request's headers (disarms it). */
    Http1ConnectionListener receiveListener() {
        return new Http1ConnectionListener() {
            @Override
            public void prologue(ConnectionContext ctx, HttpPrologue prologue) {
                if (!awaitingFirstRequest.isEmpty()) {
                    ScheduledFuture<?> first = awaitingFirstRequest.remove(ctx.remotePeer().address());
                    if (first != null) {
                        first.cancel(false);
                    }
                }
                Thread reader = Thread.currentThread();
                try {
                    ScheduledFuture<?> deadline = timer.schedule(() -> expire(ctx, reader), headerTimeout.toNanos(), TimeUnit.NANOSECONDS);
                    ScheduledFuture<?> previous = readingHeaders.put(reader, deadline);
                    if (previous != null) {
                        previous.cancel(false);
                    }
                } catch (RejectedExecutionException e) {
                    // closing: the server stops its connections itself
                }
            }

            @Override
            public void headers(ConnectionContext ctx, Headers headers) {
                ScheduledFuture<?> deadline = readingHeaders.remove(Thread.currentThread());
                if (deadline != null) {
                    deadline.cancel(false);
                }
            }
        };
    }

    private void expire(ConnectionContext ctx, Thread reader) {
        ScheduledFuture<?> mine = readingHeaders.remove(reader);
        if (mine == null) {
            return;
        }
        headerTimeouts.incrementAndGet();
        LOG.info("http request headers not received in time, closing the connection remote={} header_timeout={}",
                ctx.remotePeer().address(), headerTimeout);
        ctx.serverSocket().close();
    }

    @Override
    public void close() {
        timer.shutdownNow();
        readingHeaders.clear();
        open.clear();
        overCap.clear();
        awaitingFirstRequest.clear();
    }
}
