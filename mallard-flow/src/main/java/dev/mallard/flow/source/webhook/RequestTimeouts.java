// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.source.webhook;

import static java.util.Objects.requireNonNull;

import io.helidon.common.buffers.BufferData;
import io.helidon.http.Headers;
import io.helidon.http.HttpPrologue;
import io.helidon.http.Status;
import io.helidon.webserver.ConnectionContext;
import io.helidon.webserver.http1.Http1ConnectionListener;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The header and body timeouts of the webhook listener, which Helidon does not have: its socket read timeout
 * is not applied to the server's sockets, and its idle check spares a connection once its request line is read.
 *
 * <p>Helidon tells its HTTP/1 listeners when a request line and its headers have been read and when a response
 * starts, all on the thread that serves the connection, which is also the thread that runs the route. So the
 * request a thread is reading is found by the thread. A timer closes the connection when the headers are not
 * complete within the header timeout, and answers 408 then closes it when the body is not read within the body
 * timeout. A route reading the body asks {@link Exchange#bodyRead()} before using it: once the body has timed out the
 * answer is false and the body is dropped, so nothing of a request answered 408 is queued.
 */
final class RequestTimeouts implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RequestTimeouts.class);
    static final byte[] REQUEST_TIMEOUT = ("HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\n"
            + "Content-Length: 42\r\nConnection: close\r\n\r\n{\"detail\":\"the body was not sent in time\"}")
            .getBytes(StandardCharsets.US_ASCII);

    private enum Phase { HEADERS, BODY, HANDLING, TIMED_OUT }

    private final Duration header;
    private final Duration body;
    private final Duration firstRequest;
    /** Connections accepted whose first request line has not been read, by remote address, with their deadline. */
    private final Map<java.net.SocketAddress, ScheduledFuture<?>> awaitingFirstRequest = new ConcurrentHashMap<>();
    private final ScheduledExecutorService timer;
    /** The request each connection thread is reading; removed once its answer starts or it times out. */
    private final Map<Thread, Exchange> reading = new ConcurrentHashMap<>();

    /** @param firstRequest how long an accepted connection may take to send its first request line (the idle timeout) */
    RequestTimeouts(Duration header, Duration body, Duration firstRequest) {
        this.header = requireNonNull(header, "header is null");
        this.body = requireNonNull(body, "body is null");
        this.firstRequest = requireNonNull(firstRequest, "firstRequest is null");
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1,
                Thread.ofPlatform().name("webhook-timeouts").daemon().factory());
        executor.setRemoveOnCancelPolicy(true);
        this.timer = Executors.unconfigurableScheduledExecutorService(executor);
    }

    /** Told of each request line and each request's headers. */
    Http1ConnectionListener receiveListener() {
        return new Http1ConnectionListener() {
            @Override
            public void prologue(ConnectionContext ctx, HttpPrologue prologue) {
                ScheduledFuture<?> first = awaitingFirstRequest.remove(ctx.remotePeer().address());
                if (first != null) {
                    first.cancel(false);
                }
                Exchange exchange = new Exchange(ctx, Thread.currentThread());
                Exchange previous = reading.put(exchange.thread, exchange);
                if (previous != null) {
                    previous.disarm();
                }
                exchange.arm(Phase.HEADERS, header);
            }

            @Override
            public void headers(ConnectionContext ctx, Headers headers) {
                Exchange exchange = reading.get(Thread.currentThread());
                if (exchange != null) {
                    exchange.advance(Phase.HEADERS, Phase.BODY, body);
                }
            }
        };
    }

    /**
     * Times a connection just accepted (on Helidon's accepting thread): closed when no request line is read within
     * the idle timeout. Closing the channel ends the read Helidon blocks in, which frees the connection's slot.
     */
    void accepted(java.nio.channels.SocketChannel channel) {
        java.net.SocketAddress remote;
        try {
            remote = channel.getRemoteAddress();
        } catch (java.io.IOException e) {
            return; // already closed
        }
        try {
            ScheduledFuture<?> deadline = timer.schedule(() -> {
                if (awaitingFirstRequest.remove(remote) != null) {
                    LOG.info("webhook connection sent no request in time, closing it phase=idle remote={}", remote);
                    try {
                        channel.close();
                    } catch (java.io.IOException e) {
                        LOG.debug("webhook connection close failed remote={} cause={}", remote, e.toString());
                    }
                }
            }, firstRequest.toNanos(), TimeUnit.NANOSECONDS);
            ScheduledFuture<?> previous = awaitingFirstRequest.put(remote, deadline);
            if (previous != null) {
                previous.cancel(false);
            }
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // closing: the server stops its connections itself
        }
    }

    /** Told when a response starts: its request is no longer being read. */
    Http1ConnectionListener sendListener() {
        return new Http1ConnectionListener() {
            @Override
            public void status(ConnectionContext ctx, Status status) {
                answered();
            }
        };
    }

    /** The request the calling connection thread is reading: a route asks for it before it reads the body. */
    java.util.Optional<Exchange> current() {
        return java.util.Optional.ofNullable(reading.get(Thread.currentThread()));
    }

    /** Forgets the request this thread was reading; its answer has started or its connection has ended. */
    void answered() {
        Exchange exchange = reading.remove(Thread.currentThread());
        if (exchange != null) {
            exchange.disarm();
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
        reading.clear();
        awaitingFirstRequest.clear();
    }

    /** One request being read. */
    final class Exchange {
        private final ConnectionContext ctx;
        private final Thread thread;
        private final AtomicReference<Phase> phase = new AtomicReference<>(Phase.HEADERS);
        private volatile ScheduledFuture<?> deadline;

        Exchange(ConnectionContext ctx, Thread thread) {
            this.ctx = ctx;
            this.thread = thread;
        }

        /**
         * Called by the route once it has read the whole body: stops the body's clock.
         *
         * @return false when the body timed out first (it was answered 408 and must be dropped)
         */
        boolean bodyRead() {
            return advance(Phase.BODY, Phase.HANDLING, null);
        }

        /** Whether the body timed out (a read that then failed did so because the connection was closed). */
        boolean timedOut() {
            return phase.get() == Phase.TIMED_OUT;
        }

        void arm(Phase next, Duration timeout) {
            phase.set(next);
            schedule(next, timeout);
        }

        /** Moves from one phase to the next (and its clock) unless the request timed out meanwhile. */
        boolean advance(Phase from, Phase to, Duration timeout) {
            ScheduledFuture<?> current = deadline;
            if (!phase.compareAndSet(from, to)) {
                return phase.get() == to;
            }
            if (current != null) {
                current.cancel(false);
            }
            if (timeout != null) {
                schedule(to, timeout);
            }
            return true;
        }

        private void schedule(Phase watched, Duration timeout) {
            try {
                deadline = timer.schedule(() -> expire(watched), timeout.toNanos(), TimeUnit.NANOSECONDS);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                // closing: the server stops its connections itself
            }
        }

        void disarm() {
            ScheduledFuture<?> current = deadline;
            if (current != null) {
                current.cancel(false);
            }
        }

        private void expire(Phase watched) {
            if (!phase.compareAndSet(watched, Phase.TIMED_OUT)) {
                return;
            }
            LOG.info("webhook request timed out, closing its connection phase={} remote={}",
                    watched == Phase.HEADERS ? "headers" : "body", ctx.remotePeer().address());
            try {
                if (watched == Phase.BODY) {
                    // The connection's thread is blocked reading the body and has written nothing of a response.
                    ctx.serverSocket().write(BufferData.create(REQUEST_TIMEOUT));
                }
            } catch (RuntimeException e) {
                LOG.debug("webhook 408 not delivered remote={} cause={}", ctx.remotePeer().address(), e.toString());
            } finally {
                ctx.serverSocket().close();
                reading.remove(thread, this);
            }
        }
    }
}
