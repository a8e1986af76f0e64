// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.source.webhook;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.http.HttpEndpoints;
import dev.mallard.flow.config.PipelineConfig;
import dev.mallard.flow.source.Message;
import dev.mallard.flow.source.QueuedMessages;
import dev.mallard.flow.source.MeteredSource;
import dev.mallard.core.metrics.MetricsRegistry;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import dev.mallard.flow.source.Source;
import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.Method;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.helidon.webserver.http1.Http1Config;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Events POSTed to {@code /events}: each JSON object of a body (one object, or JSONL) is one message. Positions:
 * topic {@value #TOPIC}, partition 0, offsets counting up from 0 (or, with a state file, from the next offset it
 * recorded), one per event in arrival order, so the events of one request are consecutive.
 *
 * <p>A request's thread (virtual, one per request) verifies, splits and queues the body; the pipeline thread
 * polls the queue. A full queue holds the request until the pipeline catches up: backpressure, not failure.
 * With {@code ack: after_flush} the answer waits for the commit of the batch holding the request's last event.
 */
public final class WebhookSource implements Source, MeteredSource {
    public static final String TOPIC = "webhook";
    public static final int PARTITION = 0;
    /** Events a queue holds per event of batch_size, before a request waits. */
    private static final int QUEUED_BATCHES = 4;
    private static final Logger LOG = LoggerFactory.getLogger(WebhookSource.class);
    private static final byte[] RECEIVED = "{\"status\":\"received\"}".getBytes(StandardCharsets.UTF_8);
    private static final byte[] FLUSHED = "{\"status\":\"flushed\"}".getBytes(StandardCharsets.UTF_8);
    private static final byte[] NOT_FLUSHED = "{\"detail\":\"Not flushed\"}".getBytes(StandardCharsets.UTF_8);

    private final WebhookSettings settings;
    private final BlockingQueue<Message> queue;
    private final ReentrantLock admitting = new ReentrantLock();
    /** after_flush: the answer of each waiting request, by the offset of its last event. */
    private final ConcurrentSkipListMap<Long, CompletableFuture<Boolean>> awaitingFlush = new ConcurrentSkipListMap<>();
    private final RequestTimeouts timeouts;
    private final HttpEndpoints http;
    private long nextOffset;
    private volatile boolean open = true;
    private volatile Meters meters;

    /** webhook_requests_total by status code and webhook_request_duration_seconds; /healthz is not counted. */
    private record Meters(MetricsRegistry registry, Tags tags, Timer duration) {
        void record(int statusCode, long startedNanos) {
            Counter.builder("webhook_requests").description("POST /events requests answered, by HTTP status code")
                    .tags(tags.and("status_code", Integer.toString(statusCode))).register(registry.meters()).increment();
            duration.record(System.nanoTime() - startedNanos, TimeUnit.NANOSECONDS);
        }
    }

    /**
     * Binds and starts serving before it returns.
     *
     * @param firstOffset the offset of the first event: 0, or the next offset a state file recorded
     * @param queueCapacity events held before a request waits for the pipeline
     * @throws MallardException {@code system.http.bind_failed} when the address cannot be bound
     */
    public WebhookSource(WebhookSettings settings, long firstOffset, int queueCapacity) {
        this.settings = requireNonNull(settings, "settings is null");
        this.queue = new ArrayBlockingQueue<>(Math.max(1, queueCapacity));
        this.nextOffset = firstOffset;
        WebhookSettings.Timeouts limits = settings.timeouts();
        this.timeouts = new RequestTimeouts(limits.header(), limits.body(), limits.idle());
        try {
            this.http = HttpEndpoints.start(settings.host(), settings.port(), listener -> listener
                    .maxPayloadSize(settings.maxBodyBytes())
                    .maxTcpConnections(settings.maxConnections())
                    .addProtocol(Http1Config.builder()
                            .addReceiveListener(timeouts.receiveListener())
                            .addSendListener(timeouts.sendListener())
                            .build())
                    // Helidon closes a connection waiting for a request line once it has been idle this long; it
                    // looks every idleConnectionPeriod, so the period is a small part of the timeout.
                    .idleConnectionTimeout(limits.idle())
                    .idleConnectionPeriod(idleCheckPeriod(limits.idle()))
                    // A connection that sends nothing at all is never seen by that check.
                    .connectionOptions(new AcceptedConnections(io.helidon.common.socket.SocketOptions.builder().tcpNoDelay(true).build(),
                            timeouts)), this::routes);
        } catch (RuntimeException e) {
            timeouts.close();
            throw e;
        }
        LOG.info("webhook source listening addr={}:{} signature={} ack={} max_body_bytes={} max_connections={} first_offset={}"
                        + " header_timeout={} body_timeout={} idle_timeout={}",
                settings.host(), http.port(), settings.signature().map(s -> "hmac " + s.header()).orElse("none"),
                settings.ack().name().toLowerCase(java.util.Locale.ROOT), settings.maxBodyBytes(), settings.maxConnections(), firstOffset,
                limits.header(), limits.body(), limits.idle());
    }

