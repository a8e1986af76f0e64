// SPDX-License-Identifier: Apache-2.0
package dev.mallard.client.logback;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.UnsynchronizedAppenderBase;
import dev.mallard.client.ArrowProducer;
import dev.mallard.client.HttpArrowProducer;
import dev.mallard.client.ProducerFullException;
import dev.mallard.client.ProducerOptions;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A Logback appender that ships every event as a row of {@link #SCHEMA} into an ingestion queue through an
 * {@link ArrowProducer}. Configured in {@code logback.xml} (see docs/client.md), or given a producer with
 * {@link #setProducer}. Events of the client's own loggers ({@code dev.mallard.client}) are not shipped, so a
 * producer's warnings cannot feed back into it.
 *
 * <p>By default a full producer drops the event (counted by {@link #droppedEvents()}) rather than block the logging
 * thread: {@code <overflow>BLOCK</overflow>} waits instead.
 */
public final class MallardAppender extends UnsynchronizedAppenderBase<ILoggingEvent> {
    /**
     * One row per event: {@code sequence} (BIGINT, this appender's count from 0), {@code timestamp} (TIMESTAMP, UTC,
     * microseconds), {@code level}, {@code logger}, {@code thread}, {@code message} (the formatted message),
     * {@code throwable} (the stack trace, null without one), {@code mdc} (MAP(VARCHAR, VARCHAR)),
     * {@code application} (the appender's {@code application}, null when not set).
     */
    public static final Schema SCHEMA = new Schema(List.of(
            Field.notNullable("sequence", new ArrowType.Int(64, true)),
            Field.notNullable("timestamp", new ArrowType.Timestamp(TimeUnit.MICROSECOND, null)),
            Field.notNullable("level", ArrowType.Utf8.INSTANCE),
            Field.notNullable("logger", ArrowType.Utf8.INSTANCE),
            Field.nullable("thread", ArrowType.Utf8.INSTANCE),
            Field.nullable("message", ArrowType.Utf8.INSTANCE),
            Field.nullable("throwable", ArrowType.Utf8.INSTANCE),
            stringMap("mdc"),
            Field.nullable("application", ArrowType.Utf8.INSTANCE)));

    private static final String OWN_LOGGERS = "dev.mallard.client";

    private final AtomicLong sequence = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    private final ThreadLocal<Boolean> appending = ThreadLocal.withInitial(() -> false);
    private ArrowProducer producer;
    private boolean ownsProducer;

    private String url;
    private String transport = "http";
    private String queue;
    private String username;
    private String password;
    private String token;
    private String producerId;
    private String application;
    private String spillDirectory;
    private int maxBatchRows = ProducerOptions.DEFAULT_MAX_BATCH_ROWS;
    private long maxBatchDelayMillis = ProducerOptions.DEFAULT_MAX_BATCH_DELAY.toMillis();
    private long maxBufferedBytes = 8L << 20;
    private long closeTimeoutMillis = ProducerOptions.DEFAULT_CLOSE_TIMEOUT.toMillis();
    private long requestTimeoutMillis = ProducerOptions.DEFAULT_REQUEST_TIMEOUT.toMillis();
    private String overflow = ProducerOptions.Overflow.REFUSE.name();
    private long initialBackoffMillis = ProducerOptions.DEFAULT_INITIAL_BACKOFF.toMillis();
    private long maxBackoffMillis = ProducerOptions.DEFAULT_MAX_BACKOFF.toMillis();

    static Field stringMap(String name) {
        Field entries = new Field("entries", FieldType.notNullable(ArrowType.Struct.INSTANCE), List.of(
                Field.notNullable("key", ArrowType.Utf8.INSTANCE),
                Field.nullable("value", ArrowType.Utf8.INSTANCE)));
        return new Field(name, FieldType.nullable(new ArrowType.Map(false)), List.of(entries));
    }

    /** Ships through {@code producer} (whose schema must be {@link #SCHEMA}); the appender does not close it. */
    public void setProducer(ArrowProducer producer) {
        this.producer = producer;
        this.ownsProducer = false;
    }

    /** The server: {@code http://host:8081} for HTTP, {@code grpc://host:59307} (or {@code grpc+tls://}) for Flight. */
    public void setUrl(String url) { this.url = url; }
    /** {@code http} (default) or {@code flight}. */
    public void setTransport(String transport) { this.transport = transport; }
    public void setQueue(String queue) { this.queue = queue; }
    public void setUsername(String username) { this.username = username; }
    public void setPassword(String password) { this.password = password; }
    public void setToken(String token) { this.token = token; }
    public void setProducerId(String producerId) { this.producerId = producerId; }
    public void setApplication(String application) { this.application = application; }
    public void setSpillDirectory(String spillDirectory) { this.spillDirectory = spillDirectory; }
    public void setMaxBatchRows(int maxBatchRows) { this.maxBatchRows = maxBatchRows; }
    public void setMaxBatchDelayMillis(long maxBatchDelayMillis) { this.maxBatchDelayMillis = maxBatchDelayMillis; }
    public void setMaxBufferedBytes(long maxBufferedBytes) { this.maxBufferedBytes = maxBufferedBytes; }
    public void setCloseTimeoutMillis(long closeTimeoutMillis) { this.closeTimeoutMillis = closeTimeoutMillis; }
    public void setRequestTimeoutMillis(long requestTimeoutMillis) { this.requestTimeoutMillis = requestTimeoutMillis; }
    public void setInitialBackoffMillis(long initialBackoffMillis) { this.initialBackoffMillis = initialBackoffMillis; }
    public void setMaxBackoffMillis(long maxBackoffMillis) { this.maxBackoffMillis = maxBackoffMillis; }
    /** {@code REFUSE} (default: drop the event when full) or {@code BLOCK}. */
    public void setOverflow(String overflow) { this.overflow = overflow; }

    /** Events dropped because the producer was full or refused them. */
    public long droppedEvents() {
        return dropped.get();
    }

    /** The producer events go through, once started. */
    public ArrowProducer producer() {
        return producer;
    }

    @Override
    public void start() {
        if (producer == null) {
            try {
                producer = build();
                ownsProducer = true;
            } catch (RuntimeException e) {
                addError("cannot start the Mallard appender: " + e.getMessage(), e);
                return;
            }
        } else if (!producer.schema().equals(SCHEMA)) {
            addError("the producer given to the Mallard appender must have MallardAppender.SCHEMA");
            return;
        }
        super.start();
    }

    private ArrowProducer build() {
        if (url == null || queue == null) {
            throw new IllegalArgumentException("set <url> and <queue>");
        }
        ProducerOptions.Builder options = ProducerOptions.builder()
                .maxBatchRows(maxBatchRows)
                .maxBatchDelay(Duration.ofMillis(maxBatchDelayMillis))
                .maxBufferedBytes(maxBufferedBytes)
                .closeTimeout(Duration.ofMillis(closeTimeoutMillis))
                .requestTimeout(Duration.ofMillis(requestTimeoutMillis))
                .initialBackoff(Duration.ofMillis(initialBackoffMillis))
                .maxBackoff(Duration.ofMillis(maxBackoffMillis))
                .overflow(ProducerOptions.Overflow.valueOf(overflow.trim().toUpperCase(java.util.Locale.ROOT)))
                .maxBlock(Duration.ofMillis(closeTimeoutMillis));
        if (producerId != null) {
            options.producerId(producerId);
        }
        if (spillDirectory != null) {
            options.spillDirectory(Path.of(spillDirectory));
        }
        switch (transport.trim().toLowerCase(java.util.Locale.ROOT)) {
            case "http" -> {
                HttpArrowProducer.Builder http = HttpArrowProducer.builder(URI.create(url), queue, SCHEMA).options(options.build());
                if (token != null) {
                    String t = token;
                    http.token(() -> t);
                } else if (username != null) {
                    http.login(username, password == null ? "" : password);
                }
                return http.build();
            }
            case "flight" -> {
                // In its own class, so an HTTP-only application needs no flight-core on its class path.
                return FlightTarget.producer(url, queue, SCHEMA, options.build(), token, username, password);
            }
            default -> throw new IllegalArgumentException("transport must be http or flight, got " + transport);
        }
    }

    @Override
    protected void append(ILoggingEvent event) {
        if (event.getLoggerName().startsWith(OWN_LOGGERS) || appending.get()) {
            return;
        }
        appending.set(true);
        try {
            Map<String, String> mdc = event.getMDCPropertyMap();
            producer.addRow(sequence.getAndIncrement(), Instant.ofEpochMilli(event.getTimeStamp()), event.getLevel().toString(),
                    event.getLoggerName(), event.getThreadName(), event.getFormattedMessage(),
                    event.getThrowableProxy() == null ? null : ThrowableProxyUtil.asString(event.getThrowableProxy()),
                    mdc == null ? Map.of() : mdc, application);
        } catch (ProducerFullException | IllegalStateException e) {
            dropped.incrementAndGet();
        } finally {
            appending.set(false);
        }
    }

    @Override
    public void stop() {
        super.stop();
        if (producer != null && ownsProducer) {
            producer.close();
        }
    }
}
