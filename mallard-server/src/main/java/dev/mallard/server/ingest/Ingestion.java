// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.ingest;

import dev.mallard.server.http.HttpErrors;
import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.error.Redactor;
import dev.mallard.core.sql.Classification;
import dev.mallard.core.sql.ClassifiedStatement;
import dev.mallard.core.sql.StatementClassifier;
import dev.mallard.core.sql.StatementKind;
import dev.mallard.server.auth.AccessToken;
import dev.mallard.server.auth.TokenService;
import dev.mallard.server.config.AccessMode;
import dev.mallard.server.config.UserAccount;
import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PushbackInputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.zip.GZIPInputStream;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightProducer.StreamListener;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.PutResult;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest;
import org.apache.arrow.flight.sql.impl.FlightSql.DoPutUpdateResult;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.duckdb.DuckDBConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ingestion: Arrow batches pushed to {@code POST /v1/ingest?ingestion_queue=q} or a Flight {@code DoPut} of
 * {@code CommandStatementIngest} with the {@code ingestion_queue} option are spooled to the queue's temp directory
 * (the server holds at most {@code max_pending_write} such bytes, past it answering 429 / RESOURCE_EXHAUSTED), written
 * by the queue's {@link QueueWriter} into the warehouse and acknowledged once committed. See docs/ingestion.md.
 */