    /**
     * The source a pipeline configures: its first offset follows the state file's, and {@code ack: after_flush}
     * is refused on a pipeline with a window, whose buckets publish later than the batch that filled them.
     */
    public static WebhookSource open(PipelineConfig config, Function<Partition, Optional<Long>> storedOffsets) {
        WebhookSettings settings = WebhookSettings.of(config.pipeline().source().settings());
        if (settings.ack() == WebhookSettings.Ack.AFTER_FLUSH && !config.windows().isEmpty()) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "pipeline.source.webhook.ack is after_flush but the pipeline"
                    + " has a window (" + config.windows().getFirst().path() + "), whose rows reach the sink after the batch"
                    + " commits; use ack: on_receive");
        }
        long first = storedOffsets.apply(new Partition(TOPIC, PARTITION)).orElse(0L);
        return new WebhookSource(settings, first, Math.max(1_000, QUEUED_BATCHES * config.pipeline().batchSize()));
    }

    private static Duration idleCheckPeriod(Duration idle) {
        long millis = Math.clamp(idle.toMillis() / 10, 20L, 5_000L);
        return Duration.ofMillis(millis);
    }

    @Override
    public void registerMeters(MetricsRegistry registry, String pipeline) {
        Tags tags = Tags.of("pipeline", pipeline);
        meters = new Meters(registry, tags, registry.latency("webhook_request_duration",
                "Time from a POST /events request's start to its answer (after_flush: until the flush)", tags));
    }

    private void routes(HttpRouting.Builder routes) {
        routes.post("/events", this::events)
                .get("/healthz", this::healthz)
                .route(Method.HEAD, "/healthz", this::healthz);
    }

    /** The bound port, the real one when 0 was asked for. */
    public int port() {
        return http.port();
    }

    private void healthz(ServerRequest request, ServerResponse response) {
        response.status(open ? Status.OK_200 : Status.SERVICE_UNAVAILABLE_503).header(HeaderValues.CONTENT_TYPE_JSON);
        response.send((open ? "{\"status\":\"ok\"}" : "{\"status\":\"closing\"}").getBytes(StandardCharsets.UTF_8));
    }

    private void events(ServerRequest request, ServerResponse response) throws Exception {
        long started = System.nanoTime();
        int status = 500;
        Optional<RequestTimeouts.Exchange> exchange = timeouts.current();
        try {
            receive(request, response, exchange);
            status = response.status().code();
        } catch (io.helidon.http.HttpException e) {
            status = e.status().code(); // e.g. 413 for a chunked body read past max_body_bytes
            throw e;
        } catch (io.helidon.http.RequestException e) {
            status = e.status().code();
            throw e;
        } finally {
            if (exchange.isPresent() && exchange.get().timedOut()) {
                status = Status.REQUEST_TIMEOUT_408.code(); // answered by RequestTimeouts, which closed the connection
            }
            Meters current = meters;
            if (current != null) {
                current.record(status, started);
            }
        }
    }

    /** Its request was answered 408 by {@link RequestTimeouts} and its connection closed: nothing more to send. */
    private static final class BodyTimedOut extends java.io.UncheckedIOException {
        BodyTimedOut() {
            super(new java.io.IOException("the body was not read within body_timeout_seconds; answered 408"));
        }
    }

    private void receive(ServerRequest request, ServerResponse response, Optional<RequestTimeouts.Exchange> exchange) throws Exception {
        if (!open) {
            answer(response, Status.SERVICE_UNAVAILABLE_503, detail("the pipeline is stopping; send again later"));
            return;
        }
        // The listener's maxPayloadSize answers 413 for a declared length over the bound before this runs, and
        // stops reading a chunked body at the bound.
        byte[] body = request.content().as(byte[].class);
        if (exchange.isPresent() && !exchange.get().bodyRead()) {
            throw new BodyTimedOut(); // read whole only after the 408: dropped, as the sender was told
        }
        if (body.length > settings.maxBodyBytes()) {
            answer(response, Status.REQUEST_ENTITY_TOO_LARGE_413, detail("the body is over max_body_bytes (" + settings.maxBodyBytes() + ")"));
            return;
        }
        if (settings.signature().isPresent()) {
            HmacSignature signature = settings.signature().get();
            switch (signature.verify(request.headers().first(HeaderNames.create(signature.header())), body)) {
                case MISSING -> {
                    answer(response, Status.BAD_REQUEST_400, detail("missing signature header " + signature.header()));
                    return;
                }
                case INVALID -> {
                    answer(response, Status.FORBIDDEN_403, detail("invalid signature"));
                    return;
                }
                case VALID -> { }
            }
        }
        List<byte[]> events;
        try {
            events = JsonEvents.split(body);
        } catch (JsonEvents.BadBody e) {
            answer(response, Status.BAD_REQUEST_400, detail(e.getMessage()));
            return;
        }
        Optional<CompletableFuture<Boolean>> flushed = enqueue(events);
        if (flushed.isEmpty()) {
            answer(response, Status.OK_200, RECEIVED);
            return;
        }
        boolean done;
        try {
            done = flushed.get().get();
        } catch (ExecutionException e) {
            done = false;
        }
        answer(response, done ? Status.OK_200 : Status.SERVICE_UNAVAILABLE_503, done ? FLUSHED : NOT_FLUSHED);
    }

    /**
     * Gives the events their offsets and queues them in order, waiting while the queue is full. Returns the
     * request's flush answer with {@code ack: after_flush}, none with on_receive. When the source closes before
     * every event was queued, the flush answer is false whatever the ack, and the request is answered 503.
     */
    private Optional<CompletableFuture<Boolean>> enqueue(List<byte[]> events) throws InterruptedException {
        admitting.lockInterruptibly();
        try {
            // The flush answer waits under the request's last offset before its first event can be polled: a
            // pipeline may poll and commit all of them before this method returns.
            Optional<CompletableFuture<Boolean>> flushed = Optional.empty();
            long last = nextOffset + events.size() - 1;
            if (settings.ack() == WebhookSettings.Ack.AFTER_FLUSH) {
                flushed = Optional.of(new CompletableFuture<>());
                awaitingFlush.put(last, flushed.get());
            }
            for (byte[] event : events) {
                Message message = new Message(TOPIC, PARTITION, nextOffset, null, event);
                while (!queue.offer(message, 100, TimeUnit.MILLISECONDS)) {
                    if (!open) {
                        awaitingFlush.remove(last);
                        return Optional.of(CompletableFuture.completedFuture(false));
                    }
                }
                nextOffset++;
            }
            if (!open) {
                flushed.ifPresent(answer -> answer.complete(false));
            }
            return flushed;
        } finally {
            admitting.unlock();
        }
    }

    private static void answer(ServerResponse response, Status status, byte[] json) {
        response.status(status).header(HeaderValues.CONTENT_TYPE_JSON).send(json);
    }

    private static byte[] detail(String text) {
        return ("{\"detail\":\"" + text.replace("\\", "\\\\").replace("\"", "\\\"") + "\"}").getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public List<Message> poll(Duration timeout, int max) {
        return QueuedMessages.poll(queue, timeout, max);
    }

    /** Answers every after_flush request whose last event is before the committed position. */
    @Override
    public void commit(Map<Partition, Long> nextOffsets) {
        Long next = nextOffsets.get(new Partition(TOPIC, PARTITION));
        if (next == null) {
            return;
        }
        var done = awaitingFlush.headMap(next, false);
        done.values().forEach(flushed -> flushed.complete(true));
        done.clear();
    }

    /**
     * Stops admitting (healthz and new POSTs answer 503), answers every after_flush request still waiting with
     * 503, then stops the server once requests in flight are answered. Events queued but not yet polled are
     * dropped: with on_receive their senders were told "received"; after_flush senders were not.
     */
    @Override
    public void close() {
        open = false;
        awaitingFlush.values().forEach(flushed -> flushed.complete(false));
        awaitingFlush.clear();
        if (!queue.isEmpty()) {
            LOG.warn("webhook source closing with queued events not processed count={}", queue.size());
        }
        queue.clear();
        http.close();
        timeouts.close();
    }

    @Override
    public String toString() {
        return "pipeline.source.webhook";
    }
}
