// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.datasets;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.error.Redactor;
import dev.mallard.core.metrics.MetricsRegistry;
import dev.mallard.server.auth.TokenService;
import dev.mallard.server.session.Session;
import dev.mallard.server.session.SessionRegistry;
import dev.mallard.server.sql.AccessPolicy;
import dev.mallard.server.sql.CheckedSql;
import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Named datasets over HTTP (SQLFlow's {@code serve}): {@code GET /v1/datasets} lists them, {@code GET
 * /v1/datasets/{name}} answers one as {@code {"dataset", "grain", "range", "row_count", "rows"}}. A request's
 * parameters are typed and bound to a prepared statement; nothing of a request becomes SQL text. Statements run on
 * a few connections of their own, on platform threads (DuckDB's native calls would pin a virtual thread), never
 * on a caller's session.
 *
 * <p>Inside {@code mallard server} every request is admitted as a client statement is: the caller's JWT opens its
 * session, and the dataset's statement goes {@code policy.check(session, session.admit(sql))}, so the access mode
 * refuses what it refuses on {@code /v1/query} and row-level security filters it by the token's claims. The cache
 * key holds the admitted text, so callers whose filters differ never share an answer.
 */
public final class ServedDatasets implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ServedDatasets.class);
    private static final JsonFactory JSON = new JsonFactory();
    private static final int CONNECTIONS = 4;
    private static final int CONVERTED_MAX = 1_024;
    private static final byte[] ROWS_FIELD = ",\"rows\":".getBytes(StandardCharsets.UTF_8);
    private static final byte[] CACHE_FIELD = ",\"cache\":\"".getBytes(StandardCharsets.UTF_8);
    private static final byte[] AGE_FIELD = "\",\"age_ms\":".getBytes(StandardCharsets.UTF_8);

    /** Who a request comes from: refuses a request without valid credentials. */
    @FunctionalInterface
    interface Admission {
        Caller caller(ServerRequest request);
    }

    /** An authenticated caller: its name in logs, and the text a statement runs as for it (or a refusal). */
    interface Caller {
        String clientId();

        String admit(String sql);
    }

    private record Anyone(String clientId) implements Caller {
        @Override
        public String admit(String sql) {
            return sql;
        }
    }

    private final ServeConfig.Settings settings;
    private final Admission admission;
    private final BlockingQueue<Connection> connections;
    private final ExecutorService queries;
    private final java.util.concurrent.ScheduledExecutorService timer;
    private final DatasetCache cache;
    private final Clock clock;
    private final MetricsRegistry metrics;
    private final Map<String, StatementParameters> converted = new ConcurrentHashMap<>();
    private final Map<String, ServeConfig.Dataset> byName = new java.util.HashMap<>();
    /** Per dataset, requests resolved by their raw query text (only those whose resolution does not read the clock). */
    private final Map<String, Map<String, DatasetQuery>> resolutions = new java.util.HashMap<>();

    ServedDatasets(ServeConfig.Settings settings, Supplier<Connection> connect, Admission admission, MetricsRegistry metrics, Clock clock) {
        this.settings = requireNonNull(settings, "settings is null");
        this.admission = requireNonNull(admission, "admission is null");
        this.metrics = requireNonNull(metrics, "metrics is null");
        this.clock = requireNonNull(clock, "clock is null");
        settings.datasets().forEach(dataset -> {
            byName.put(dataset.name(), dataset);
            resolutions.put(dataset.name(), new ConcurrentHashMap<>());
        });
        this.connections = new ArrayBlockingQueue<>(CONNECTIONS);
        for (int i = 0; i < CONNECTIONS; i++) {
            connections.add(connect.get());
        }
        this.queries = Executors.newFixedThreadPool(CONNECTIONS, Thread.ofPlatform().name("dataset-query-", 0).daemon().factory());
        this.timer = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().name("dataset-timeout").daemon().factory());
        this.cache = new DatasetCache(settings.cacheMaxBytes(), queries, System::nanoTime);
        Gauge.builder("mallard.serve.cache.bytes", cache, DatasetCache::bytes).description("Bytes of cached dataset answers")
                .register(metrics.meters());
        Gauge.builder("mallard.serve.cache.entries", cache, DatasetCache::entries).description("Cached dataset answers")
                .register(metrics.meters());
        io.micrometer.core.instrument.FunctionCounter.builder("mallard.serve.cache.evictions", cache, DatasetCache::evictions)
                .description("Cached answers dropped to keep cache.max_mb").register(metrics.meters());
        try {
            Connection connection = connections.peek();
            for (ServeConfig.Dataset dataset : settings.datasets()) {
                for (String sql : dataset.statements()) {
                    StatementParameters parameters = StatementParameters.of(connection, sql);
                    for (String name : parameters.names()) {
                        if (dataset.param(name).isEmpty()) {
                            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "dataset " + dataset.name() + " binds $" + name
                                    + ", which is not one of its params; declare it under params");
                        }
                    }
                }
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /**
     * The datasets of a server's {@code serve:} block, admitted through the caller's session and the server's gate.
     *
     * @param connect a new connection to the served database, one per query thread
     * @param metrics the server's registry: the dataset series appear on its {@code /metrics}
     */
    public static ServedDatasets inServer(ServeConfig.Settings settings, Supplier<Connection> connect, TokenService tokens,
            SessionRegistry sessions, AccessPolicy policy, MetricsRegistry metrics) {
        requireNonNull(tokens, "tokens is null");
        requireNonNull(sessions, "sessions is null");
        requireNonNull(policy, "policy is null");
        Admission admission = request -> {
            Session session = sessions.open(tokens.verify(bearer(request).orElseThrow(() -> new MallardException(ErrorCode.USER_AUTH_FAILED,
                    "no access token; get one from POST /v1/login and send it as Authorization: Bearer <token>"))));
            return new Caller() {
                @Override
                public String clientId() {
                    return session.username();
                }

                @Override
                public String admit(String sql) {
                    CheckedSql checked = policy.check(session, session.admit(sql));
                    if (checked.throughViews()) {
                        throw new MallardException(ErrorCode.USER_ACCESS_DENIED, "a dataset's statement is a query, not a view statement or dbsp_* call");
                    }
                    return checked.sql();
                }
            };
        };
        return new ServedDatasets(settings, connect, admission, metrics, Clock.systemUTC());
    }

    /** Standalone ({@code mallard serve}): the configured bearer tokens name callers; without any, anyone may call. */
    static Admission clients(List<ServeConfig.Client> clients) {
        List<byte[]> tokens = clients.stream().map(client -> client.token().getBytes(StandardCharsets.UTF_8)).toList();
        return request -> {
            if (clients.isEmpty()) {
                return new Anyone("anonymous");
            }
            byte[] given = bearer(request).map(token -> token.getBytes(StandardCharsets.UTF_8)).orElseThrow(() -> new MallardException(
                    ErrorCode.USER_AUTH_FAILED, "no bearer token; send Authorization: Bearer <token> with one of serve.clients' tokens"));
            String found = null;
            for (int i = 0; i < tokens.size(); i++) {
                if (MessageDigest.isEqual(tokens.get(i), given) && found == null) {
                    found = clients.get(i).clientId();
                }
            }
            if (found == null) {
                throw new MallardException(ErrorCode.USER_AUTH_FAILED, "the bearer token is not one of serve.clients' tokens");
            }
            return new Anyone(found);
        };
    }

    private static Optional<String> bearer(ServerRequest request) {
        Optional<String> header = request.headers().first(HeaderNames.AUTHORIZATION);
        if (header.isEmpty() || !header.get().regionMatches(true, 0, "Bearer ", 0, 7)) {
            return Optional.empty();
        }
        return Optional.of(header.get().substring(7).trim());
    }

    /** Adds {@code GET /v1/datasets} and {@code GET /v1/datasets/{name}}. */
    public void routes(HttpRouting.Builder routes) {
        routes.get("/v1/datasets", this::list).get("/v1/datasets/{name}", this::answer);
    }

    /** The dataset series, for {@code mallard serve}'s {@code /metrics}. */
    MetricsRegistry metrics() {
        return metrics;
    }

    private void list(ServerRequest request, ServerResponse response) {
        try {
            admission.caller(request);
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            try (JsonGenerator json = JSON.createGenerator(out)) {
                json.writeStartObject();
                json.writeArrayFieldStart("datasets");
                for (ServeConfig.Dataset dataset : settings.datasets()) {
                    json.writeStartObject();
                    json.writeStringField("name", dataset.name());
                    json.writeStringField("description", dataset.description());
                    json.writeArrayFieldStart("params");
                    for (ServeConfig.Param param : dataset.params()) {
                        json.writeStartObject();
                        json.writeStringField("name", param.name());
                        json.writeStringField("type", param.type().name().toLowerCase(java.util.Locale.ROOT));
                        json.writeBooleanField("required", param.required());
                        if (param.defaultValue().isPresent()) {
                            json.writeStringField("default", param.defaultValue().get());
                        }
                        if (param.min().isPresent()) {
                            json.writeNumberField("min", param.min().getAsLong());
                        }
                        if (param.max().isPresent()) {
                            json.writeNumberField("max", param.max().getAsLong());
                        }
                        json.writeEndObject();
                    }
                    json.writeEndArray();
                    json.writeArrayFieldStart("grains");
                    for (ServeConfig.Grain grain : dataset.grains().values()) {
                        json.writeStartObject();
                        json.writeStringField("name", grain.name());
                        if (grain.maxRange().isPresent()) {
                            json.writeNumberField("max_range_seconds", grain.maxRange().get().toSeconds());
                        }
                        if (grain.bucket().isPresent()) {
                            json.writeNumberField("bucket_seconds", grain.bucket().get().toSeconds());
                        }
                        json.writeEndObject();
                    }
                    json.writeEndArray();
                    if (dataset.range().isPresent()) {
                        json.writeObjectFieldStart("range");
                        json.writeStringField("since", dataset.range().get().since());
                        json.writeStringField("until", dataset.range().get().until());
                        json.writeNumberField("default_seconds", dataset.range().get().defaultWidth().toSeconds());
                        json.writeEndObject();
                    }
                    if (dataset.cacheTtl().isPresent()) {
                        json.writeObjectFieldStart("cache");
                        json.writeNumberField("ttl_seconds", dataset.cacheTtl().get().toSeconds());
                        json.writeEndObject();
                    }
                    json.writeEndObject();
                }
                json.writeEndArray();
                json.writeEndObject();
            }
            send(response, Status.OK_200, out.toByteArray());
        } catch (RuntimeException | IOException e) {
            fail(response, e instanceof RuntimeException runtime ? runtime : new IllegalStateException(e));
        }
    }

    private void answer(ServerRequest request, ServerResponse response) {
        long started = System.nanoTime();
        String name = request.path().pathParameters().get("name");
        String client = "-";
        DatasetCache.Outcome outcome = null;
        String status = "200";
        try {
            Caller caller = admission.caller(request);
            client = caller.clientId();
            ServeConfig.Dataset dataset = byName.get(name);
            if (dataset == null) {
                throw new MallardException(ErrorCode.USER_DATASET_NOT_FOUND, "no dataset is named " + name + "; GET /v1/datasets lists them");
            }
            DatasetQuery resolved = resolve(dataset, request);
            StatementParameters parameters = parameters(caller.admit(resolved.sql()));
            List<Object> values = new ArrayList<>(parameters.names().size());
            for (String parameter : parameters.names()) {
                if (!resolved.values().containsKey(parameter)) {
                    throw new MallardException(ErrorCode.USER_ACCESS_DENIED, "the admitted statement binds $" + parameter + ", which the dataset does not declare");
                }
                values.add(resolved.values().get(parameter));
            }
            byte[] body;
            if (dataset.cacheTtl().isPresent()) {
                DatasetCache.Key key = new DatasetCache.Key(dataset.name(), resolved.grain().map(ServeConfig.Grain::name).orElse(""),
                        resolved.window().<Object>map(window -> window).orElse(""), parameters.positionalSql(), java.util.Collections.unmodifiableList(values));
                DatasetCache.Answer answer = cache.get(key, dataset.cacheTtl().get(), () -> {
                    DatasetCache.Rows rows = run(dataset, parameters, values);
                    return rows.withHead(head(resolved, rows.count(), true));
                });
                outcome = answer.outcome();
                meters(dataset.name()).outcome(outcome).increment();
                body = cachedBody(answer.rows(), outcome);
            } else {
                DatasetCache.Rows rows = onQueryThread(() -> run(dataset, parameters, values));
                body = body(head(resolved, rows.count(), false), rows.json());
            }
            send(response, Status.OK_200, body);
        } catch (RuntimeException e) {
            status = fail(response, e);
        } finally {
            long took = System.nanoTime() - started;
            Meters meters = meters(name);
            meters.status(status).increment();
            meters.requestDuration.record(took, java.util.concurrent.TimeUnit.NANOSECONDS);
            if (LOG.isDebugEnabled()) {
                LOG.debug("dataset request client_id={} dataset={} status={} cache={} duration_ms={}", client, name, status,
                        outcome == null ? "none" : outcome.label(), took / 1_000_000);
            }
        }
    }

    /**
     * The request resolved: typed values, grain and window. A request whose resolution does not read the clock is
     * remembered by its dataset and raw query text, so a repeated request (a dashboard's, a cache hit's) parses nothing.
     */
    private DatasetQuery resolve(ServeConfig.Dataset dataset, ServerRequest request) {
        String raw = request.query().rawValue();
        Map<String, DatasetQuery> known = resolutions.get(dataset.name());
        DatasetQuery remembered = known.get(raw);
        if (remembered != null) {
            return remembered;
        }
        Map<String, List<String>> query = new LinkedHashMap<>();
        for (String key : request.query().names()) {
            query.put(key, request.query().all(key));
        }
        DatasetQuery resolved = DatasetQuery.resolve(dataset, query, clock.instant());
        if (!DatasetQuery.readsClock(dataset, query)) {
            if (known.size() >= CONVERTED_MAX) {
                known.clear();
            }
            known.put(raw, resolved);
        }
        return resolved;
    }

    private StatementParameters parameters(String sql) {
        StatementParameters known = converted.get(sql);
        if (known != null) {
            return known;
        }
        StatementParameters parameters = onQueryThread(() -> withConnection(connection -> StatementParameters.of(connection, sql)));
        if (converted.size() >= CONVERTED_MAX) {
            converted.clear();
        }
        converted.put(sql, parameters);
        return parameters;
    }

    private DatasetCache.Rows run(ServeConfig.Dataset dataset, StatementParameters parameters, List<Object> values) {
        long started = System.nanoTime();
        Timer.Sample sample = Timer.start();
        try {
            return withConnection(connection -> {
                java.util.concurrent.atomic.AtomicBoolean fired = new java.util.concurrent.atomic.AtomicBoolean();
                try (PreparedStatement statement = connection.prepareStatement(parameters.positionalSql())) {
                    for (int i = 0; i < values.size(); i++) {
                        bind(statement, i + 1, values.get(i));
                    }
                    java.util.concurrent.ScheduledFuture<?> alarm = timer.schedule(() -> {
                        fired.set(true);
                        cancel(statement);
                    }, settings.queryTimeout().toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
                    try (ResultSet rows = statement.executeQuery()) {
                        return JsonRows.write(rows, settings.maxRows(), dataset.name(), started);
                    } finally {
                        alarm.cancel(false);
                    }
                } catch (SQLException e) {
                    if (fired.get()) {
                        meters(dataset.name()).timeouts.increment();
                        throw new MallardException(ErrorCode.USER_DATASET_TIMEOUT, "dataset " + dataset.name() + "'s statement ran longer than serve.query_timeout_seconds ("
                                + settings.queryTimeout().toSeconds() + " s) and was interrupted; narrow the request, or raise query_timeout_seconds", e);
                    }
                    throw new MallardException(ErrorCode.USER_SQL_INVALID, "dataset " + dataset.name() + "'s statement failed: " + e.getMessage(), e);
                }
            });
        } finally {
            sample.stop(metrics.latency("mallard.serve.query.duration", "Time dataset requests spent running their statement",
                    Tags.of("dataset", dataset.name())));
        }
    }

    private static void cancel(PreparedStatement statement) {
        try {
            statement.cancel();
        } catch (SQLException e) {
            // The statement finished or closed meanwhile: nothing left to interrupt.
        }
    }

    private static void bind(PreparedStatement statement, int index, Object value) throws SQLException {
        switch (value) {
            case null -> statement.setObject(index, null);
            case Long number -> statement.setLong(index, number);
            case String text -> statement.setString(index, text);
            case LocalDateTime time -> statement.setObject(index, time);
            default -> throw new IllegalStateException("unexpected value type " + value.getClass());
        }
    }

    @FunctionalInterface
    private interface ConnectionWork<T> {
        T run(Connection connection);
    }

    private <T> T withConnection(ConnectionWork<T> work) {
        Connection connection;
        try {
            connection = connections.take();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for a dataset connection", e);
        }
        try {
            return work.run(connection);
        } finally {
            connections.add(connection);
        }
    }

    /** Runs DuckDB work on a query thread while the request's virtual thread waits unmounted. */
    private <T> T onQueryThread(Supplier<T> work) {
        Future<T> future = queries.submit(work::get);
        try {
            return future.get();
        } catch (InterruptedException e) {
            future.cancel(true);
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for a dataset query", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new IllegalStateException(e.getCause());
        }
    }

    /**
     * The answer's fields before its rows, serialised once per query: {@code {"dataset",...,"row_count":N}} and, for
     * a cached dataset, {@code ,"cache":"} so that a hit appends its outcome, {@code age_ms} and the rows as bytes.
     */
    private static byte[] head(DatasetQuery resolved, long count, boolean cached) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(256);
        try {
            try (JsonGenerator json = JSON.createGenerator(out).disable(JsonGenerator.Feature.AUTO_CLOSE_JSON_CONTENT)) {
                json.writeStartObject();
                json.writeStringField("dataset", resolved.dataset().name());
                if (resolved.grain().isPresent()) {
                    json.writeStringField("grain", resolved.grain().get().name());
                } else {
                    json.writeNullField("grain");
                }
                if (resolved.window().isPresent()) {
                    json.writeObjectFieldStart("range");
                    json.writeStringField("since", resolved.window().get().since().toString());
                    json.writeStringField("until", resolved.window().get().until().toString());
                    json.writeEndObject();
                } else {
                    json.writeNullField("range");
                }
                json.writeNumberField("row_count", count);
                json.flush();
            }
            if (cached) {
                out.write(CACHE_FIELD);
            }
        } catch (IOException e) {
            throw new MallardException(ErrorCode.SYSTEM_INTERNAL, "cannot write a dataset answer: " + e.getMessage(), e);
        }
        return out.toByteArray();
    }

    private static byte[] body(byte[] head, byte[] rows) {
        byte[] body = new byte[head.length + ROWS_FIELD.length + rows.length + 1];
        System.arraycopy(head, 0, body, 0, head.length);
        System.arraycopy(ROWS_FIELD, 0, body, head.length, ROWS_FIELD.length);
        System.arraycopy(rows, 0, body, head.length + ROWS_FIELD.length, rows.length);
        body[body.length - 1] = '}';
        return body;
    }

    /** A cached answer: its stored head, the outcome, its age, then the stored rows; nothing is encoded again. */
    private static byte[] cachedBody(DatasetCache.Rows rows, DatasetCache.Outcome outcome) {
        byte[] label = outcome.labelBytes();
        byte[] age = Long.toString(Math.max(0, (System.nanoTime() - rows.startedNanos()) / 1_000_000)).getBytes(StandardCharsets.US_ASCII);
        byte[] head = rows.head();
        byte[] json = rows.json();
        byte[] body = new byte[head.length + label.length + AGE_FIELD.length + age.length + ROWS_FIELD.length + json.length + 1];
        int at = 0;
        System.arraycopy(head, 0, body, at, head.length);
        at += head.length;
        System.arraycopy(label, 0, body, at, label.length);
        at += label.length;
        System.arraycopy(AGE_FIELD, 0, body, at, AGE_FIELD.length);
        at += AGE_FIELD.length;
        System.arraycopy(age, 0, body, at, age.length);
        at += age.length;
        System.arraycopy(ROWS_FIELD, 0, body, at, ROWS_FIELD.length);
        at += ROWS_FIELD.length;
        System.arraycopy(json, 0, body, at, json.length);
        body[body.length - 1] = '}';
        return body;
    }

    /** A dataset's series, made once per dataset name (and status) so a request only increments. */
    private final class Meters {
        private final String dataset;
        private final Counter hit;
        private final Counter miss;
        private final Counter shared;
        private final Counter timeouts;
        private final Timer requestDuration;
        private final Map<String, Counter> byStatus = new ConcurrentHashMap<>();

        Meters(String dataset) {
            this.dataset = dataset;
            this.hit = cacheCounter(dataset, DatasetCache.Outcome.HIT);
            this.miss = cacheCounter(dataset, DatasetCache.Outcome.MISS);
            this.shared = cacheCounter(dataset, DatasetCache.Outcome.SHARED);
            this.timeouts = Counter.builder("mallard.serve.query.timeouts").description("Dataset statements interrupted at serve.query_timeout_seconds")
                    .tags("dataset", dataset).register(metrics.meters());
            this.requestDuration = metrics.latency("mallard.serve.request.duration", "Time from a dataset request's arrival to its answer",
                    Tags.of("dataset", dataset));
        }

        private Counter cacheCounter(String dataset, DatasetCache.Outcome outcome) {
            return Counter.builder("mallard.serve.cache.requests").description("Dataset requests answered by the cache, by outcome")
                    .tags("dataset", dataset, "outcome", outcome.label()).register(metrics.meters());
        }

        Counter outcome(DatasetCache.Outcome outcome) {
            return switch (outcome) {
                case HIT -> hit;
                case MISS -> miss;
                case SHARED -> shared;
            };
        }

        Counter status(String status) {
            Counter known = byStatus.get(status);
            return known != null ? known : byStatus.computeIfAbsent(status, code -> Counter.builder("mallard.serve.requests")
                    .description("Dataset requests, by dataset and HTTP status").tags("dataset", dataset, "status", code).register(metrics.meters()));
        }
    }

    private final Map<String, Meters> meters = new ConcurrentHashMap<>();

    /** An unknown name (a 404) counts under {@code dataset="-"}, so a caller cannot mint series. */
    private Meters meters(String dataset) {
        String label = dataset != null && byName.containsKey(dataset) ? dataset : "-";
        Meters known = meters.get(label);
        return known != null ? known : meters.computeIfAbsent(label, Meters::new);
    }

    private static void send(ServerResponse response, Status status, byte[] body) {
        response.status(status).header(HeaderNames.CONTENT_TYPE, "application/json").header(HeaderNames.CACHE_CONTROL, "no-store").send(body);
    }

    /** @return the HTTP status sent */
    private static String fail(ServerResponse response, RuntimeException e) {
        Status status;
        String code;
        String mallardCode;
        String message;
        if (e instanceof MallardException mallard) {
            mallardCode = mallard.errorCode().code();
            message = mallard.getMessage();
            switch (mallard.errorCode()) {
                case USER_DATASET_NOT_FOUND -> { status = Status.NOT_FOUND_404; code = "unknown_dataset"; }
                case USER_DATASET_INVALID_PARAM -> { status = Status.BAD_REQUEST_400; code = "invalid_param"; }
                case USER_DATASET_INVALID_RANGE -> { status = Status.BAD_REQUEST_400; code = "invalid_range"; }
                case USER_DATASET_RANGE_TOO_WIDE -> { status = Status.BAD_REQUEST_400; code = "range_too_wide"; }
                case USER_DATASET_UNKNOWN_GRAIN -> { status = Status.BAD_REQUEST_400; code = "unknown_grain"; }
                case USER_DATASET_TOO_MANY_ROWS -> { status = Status.BAD_REQUEST_400; code = "too_many_rows"; }
                case USER_DATASET_TIMEOUT -> { status = Status.GATEWAY_TIMEOUT_504; code = "query_timeout"; }
                case USER_AUTH_FAILED -> { status = Status.UNAUTHORIZED_401; code = "unauthorized"; }
                case USER_ACCESS_DENIED, USER_ACCESS_CLAIMS_INVALID, USER_ACCESS_STATEMENT_UNSUPPORTED -> { status = Status.FORBIDDEN_403; code = "forbidden"; }
                case USER_SESSIONS_EXHAUSTED -> { status = Status.TOO_MANY_REQUESTS_429; code = "too_many_sessions"; }
                default -> { status = Status.INTERNAL_SERVER_ERROR_500; code = "query_failed"; }
            }
        } else {
            LOG.error("dataset request failed", e);
            status = Status.INTERNAL_SERVER_ERROR_500;
            code = "internal";
            mallardCode = ErrorCode.SYSTEM_INTERNAL.code();
            message = Redactor.redact(String.valueOf(e));
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (JsonGenerator json = JSON.createGenerator(out)) {
            json.writeStartObject();
            json.writeObjectFieldStart("error");
            json.writeStringField("code", code);
            json.writeStringField("message", message);
            json.writeStringField("mallard_code", mallardCode);
            json.writeEndObject();
            json.writeEndObject();
        } catch (IOException io) {
            throw new IllegalStateException(io);
        }
        send(response, status, out.toByteArray());
        return String.valueOf(status.code());
    }

    @Override
    public void close() {
        queries.shutdownNow();
        timer.shutdownNow();
        for (Connection connection : connections) {
            try {
                connection.close();
            } catch (SQLException e) {
                LOG.debug("closing a dataset connection failed reason={}", e.getMessage());
            }
        }
    }
}