public final class Ingestion implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Ingestion.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    public static final String ARROW_STREAM = "application/vnd.apache.arrow.stream";
    public static final String QUEUE = "ingestion_queue";
    public static final String PARTITION = "x-dd-partition";
    public static final String SORT_ORDER = "x-dd-sort-order";
    public static final String FORMAT = "x-dd-format";
    public static final String PRODUCER_ID = "x-dd-producer-id";
    public static final String PRODUCER_BATCH_ID = "x-dd-producer-batch-id";
    public static final String ACCESS_TYPE = "x-dd-access-type";
    /** DazzleDuck's claim naming the queue a token may write; {@code ingestion_queue} is accepted too. */
    public static final String QUEUE_CLAIM = "x-dd-ingestion-queue";
    static final long RETRY_AFTER_SECONDS = 1;
    private static final long ACK_TIMEOUT_MINUTES = 10;
    private static final int CHUNK = 1 << 16;

    private final IngestionConfig config;
    private final Path warehouse;
    private final Path temp;
    private final Path logs;
    private final Supplier<DuckDBConnection> connections;
    private final BufferAllocator allocator;
    private final TokenService tokens;
    private final Map<String, UserAccount> users;
    private final AccessMode mode;
    private final Clock clock;
    private final Map<String, QueueWriter> writers = new ConcurrentHashMap<>();
    private final AtomicLong pending = new AtomicLong();
    private volatile MeterRegistry meters;
    private volatile Timer ackLatency;
    private final Map<String, io.micrometer.core.instrument.Counter> refusals = new ConcurrentHashMap<>();
    private volatile boolean closed;
    private volatile java.util.function.LongConsumer tableWritten = rows -> {};
    private volatile OtlpReceiver otlp;

    private Ingestion(IngestionConfig config, Path warehouse, Supplier<DuckDBConnection> connections, BufferAllocator allocator, TokenService tokens,
            List<UserAccount> users, AccessMode mode, Clock clock) {
        this.config = requireNonNull(config, "config is null");
        this.connections = requireNonNull(connections, "connections is null");
        this.allocator = requireNonNull(allocator, "allocator is null");
        this.tokens = requireNonNull(tokens, "tokens is null");
        this.users = requireNonNull(users, "users is null").stream().collect(java.util.stream.Collectors.toUnmodifiableMap(UserAccount::username, u -> u));
        this.mode = requireNonNull(mode, "mode is null");
        this.clock = requireNonNull(clock, "clock is null");
        try {
            Files.createDirectories(warehouse);
            this.warehouse = warehouse.toAbsolutePath().normalize();
            Path home = this.warehouse.resolve(".mallard-ingest");
            this.logs = home.resolve("log");
            this.temp = config.tempWriteLocation().map(this.warehouse::resolve).orElse(this.warehouse.resolve(IngestionConfig.DEFAULT_TEMP_WRITE_LOCATION));
            Files.createDirectories(logs);
            Files.createDirectories(temp);
        } catch (IOException e) {
            throw new MallardException(ErrorCode.SYSTEM_IO_FAILED, "cannot prepare ingestion in the warehouse " + warehouse + ": " + e.getMessage(), e);
        }
    }

    /** Adds ingestion's series (per queue: batches, rows, bytes, pending bytes; acknowledgement latency; refusals) to the server's. */
    public void bindMetrics(MeterRegistry registry) {
        requireNonNull(registry, "registry is null");
        ackLatency = Timer.builder("mallard_ingest_ack").description("From a batch's arrival to its acknowledgement (committed, durable)")
                .publishPercentiles(0.5, 0.99).register(registry);
        Gauge.builder("mallard_ingest_pending_bytes_total", pending, AtomicLong::get).baseUnit("bytes")
                .description("Bytes received but not yet written, over every queue (bounded by ingestion.max_pending_write)").register(registry);
        meters = registry;
        writers.values().forEach(this::register);
    }

    /**
     * Called with the rows after every insert into a queue's table: the server syncs its materialized views there, so
     * a view over a queue's table updates as batches land.
     */
    public void bindViews(java.util.function.LongConsumer afterWrite) {
        this.tableWritten = requireNonNull(afterWrite, "afterWrite is null");
    }

    /**
     * The directories ingestion writes in (each queue's, the temp location, {@code any_queue_path}): what DuckDB's
     * {@code allowed_directories} must admit when the server locks file access down.
     */
    public List<String> directories() {
        List<String> directories = new ArrayList<>();
        directories.add(temp.toString() + "/");
        for (QueueWriter writer : writers.values()) {
            directories.add(warehouse.resolve(writer.queue().path()).normalize() + "/");
        }
        config.anyQueuePath().ifPresent(path -> directories.add(warehouse.resolve(path).normalize() + "/"));
        return List.copyOf(directories);
    }

    /**
     * Opens every declared queue (and each undeclared one an earlier run wrote under {@code any_queue_path}),
     * finishing the commits a crash left and checking each transformation on DuckDB's parse tree.
     *
     * @param connections new connections to the served database; each queue writes on one of its own
     * @param users the configured users, whose fixed claims grant ingestion in the restricted modes
     */
    public static Ingestion open(IngestionConfig config, Path warehouse, Supplier<DuckDBConnection> connections, BufferAllocator allocator,
            TokenService tokens, List<UserAccount> users, AccessMode mode, Clock clock) {
        Ingestion ingestion = new Ingestion(config, warehouse, connections, allocator, tokens, users, mode, clock);
        try {
            for (IngestionConfig.Queue queue : config.queues()) {
                ingestion.writer(queue);
            }
            if (config.anyQueuePath().isPresent()) {
                try (var listing = Files.list(ingestion.logs)) {
                    for (Path log : listing.toList()) {
                        String name = log.getFileName().toString().replaceFirst("\\.jsonl$", "");
                        config.queue(name).ifPresent(ingestion::writer);
                    }
                }
            }
        } catch (RuntimeException | IOException e) {
            ingestion.close();
            if (e instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new MallardException(ErrorCode.SYSTEM_IO_FAILED, "cannot list the ingestion logs: " + e.getMessage(), e);
        }
        LOG.info("ingestion ready queues={} any_queue_path={} temp_write_location={} max_pending_write={}", ingestion.writers.keySet(),
                config.anyQueuePath().orElse("none"), ingestion.temp, config.maxPendingWrite());
        return ingestion;
    }

    private QueueWriter writer(IngestionConfig.Queue queue) {
        return writers.computeIfAbsent(queue.name(), name -> {
            Path directory = WarehousePaths.resolve(warehouse, name, queue.path());
            DuckDBConnection connection = connections.get();
            try {
                queue.transformation().ifPresent(sql -> checkTransformation(connection, queue.name(), sql));
                WarehouseWriter writer = new WarehouseWriter(queue, directory, temp.resolve(name), logs.resolve(name + ".jsonl"), connection,
                        allocator, clock, rows -> tableWritten.accept(rows));
                QueueWriter queueWriter = new QueueWriter(queue, writer, clock, this::release);
                if (meters != null) {
                    register(queueWriter);
                }
                return queueWriter;
            } catch (RuntimeException e) {
                try {
                    connection.close();
                } catch (SQLException closing) {
                    e.addSuppressed(closing);
                }
                throw e;
            }
        });
    }

    /** A transformation is one query, writing nothing, that reads the batch as {@code __this}: decided on DuckDB's parse tree. */
    static void checkTransformation(java.sql.Connection connection, String queue, String sql) {
        Classification classification;
        try {
            classification = new StatementClassifier().classify(connection, sql);
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "ingestion queue " + queue + " transformation cannot be parsed: " + e.getMessage(), e);
        }
        if (!classification.single() || classification.statement().kind() != StatementKind.QUERY) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "ingestion queue " + queue
                    + " transformation must be one SELECT over __this, such as SELECT *, upper(level) AS level FROM __this");
        }
        ClassifiedStatement statement = classification.statement();
        if (classification.reached().stream().anyMatch(ClassifiedStatement::writes)) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "ingestion queue " + queue + " transformation writes; it must only read __this");
        }
        if (classification.tables().stream().noneMatch(table -> table.catalog().isEmpty() && table.schema().isEmpty() && table.name().equals("__this"))) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "ingestion queue " + queue + " transformation does not read __this (the batch); "
                    + "write it as SELECT ... FROM __this");
        }
        if (statement.parameters() > 0) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "ingestion queue " + queue + " transformation has parameters; give constants");
        }
    }

    private void register(QueueWriter writer) {
        MeterRegistry meters = this.meters;
        Tags tags = Tags.of("queue", writer.queue().name());
        QueueStats stats = writer.stats();
        FunctionCounter.builder("mallard_ingest_batches", stats, QueueStats::batches).tags(tags).description("Batches committed").register(meters);
        FunctionCounter.builder("mallard_ingest_rows", stats, QueueStats::rows).tags(tags).description("Rows committed").register(meters);
        FunctionCounter.builder("mallard_ingest_bytes", stats, QueueStats::bytes).tags(tags).baseUnit("bytes").description("File bytes committed")
                .register(meters);
        Gauge.builder("mallard_ingest_pending_bytes", writer, QueueWriter::pendingBytes).tags(tags).baseUnit("bytes")
                .description("Bytes received for the queue and not yet written").register(meters);
    }

    private void release(long bytes) {
        pending.addAndGet(-bytes);
    }

    /**
     * Takes {@code bytes} more of the pending budget for a batch that holds {@code batchBytes} already. A batch that
     * outgrows {@code max_pending_write} can never be taken, so it is refused for good (413 / INVALID_ARGUMENT); one
     * that fits but not now, behind the others pending, is refused for a while (429 / RESOURCE_EXHAUSTED).
     */
    private void reserve(long bytes, long batchBytes) {
        long bound = config.maxPendingWrite();
        if (batchBytes + bytes > bound) {
            throw tooLarge(batchBytes + bytes);
        }
        while (true) {
            long now = pending.get();
            if (now + bytes > bound) {
                throw new MallardException(ErrorCode.USER_INGEST_PENDING_WRITE_EXCEEDED, "the server holds " + now + " bytes not yet written, past "
                        + "ingestion.max_pending_write " + bound + "; retry after " + RETRY_AFTER_SECONDS + "s");
            }
            if (pending.compareAndSet(now, now + bytes)) {
                return;
            }
        }
    }

    private MallardException tooLarge(long atLeast) {
        return new MallardException(ErrorCode.USER_INGEST_BATCH_TOO_LARGE, "the batch has at least " + atLeast + " bytes, more than "
                + "ingestion.max_pending_write " + config.maxPendingWrite() + " the server can ever hold; send it in smaller batches"
                + " (or raise max_pending_write); retrying it will not help");
    }

    // ---- OTLP ----

    /** Starts the OTLP receiver on {@code host} when the configuration has one ({@code ingestion.otlp}). */
    public void serveOtlp(String host) {
        requireNonNull(host, "host is null");
        if (config.otlp().isEmpty() || otlp != null) {
            return;
        }
        otlp = OtlpReceiver.start(config.otlp().get(), new OtlpReceiver.Sink() {
            @Override
            public AccessToken verify(String bearer) {
                return tokens.verify(bearer);
            }

            @Override
            public long write(AccessToken token, String queue, byte[] batch) throws IOException {
                return written(token, queue, batch);
            }
        }, allocator, host);
    }

    /** The OTLP receiver's gRPC port, when it runs. */
    public java.util.OptionalInt otlpPort() {
        OtlpReceiver receiver = otlp;
        return receiver == null ? java.util.OptionalInt.empty() : java.util.OptionalInt.of(receiver.port());
    }

    /** A batch the server built (an OTLP export): checked, spooled, committed and acknowledged as a /v1/ingest body is. */
    private long written(AccessToken token, String name, byte[] batch) throws IOException {
        long started = System.nanoTime();
        try {
            IngestionConfig.Queue queue = queue(name);
            authorize(token, queue.name());
            QueueWriter writer = writer(queue);
            Options none = new Options(Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty());
            long rows = await(writer.submit(spool(queue, new java.io.ByteArrayInputStream(batch), none, "", -1))).rows();
            timed(started);
            return rows;
        } catch (MallardException e) {
            refused(e.errorCode().code());
            throw e;
        }
    }

    // ---- HTTP ----

    /** The HTTP listener's content encodings: gzip request bodies decoded ({@code Content-Encoding: gzip} on /v1/ingest). */
    public static io.helidon.http.encoding.ContentEncodingContext requestDecoding() {
        return io.helidon.http.encoding.ContentEncodingContext.builder().contentEncodingsDiscoverServices(false)
                .addContentEncoding(new GzipRequestBodies()).build();
    }

    /** {@code POST /v1/ingest?ingestion_queue=q}: 200 (empty body) once the batch is committed. */
    public void post(ServerRequest request, ServerResponse response) {
        long started = System.nanoTime();
        try {
            AccessToken token = bearer(request);
            String media = request.headers().first(HeaderNames.CONTENT_TYPE).map(value -> value.split(";")[0].trim().toLowerCase(Locale.ROOT)).orElse("");
            if (!media.equals(ARROW_STREAM)) {
                throw new MallardException(ErrorCode.USER_INGEST_CONTENT_TYPE, "POST /v1/ingest takes Content-Type " + ARROW_STREAM + ", not "
                        + (media.isEmpty() ? "none" : media));
            }
            String name = request.query().first(QUEUE).asOptional().or(() -> request.headers().first(HeaderNames.create(QUEUE)))
                    .orElseThrow(() -> new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "POST /v1/ingest needs ?ingestion_queue=<queue>"));
            IngestionConfig.Queue queue = queue(name);
            authorize(token, queue.name());
            Options options = new Options(parameter(request, PARTITION), parameter(request, SORT_ORDER), parameter(request, FORMAT),
                    parameter(request, PRODUCER_ID), parameter(request, PRODUCER_BATCH_ID));
            QueueWriter writer = writer(queue);
            IngestionWriter.Received batch;
            long batchId = options.batchId();
            String producer = options.producer().orElse("");
            if (writer.committed(producer, batchId)) {
                // A re-sent batch: acknowledged again, written once.
                response.header(HeaderNames.create("x-dd-duplicate"), "true").status(Status.OK_200).send();
                return;
            }
            long declared = request.headers().contentLength().orElse(-1);
            if (declared > config.maxPendingWrite() && request.headers().first(HeaderNames.CONTENT_ENCODING).isEmpty()) {
                throw tooLarge(declared);
            }
            try (InputStream body = request.content().inputStream()) {
                batch = spool(queue, decoded(body), options, producer, batchId);
            }
            QueueWriter.Ack ack = await(writer.submit(batch));
            timed(started);
            response.header(HeaderNames.create("x-dd-ingested-rows"), String.valueOf(ack.rows()));
            if (ack.duplicate()) {
                response.header(HeaderNames.create("x-dd-duplicate"), "true");
            }
            response.status(Status.OK_200).send();
        } catch (RuntimeException | IOException e) {
            fail(response, e);
        }
    }

    /** {@code GET /v1/ingestion/queues}: each queue with what it has written (the web console's contract). */
    public void queues(ServerRequest request, ServerResponse response) {
        try {
            bearer(request);
            ObjectNode root = JSON.createObjectNode();
            ArrayNode list = root.putArray("queues");
            List<QueueWriter> sorted = new ArrayList<>(writers.values());
            sorted.sort(java.util.Comparator.comparing(writer -> writer.queue().name()));
            for (QueueWriter writer : sorted) {
                QueueStats stats = writer.stats();
                ObjectNode queue = list.addObject();
                queue.put("name", writer.queue().name());
                queue.put("path", writer.queue().path());
                queue.put("batches", stats.batches());
                queue.put("rows", stats.rows());
                queue.put("bytes", stats.bytes());
                queue.put("pending_bytes", writer.pendingBytes());
                queue.put("rows_per_second", stats.rowsPerSecond());
                Optional<java.time.Instant> last = stats.lastBatchAt();
                if (last.isPresent()) {
                    queue.put("last_batch_at", last.get().toString());
                } else {
                    queue.putNull("last_batch_at");
                }
                Optional<String[]> mark = stats.watermark();
                if (mark.isPresent()) {
                    queue.putObject("watermark").put("min", mark.get()[0]).put("max", mark.get()[1]);
                } else {
                    queue.putNull("watermark");
                }
            }
            response.header(HeaderNames.CONTENT_TYPE, "application/json").send(root.toString());
        } catch (RuntimeException e) {
            fail(response, e);
        }
    }

    private static Optional<String> parameter(ServerRequest request, String name) {
        // DazzleDuck reads each from a header first, then the query string; list values may be URL-encoded.
        Optional<String> value = request.headers().first(HeaderNames.create(name)).or(() -> request.query().first(name).asOptional());
        return value.map(text -> URLDecoder.decode(text, StandardCharsets.UTF_8)).filter(text -> !text.isBlank());
    }

    private AccessToken bearer(ServerRequest request) {
        Optional<String> header = request.headers().first(HeaderNames.AUTHORIZATION);
        if (header.isEmpty() || !header.get().regionMatches(true, 0, "Bearer ", 0, 7)) {
            throw new MallardException(ErrorCode.USER_AUTH_FAILED, "no access token; get one from POST /v1/login and send it as Authorization: Bearer <token>");
        }
        return tokens.verify(header.get().substring(7).trim());
    }

    private static InputStream decoded(InputStream body) throws IOException {
        // Content-Encoding: gzip, whether or not the HTTP layer decoded it already: an Arrow stream never starts 1f 8b.
        PushbackInputStream in = new PushbackInputStream(new BufferedInputStream(body, CHUNK), 2);
        byte[] magic = in.readNBytes(2);
        in.unread(magic);
        if (magic.length == 2 && (magic[0] & 0xff) == 0x1f && (magic[1] & 0xff) == 0x8b) {
            return new GZIPInputStream(in, CHUNK);
        }
        return in;
    }

    /** Copies a body to the queue's temp directory, taking its bytes from the pending budget as they come. */
    private IngestionWriter.Received spool(IngestionConfig.Queue queue, InputStream body, Options options, String producer, long batchId)
            throws IOException {
        Path file = spoolFile(queue);
        long bytes = 0;
        boolean kept = false;
        try (OutputStream out = Files.newOutputStream(file)) {
            byte[] buffer = new byte[CHUNK];
            int read;
            while ((read = body.read(buffer)) >= 0) {
                reserve(read, bytes);
                bytes += read;
                out.write(buffer, 0, read);
            }
            kept = true;
        } finally {
            if (!kept) {
                release(bytes);
                Files.deleteIfExists(file);
            }
        }
        if (bytes == 0) {
            Files.deleteIfExists(file);
            throw new MallardException(ErrorCode.USER_INGEST_BATCH_INVALID, "the body is empty; send an Arrow IPC stream");
        }
        return new IngestionWriter.Received(file, producer, batchId, bytes, options.shape(queue));
    }

    private Path spoolFile(IngestionConfig.Queue queue) throws IOException {
        Path directory = temp.resolve(queue.name()).resolve("spool");
        Files.createDirectories(directory);
        return directory.resolve(UUID.randomUUID() + ".arrows");
    }

    private QueueWriter.Ack await(java.util.concurrent.CompletableFuture<QueueWriter.Ack> done) {
        try {
            return done.get(ACK_TIMEOUT_MINUTES, TimeUnit.MINUTES);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new MallardException(ErrorCode.SYSTEM_IO_FAILED, "interrupted waiting for the batch's commit; retry with the same batch id");
        } catch (TimeoutException e) {
            throw new MallardException(ErrorCode.SYSTEM_IO_FAILED, "the batch was not committed within " + ACK_TIMEOUT_MINUTES
                    + " minutes; retry with the same batch id");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new MallardException(ErrorCode.SYSTEM_IO_FAILED, "the batch failed: " + e.getCause(), e.getCause());
        }
    }

    private IngestionConfig.Queue queue(String name) {
        if (name.isBlank() || name.contains("..") || name.startsWith("/") || name.startsWith("\\") || name.contains("/") && config.queue(name).isEmpty()) {
            throw new MallardException(ErrorCode.USER_INGEST_PATH_INVALID, "ingestion_queue '" + name + "' is not a queue name: '..', '/' and"
                    + " absolute paths are refused");
        }
        if (closed) {
            throw new MallardException(ErrorCode.SYSTEM_IO_FAILED, "the server is stopping; retry");
        }
        return config.queue(name).orElseThrow(() -> new MallardException(ErrorCode.USER_INGEST_QUEUE_NOT_FOUND, "no ingestion queue '" + name
                + "'; the server's queues are " + config.queues().stream().map(IngestionConfig.Queue::name).toList()));
    }

    /**
     * In every mode but COMPLETE a token writes a queue only when it carries {@code x-dd-access-type=WRITE} and an
     * {@code ingestion_queue} (or {@code x-dd-ingestion-queue}) claim naming it. On a token Mallard minted, these
     * claims count only when the server's configuration fixes them for the user: a login cannot grant itself writes.
     */
    private void authorize(AccessToken token, String queue) {
        if (mode == AccessMode.COMPLETE) {
            return;
        }
        Map<String, Object> claims;
        if (token.generation().isPresent()) {
            claims = Optional.ofNullable(users.get(token.username())).map(UserAccount::claims).orElse(Map.of());
        } else {
            claims = token.claims();
        }
        Object access = claims.get(ACCESS_TYPE);
        if (access == null || !String.valueOf(access).trim().equalsIgnoreCase("WRITE")) {
            throw new MallardException(ErrorCode.USER_ACCESS_DENIED, "this server is " + mode + ": ingesting needs a token with the claim "
                    + ACCESS_TYPE + "=WRITE (fixed for user " + token.username() + " under users[].claims)");
        }
        List<String> granted = new ArrayList<>();
        for (String claim : List.of(QUEUE, QUEUE_CLAIM)) {
            Object value = claims.get(claim);
            if (value instanceof Collection<?> values) {
                values.forEach(item -> granted.add(String.valueOf(item).trim()));
            } else if (value != null) {
                for (String part : String.valueOf(value).split(",")) {
                    granted.add(part.trim());
                }
            }
        }
        if (!granted.contains(queue)) {
            throw new MallardException(ErrorCode.USER_ACCESS_DENIED, "this server is " + mode + ": the token's " + QUEUE
                    + " claim does not name the queue " + queue);
        }
    }

    private void fail(ServerResponse response, Exception e) {
        boolean backpressure = e instanceof MallardException mallard && mallard.errorCode() == ErrorCode.USER_INGEST_PENDING_WRITE_EXCEEDED;
        if (backpressure) {
            response.header(HeaderNames.RETRY_AFTER, String.valueOf(RETRY_AFTER_SECONDS));
        }
        refused(e instanceof MallardException mallard ? mallard.errorCode().code() : ErrorCode.SYSTEM_INTERNAL.code());
        HttpErrors.send(response, e, LOG, "ingestion request");
    }

    private void timed(long started) {
        Timer timer = ackLatency;
        if (timer != null) {
            timer.record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
        }
    }

    private void refused(String code) {
        MeterRegistry meters = this.meters;
        if (meters == null) {
            return;
        }
        refusals.computeIfAbsent(code, key -> io.micrometer.core.instrument.Counter.builder("mallard_ingest_refused").tags(Tags.of("code", key))
                .description("Ingestion requests refused, by error code").register(meters)).increment();
    }

    // ---- Flight ----

    /** Whether a DoPut ingest goes to a queue (its options name {@code ingestion_queue}) rather than into a table. */
    public static boolean wantsQueue(CommandStatementIngest command) {
        return command.getOptionsMap().containsKey(QUEUE);
    }

    /**
     * A Flight {@code DoPut} of {@code CommandStatementIngest} with the {@code ingestion_queue} option: the stream is
     * spooled and committed as one batch, acknowledged with a {@code DoPutUpdateResult} of its row count.
     *
     * @param authorization the call's {@code authorization} header (already verified by the Flight listener)
     */
    public void put(CommandStatementIngest command, Optional<String> authorization, FlightStream stream, StreamListener<PutResult> ack) {
        long started = System.nanoTime();
        try {
            String bearer = authorization.filter(value -> value.regionMatches(true, 0, "Bearer ", 0, 7)).map(value -> value.substring(7).trim())
                    .orElseThrow(() -> new MallardException(ErrorCode.USER_AUTH_FAILED, "no bearer token on the call"));
            AccessToken token = tokens.verify(bearer);
            Map<String, String> options = command.getOptionsMap();
            IngestionConfig.Queue queue = queue(options.get(QUEUE));
            authorize(token, queue.name());
            Options given = new Options(Optional.ofNullable(options.get(PARTITION)), Optional.ofNullable(options.get(SORT_ORDER)),
                    Optional.ofNullable(options.get(FORMAT)), Optional.ofNullable(options.get(PRODUCER_ID)),
                    Optional.ofNullable(options.get(PRODUCER_BATCH_ID)));
            QueueWriter writer = writer(queue);
            String producer = given.producer().orElse("");
            long batchId = given.batchId();
            QueueWriter.Ack done;
            if (writer.committed(producer, batchId)) {
                drain(stream);
                done = new QueueWriter.Ack(0, true);
            } else {
                done = await(writer.submit(spool(queue, stream, given, producer, batchId)));
            }
            timed(started);
            byte[] result = DoPutUpdateResult.newBuilder().setRecordCount(done.rows()).build().toByteArray();
            try (ArrowBuf buffer = allocator.buffer(result.length)) {
                buffer.writeBytes(result);
                ack.onNext(PutResult.metadata(buffer));
            }
            ack.onCompleted();
        } catch (Throwable e) {
            ack.onError(flightError(e));
        }
    }

    private static void drain(FlightStream stream) {
        while (stream.next()) {
            // the batch was committed already; read and forget
        }
    }

    private IngestionWriter.Received spool(IngestionConfig.Queue queue, FlightStream stream, Options options, String producer, long batchId)
            throws IOException {
        Path file = spoolFile(queue);
        long reserved = 0;
        boolean kept = false;
        try {
            try (OutputStream out = Files.newOutputStream(file)) {
                VectorSchemaRoot root = stream.getRoot();
                try (ArrowStreamWriter writer = new ArrowStreamWriter(root, stream.getDictionaryProvider(), out)) {
                    writer.start();
                    while (stream.next()) {
                        writer.writeBatch();
                        long size = Files.size(file);
                        reserve(Math.max(0, size - reserved), reserved);
                        reserved = Math.max(reserved, size);
                    }
                    writer.end();
                }
            }
            long size = Files.size(file);
            reserve(Math.max(0, size - reserved), reserved);
            reserved = Math.max(reserved, size);
            kept = true;
            return new IngestionWriter.Received(file, producer, batchId, reserved, options.shape(queue));
        } finally {
            if (!kept) {
                release(reserved);
                Files.deleteIfExists(file);
            }
        }
    }

    private RuntimeException flightError(Throwable e) {
        if (e instanceof org.apache.arrow.flight.FlightRuntimeException flight) {
            return flight;
        }
        if (e instanceof MallardException mallard) {
            refused(mallard.errorCode().code());
            CallStatus status = switch (mallard.errorCode()) {
                case USER_AUTH_FAILED -> CallStatus.UNAUTHENTICATED;
                case USER_ACCESS_DENIED -> CallStatus.UNAUTHORIZED;
                case USER_INGEST_QUEUE_NOT_FOUND -> CallStatus.NOT_FOUND;
                case USER_INGEST_PENDING_WRITE_EXCEEDED -> CallStatus.RESOURCE_EXHAUSTED;
                case USER_INGEST_BATCH_TOO_LARGE -> CallStatus.INVALID_ARGUMENT;
                default -> mallard.errorCode().errorClass().equals("user") ? CallStatus.INVALID_ARGUMENT : CallStatus.INTERNAL;
            };
            status = status.withDescription(mallard.errorCode().code() + ": " + mallard.getMessage()).withCause(mallard);
            if (mallard.errorCode() == ErrorCode.USER_INGEST_PENDING_WRITE_EXCEEDED) {
                org.apache.arrow.flight.ErrorFlightMetadata metadata = new org.apache.arrow.flight.ErrorFlightMetadata();
                metadata.insert("retry-after", String.valueOf(RETRY_AFTER_SECONDS));
                status = status.withMetadata(metadata);
            }
            return status.toRuntimeException();
        }
        LOG.error("ingestion put failed", e);
        refused(ErrorCode.SYSTEM_INTERNAL.code());
        return CallStatus.INTERNAL.withDescription(ErrorCode.SYSTEM_INTERNAL.code() + ": " + Redactor.redact(String.valueOf(e))).withCause(e)
                .toRuntimeException();
    }

    /** A request's {@code x-dd-*} ingestion options, unparsed. */
    private record Options(Optional<String> partition, Optional<String> sortOrder, Optional<String> format, Optional<String> producer,
            Optional<String> batch) {
        long batchId() {
            if (batch.isEmpty()) {
                return -1;
            }
            try {
                return Long.parseLong(batch.get().trim());
            } catch (NumberFormatException e) {
                throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, PRODUCER_BATCH_ID + " must be a whole number, not " + batch.get());
            }
        }

        IngestionWriter.Shape shape(IngestionConfig.Queue queue) {
            String fileFormat = format.map(value -> value.trim().toLowerCase(Locale.ROOT)).orElse(queue.format());
            if (!List.of("parquet", "csv", "json", WarehouseWriter.ARROW_FORMAT).contains(fileFormat)) {
                throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, FORMAT + " " + fileFormat + " is not one of parquet, csv, json, arrow");
            }
            return new IngestionWriter.Shape(partition.map(IngestionConfig::split).orElse(queue.partition()),
                    sortOrder.map(IngestionConfig::split).orElse(queue.sortOrder()), fileFormat);
        }
    }

    @Override
    public void close() {
        closed = true;
        OtlpReceiver receiver = otlp;
        if (receiver != null) {
            receiver.close();
        }
        for (QueueWriter writer : writers.values()) {
            try {
                writer.close();
            } catch (RuntimeException e) {
                LOG.warn("closing ingestion queue {} failed: {}", writer.queue().name(), e.toString());
            }
        }
        writers.clear();
    }
}
