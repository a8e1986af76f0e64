// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.source.websocket;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.metrics.MetricsRegistry;
import dev.mallard.core.retry.Backoff;
import dev.mallard.flow.config.PipelineConfig;
import dev.mallard.flow.source.Message;
import dev.mallard.flow.source.MeteredSource;
import dev.mallard.flow.source.QueuedMessages;
import dev.mallard.flow.source.Source;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Tags;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Text messages from a WebSocket ({@code ws://} or {@code wss://}), each one JSON event, through the JDK's client.
 * A dropped or refused connection is retried for as long as the source is open, with capped exponential backoff
 * and jitter ({@link Backoff#DEFAULT}); the wait starts over once a connection delivers a message.
 *
 * <p>Positions: topic {@value #TOPIC}, partition 0, offsets counting up from 0 (or, with a state file, from the
 * next offset it recorded), one per message in arrival order. A WebSocket has no replay: what the server sent
 * while no connection was open is not received, and on_receive is the only acknowledgement there is.
 *
 * <p>Messages are requested one at a time and only once the previous one is queued, so a full queue stops reading
 * from the socket (TCP flow control pushes back on the server) rather than growing memory.
 */
public final class WebSocketSource implements Source, MeteredSource {
    public static final String TOPIC = "websocket";
    public static final int PARTITION = 0;
    private static final Logger LOG = LoggerFactory.getLogger(WebSocketSource.class);
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
    private static final int QUEUED_BATCHES = 4;

    /** Where the connection is, for the connection-state gauge. */
    public enum State {
        CONNECTING, CONNECTED, WAITING_TO_RECONNECT, CLOSED
    }

    private final URI uri;
    private final Backoff backoff;
    private final BlockingQueue<Message> queue;
    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    private final HttpClient client;
    private final AtomicLong nextOffset;
    private final AtomicLong reconnects = new AtomicLong();
    private volatile State state = State.CONNECTING;
    private volatile boolean open = true;
    private volatile WebSocket current;

    /** Connects (in the background) with {@link Backoff#DEFAULT} between attempts. */
    public WebSocketSource(URI uri, long firstOffset, int queueCapacity) {
        this(uri, firstOffset, queueCapacity, Backoff.DEFAULT);
    }

    WebSocketSource(URI uri, long firstOffset, int queueCapacity, Backoff backoff) {
        this.uri = requireNonNull(uri, "uri is null");
        this.backoff = requireNonNull(backoff, "backoff is null");
        this.queue = new ArrayBlockingQueue<>(Math.max(1, queueCapacity));
        this.nextOffset = new AtomicLong(firstOffset);
        this.client = HttpClient.newBuilder().executor(threads).connectTimeout(CONNECT_TIMEOUT).build();
        threads.submit(this::connectLoop);
    }

    /** The source a pipeline configures; its first offset follows the state file's. */
    public static WebSocketSource open(PipelineConfig config, Function<Partition, Optional<Long>> storedOffsets) {
        String text = config.pipeline().source().settings().path("uri").asText();
        URI uri;
        try {
            uri = URI.create(text);
        } catch (IllegalArgumentException e) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "pipeline.source.websocket.uri is not a URI: " + e.getMessage());
        }
        if (!"ws".equals(uri.getScheme()) && !"wss".equals(uri.getScheme()) || uri.getHost() == null) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "pipeline.source.websocket.uri must be ws://host/... or wss://host/..., was " + text);
        }
        long first = storedOffsets.apply(new Partition(TOPIC, PARTITION)).orElse(0L);
        return new WebSocketSource(uri, first, Math.max(1_000, QUEUED_BATCHES * config.pipeline().batchSize()), Backoff.DEFAULT);
    }

    /** Connects, waits for the connection to end, waits the backoff, and again, until closed. */
    private void connectLoop() {
        int failures = 0;
        while (open) {
            state = State.CONNECTING;
            Connection connection = new Connection();
            try {
                current = client.newWebSocketBuilder().connectTimeout(CONNECT_TIMEOUT).buildAsync(uri, connection).get();
                LOG.info("websocket connected uri={} reconnects={}", uri, reconnects.get());
                connection.ended.get();
                failures = connection.delivered ? 1 : failures + 1;
                LOG.warn("websocket connection ended uri={} reason={}", uri, connection.reason);
            } catch (InterruptedException e) {
                break;
            } catch (Exception e) {
                failures++;
                LOG.warn("websocket connect failed uri={} attempt={} error={}", uri, failures, rootMessage(e));
            }
            if (!open) {
                break;
            }
            state = State.WAITING_TO_RECONNECT;
            Duration wait = backoff.delay(Math.max(1, failures), ThreadLocalRandom.current());
            try {
                Thread.sleep(wait);
            } catch (InterruptedException e) {
                break;
            }
            reconnects.incrementAndGet();
        }
        state = State.CLOSED;
    }

    private static String rootMessage(Throwable e) {
        Throwable cause = e;
        while (cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause.toString();
    }

    /** One connection's listener: puts each complete text message on the queue, then asks for the next. */
    private final class Connection implements WebSocket.Listener {
        final CompletableFuture<Void> ended = new CompletableFuture<>();
        private final StringBuilder partial = new StringBuilder();
        volatile boolean delivered;
        volatile String reason = "";

        @Override
        public void onOpen(WebSocket webSocket) {
            // Here rather than when buildAsync's future completes: the client may deliver messages before that.
            state = State.CONNECTED;
            webSocket.request(1);
        }

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            partial.append(data);
            if (last) {
                byte[] value = partial.toString().getBytes(StandardCharsets.UTF_8);
                partial.setLength(0);
                if (!enqueue(value)) {
                    return null;
                }
                delivered = true;
            }
            webSocket.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
            LOG.debug("websocket binary frame ignored uri={} bytes={}", uri, data.remaining());
            webSocket.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String closeReason) {
            reason = "closed by the server status=" + statusCode + (closeReason.isEmpty() ? "" : " reason=" + closeReason);
            ended.complete(null);
            return null;
        }

        @Override
        public void onError(WebSocket webSocket, Throwable error) {
            reason = rootMessage(error);
            ended.complete(null);
        }
    }

    /** Queues one message at the next offset, waiting while the queue is full; false once the source closed. */
    private boolean enqueue(byte[] value) {
        Message message = new Message(TOPIC, PARTITION, nextOffset.get(), null, value);
        try {
            while (!queue.offer(message, 100, TimeUnit.MILLISECONDS)) {
                if (!open) {
                    return false;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
        nextOffset.incrementAndGet();
        return true;
    }

    @Override
    public List<Message> poll(Duration timeout, int max) {
        return QueuedMessages.poll(queue, timeout, max);
    }

    /** Nothing to tell a WebSocket server: it keeps no position. */
    @Override
    public void commit(Map<Partition, Long> nextOffsets) {}

    /** websocket_reconnects_total and websocket_connected (1 while a connection is open, else 0). */
    @Override
    public void registerMeters(MetricsRegistry registry, String pipeline) {
        Tags tags = Tags.of("pipeline", pipeline);
        FunctionCounter.builder("websocket_reconnects", reconnects, AtomicLong::doubleValue)
                .description("Connection attempts after the first").tags(tags).register(registry.meters());
        Gauge.builder("websocket_connected", this, source -> source.state == State.CONNECTED ? 1 : 0)
                .description("1 while the WebSocket connection is open, 0 while connecting, waiting to reconnect or closed")
                .tags(tags).register(registry.meters());
    }

    /** Connections attempted after the first. */
    public long reconnects() {
        return reconnects.get();
    }

    public State state() {
        return state;
    }

    @Override
    public void close() {
        open = false;
        WebSocket webSocket = current;
        if (webSocket != null) {
            webSocket.abort();
        }
        threads.shutdownNow();
        client.shutdownNow();
        if (!queue.isEmpty()) {
            LOG.warn("websocket source closing with received messages not processed count={}", queue.size());
        }
        queue.clear();
        state = State.CLOSED;
    }

    @Override
    public String toString() {
        return "pipeline.source.websocket " + uri;
    }
}
