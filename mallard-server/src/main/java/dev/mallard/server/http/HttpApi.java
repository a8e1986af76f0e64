// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.http;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.core.arrow.JsonLinesWriter;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.error.Redactor;
import dev.mallard.core.http.HttpEndpoints;
import dev.mallard.server.auth.AccessToken;
import dev.mallard.server.auth.TokenService;
import dev.mallard.server.auth.UserDirectory;
import dev.mallard.server.ops.ServerMetrics;
import dev.mallard.server.ops.StatementAudit;
import dev.mallard.server.rows.RowWindow;
import dev.mallard.server.session.QueryOptions;
import dev.mallard.server.session.ResultStream;
import dev.mallard.server.session.Session;
import dev.mallard.server.session.SessionRegistry;
import dev.mallard.server.sql.AccessPolicy;
import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.zip.GZIPOutputStream;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.compression.CommonsCompressionFactory;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.compression.NoCompressionCodec;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.ipc.message.IpcOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP API: {@code /health}, {@code /v1/login}, {@code /v1/query}. It shares the Flight listener's users,
 * tokens and sessions: a bearer token selects the same DuckDB session on either listener.
 */
public final class HttpApi implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(HttpApi.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String JSON_TYPE = "application/json";
    static final String ARROW_COMPRESSION = "x-dd-arrow-compression";

    private final UserDirectory users;
    private final TokenService tokens;
    private final SessionRegistry sessions;
    private final AccessPolicy policy;
    private final int defaultFetchSize;
    private final int maxTimeoutSeconds;
    private final long maxBodyBytes;
    private final CorsPolicy cors;
    private final ServerHealth health;
    private final ServerMetrics metrics;
    private final StatementAudit audit;
    private final java.util.concurrent.atomic.AtomicLong nextStatementId = new java.util.concurrent.atomic.AtomicLong(1);
    private final java.util.concurrent.ExecutorService statements = java.util.concurrent.Executors.newCachedThreadPool(
            Thread.ofPlatform().name("http-statement-", 0).daemon().factory());
    private final dev.mallard.server.plan.SplitPlanner planner;
    private HttpEndpoints endpoints;
    private final dev.mallard.server.hosted.Hosted hosted;
    private Optional<dev.mallard.server.ingest.Ingestion> ingestion = Optional.empty();

    private HttpApi(UserDirectory users, TokenService tokens, SessionRegistry sessions, AccessPolicy policy, int defaultFetchSize,
            int maxTimeoutSeconds, long maxBodyBytes, CorsPolicy cors, ServerHealth health, ServerMetrics metrics,
            dev.mallard.server.plan.SplitPlanner planner, dev.mallard.server.hosted.Hosted hosted) {
        this.planner = requireNonNull(planner, "planner is null");
        this.hosted = requireNonNull(hosted, "hosted is null");
        this.metrics = requireNonNull(metrics, "metrics is null");
        this.audit = new StatementAudit(metrics);
        this.cors = requireNonNull(cors, "cors is null");
        this.health = requireNonNull(health, "health is null");
        this.maxBodyBytes = maxBodyBytes;
        this.defaultFetchSize = defaultFetchSize;
        this.maxTimeoutSeconds = maxTimeoutSeconds;
        this.users = requireNonNull(users, "users is null");
        this.tokens = requireNonNull(tokens, "tokens is null");
        this.sessions = requireNonNull(sessions, "sessions is null");
        this.policy = requireNonNull(policy, "policy is null");
    }

    /**
     * @param allowOrigins the origins a browser may call from ({@code http.allow-origin}); {@code *} for any, empty
     *     for no CORS headers
     * @param health answers whether the database runs a statement, for {@code /health}
     * @param metrics the server's series, served on {@code /metrics}; every statement is counted and audited there
     * @param planner plans {@code /v1/plan}'s splits
     */
    public static HttpApi start(String host, int port, UserDirectory users, TokenService tokens, SessionRegistry sessions, AccessPolicy policy,
            int defaultFetchSize, int maxTimeoutSeconds, long maxBodyBytes, Optional<javax.net.ssl.SSLContext> tls, List<String> allowOrigins,
            ServerHealth health, ServerMetrics metrics) {
        return start(host, port, users, tokens, sessions, policy, defaultFetchSize, maxTimeoutSeconds, maxBodyBytes, tls, allowOrigins, health, metrics,
                dev.mallard.server.plan.SplitPlanner.unshared(), dev.mallard.server.hosted.Hosted.NONE, Optional.empty(), routes -> { },
                dev.mallard.core.http.HttpEndpoints.ConnectionLimits.DEFAULT);
    }

    /**
     * As above, with {@code /v1/plan} signing with {@code planner}'s secret, the routes of what the server hosts
     * ({@link dev.mallard.server.hosted.Hosted#routes}) and those of its other features ({@code /v1/datasets},
     * {@code /v1/named-query}, ...), each added by {@code featureRoutes}; with {@code ingestion}, its routes ({@code /v1/ingest},
     * {@code /v1/ingestion/queues}) and gzip request bodies; {@code connections} bounds the listener (header and idle
     * timeouts, the connection cap, refused with a coded 503).
     */
    public static HttpApi start(String host, int port, UserDirectory users, TokenService tokens, SessionRegistry sessions, AccessPolicy policy,
            int defaultFetchSize, int maxTimeoutSeconds, long maxBodyBytes, Optional<javax.net.ssl.SSLContext> tls, List<String> allowOrigins,
            ServerHealth health, ServerMetrics metrics, dev.mallard.server.plan.SplitPlanner planner, dev.mallard.server.hosted.Hosted hosted,
            Optional<dev.mallard.server.ingest.Ingestion> ingestion, java.util.function.Consumer<HttpRouting.Builder> featureRoutes,
            dev.mallard.core.http.HttpEndpoints.ConnectionLimits connections) {
        HttpApi api = new HttpApi(users, tokens, sessions, policy, defaultFetchSize, maxTimeoutSeconds, maxBodyBytes, new CorsPolicy(allowOrigins),
                health, metrics, planner, hosted);
        api.ingestion = requireNonNull(ingestion, "ingestion is null");
        api.endpoints = HttpEndpoints.start(host, port, tls, connections, listener -> {
            if (ingestion.isPresent()) {
                listener.contentEncoding(dev.mallard.server.ingest.Ingestion.requestDecoding());
            }
        }, routes -> {
            api.routes(routes);
            featureRoutes.accept(routes);
        });
        metrics.httpConnections(api.endpoints::refusedConnections, api.endpoints::headerTimeouts);
        return api;
    }

    private void routes(HttpRouting.Builder routes) {
        routes.addFilter(cors::filter)
                .options("/*", cors::preflight)
                .get("/health", this::health)
                .get("/metrics", this::metrics)
                .post("/v1/login", this::login)
                .get("/v1/query", this::queryOffVirtualThreads)
                .post("/v1/query", this::queryOffVirtualThreads)
                .head("/v1/query", this::queryHead)
                .get("/v1/plan", this::plan)
                .post("/v1/plan", this::plan)
                .get("/v1/cancel", this::cancel)
                .post("/v1/cancel", this::cancel);
        hosted.routes(routes);
        dev.mallard.server.console.ConsoleRoutes.register(routes, tokens, policy.mode());
        ingestion.ifPresent(ingest -> routes.post("/v1/ingest", ingest::post).get("/v1/ingestion/queues", ingest::queues));
    }

    public int port() {
        return endpoints.port();
    }

    /** DazzleDuck's health body: 200 while the database answers {@code SELECT 1}, 503 when it does not. */
    private void health(ServerRequest request, ServerResponse response) {
        ServerHealth.Report report = health.check();
        response.status(report.databaseUp() ? Status.OK_200 : Status.SERVICE_UNAVAILABLE_503)
                .header(HeaderNames.CONTENT_TYPE, JSON_TYPE).send(report.json());
    }

    /** The Prometheus text of the server's and the JVM's series. */
    private void metrics(ServerRequest request, ServerResponse response) throws IOException {
        response.header(HeaderNames.CONTENT_TYPE, metrics.contentType());
        try (OutputStream out = response.outputStream()) {
            metrics.scrape(out);
        }
    }

    /** A client probing the route (DazzleDuck answers HEAD with 200 and no body). */
    private void queryHead(ServerRequest request, ServerResponse response) {
        response.status(Status.OK_200).send();
    }

    private void login(ServerRequest request, ServerResponse response) {
        try {
            String username;
            String password;
            Map<String, Object> claims = new LinkedHashMap<>();
            Optional<String[]> basic = basicCredentials(request);
            if (basic.isPresent()) {
                username = basic.get()[0];
                password = basic.get()[1];
            } else {
                JsonNode body = readJson(body(request));
                username = body.path("username").asText(null);
                password = body.path("password").asText(null);
                JsonNode given = body.path("claims");
                if (given.isObject()) {
                    claims.putAll(JSON.convertValue(given, Map.class));
                } else if (!given.isMissingNode() && !given.isNull()) {
                    throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "claims must be a JSON object");
                }
            }
            if (username == null || password == null) {
                throw new MallardException(ErrorCode.USER_AUTH_FAILED, "give username and password in the JSON body, or Basic credentials");
            }
            // With login_url the login service decides, and the token carries what it granted.
            Optional<TokenService.Delegated> delegated = tokens.delegatedLogin(username, password, claims);
            String token;
            if (delegated.isPresent()) {
                username = delegated.get().username();
                token = delegated.get().token();
            } else {
                users.authenticate(username, password, remote(request));
                sessions.checkLoginClaims(username, claims);
                token = tokens.issue(username, claims);
            }
            ObjectNode answer = JSON.createObjectNode();
            answer.put("accessToken", token);
            answer.put("username", username);
            answer.put("tokenType", "Bearer");
            response.header(HeaderNames.CONTENT_TYPE, JSON_TYPE).send(answer.toString());
        } catch (RuntimeException e) {
            if (e instanceof MallardException mallard && mallard.errorCode() == ErrorCode.USER_AUTH_FAILED) {
                metrics.loginFailed("http");
            }
            fail(response, e);
        }
    }

    /**
     * DazzleDuck's split planning ({@code dev.mallard.server.plan}): the query's splits, each with this server's URL and a
     * descriptor whose {@code query} {@code /v1/query} runs, or whose JSON a Flight DoGet ticket carries.
     */
    private void plan(ServerRequest request, ServerResponse response) {
        try {
            Session session = sessions.open(bearer(request));
            List<dev.mallard.server.plan.SplitPlanner.Split> splits = planner.plan(session, policy, queryRequest(request).sql(),
                    dev.mallard.server.plan.SplitPlanner.splitSize(option(request, dev.mallard.server.plan.SplitPlanner.SPLIT_SIZE)));
            io.helidon.common.uri.UriInfo self = request.requestedUri();
            response.header(HeaderNames.CONTENT_TYPE, JSON_TYPE).send(dev.mallard.server.plan.SplitPlanner.answer(splits,
                    List.of(self.scheme() + "://" + self.host() + ":" + self.port())));
        } catch (RuntimeException e) {
            fail(response, e);
        }
    }

    /**
     * Cancels the statement given {@code id} (query parameter, {@code {"id": N}} body, or {@code x-dd-query-id}) among
     * the caller's user's sessions: 200 when it ran, 404 {@code query not found} when none of them runs it. Without
     * an id, whatever the caller's own session (its bearer token's) runs.
     */
    private void cancel(ServerRequest request, ServerResponse response) {
        try {
            AccessToken token = bearer(request);
            // A statement's id: DazzleDuck's number, or the name a client gave it in x-dd-query-id.
            Optional<String> id = request.query().first("id").asOptional();
            if (id.isEmpty()) {
                String body = body(request);
                if (!body.isBlank()) {
                    id = QueryRequest.fromJson(body, false).id().map(String::valueOf);
                }
            }
            id = id.or(() -> option(request, QueryOptions.QUERY_ID)).map(String::trim).filter(value -> !value.isEmpty());
            Optional<String> wanted = id;
            boolean cancelled = wanted.isEmpty()
                    ? sessions.find(token.sessionId()).map(session -> session.cancelRunning(Optional.empty())).orElse(false)
                    : sessions.ofUser(token.username()).stream().map(session -> session.cancelRunning(wanted)).reduce(false, Boolean::logicalOr);
            if (!cancelled) {
                throw new MallardException(ErrorCode.USER_QUERY_NOT_FOUND, "query not found: " + wanted.map(value -> "no statement with id " + value)
                        .orElse("no statement") + " is running in your sessions");
            }
            response.header(HeaderNames.CONTENT_TYPE, JSON_TYPE).send("{\"cancelled\":true,\"message\":\"query cancelled successfully\"}");
        } catch (RuntimeException e) {
            fail(response, e);
        }
    }

    /**
     * Runs a query on a platform thread of its own while the request's virtual thread waits unmounted. DuckDB's native
     * calls pin a virtual thread to its carrier, so statements computing on the carriers themselves would, once there
     * are as many as cores, stall every other request (a {@code /v1/cancel}, {@code /health}) until one ends. The wait
     * lasts as long as the statement, which its timeout and {@code /v1/cancel} bound.
     */
    private void queryOffVirtualThreads(ServerRequest request, ServerResponse response) throws Exception {
        java.util.concurrent.Future<?> work = statements.submit(() -> {
            query(request, response);
            return null;
        });
        try {
            work.get();
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof Exception cause) {
                throw cause;
            }
            throw e;
        } catch (InterruptedException e) {
            work.cancel(true);
            Thread.currentThread().interrupt();
            throw e;
        }
    }

    private void query(ServerRequest request, ServerResponse response) throws IOException {
        Session session = null;
        boolean ephemeral = false;
        long started = System.nanoTime();
        String statementId = "-";
        String user = "-";
        String text = "";
        long[] rowsSent = {0};
        Counting sent = null;
        Exception failure = null;
        try {
            ResultFormat format = ResultFormat.negotiate(request.headers());
            QueryRequest asked = queryRequest(request);
            CompressionUtil.CodecType arrowCompression = arrowCompression(option(request, ARROW_COMPRESSION));
            Optional<String[]> basic = basicCredentials(request);
            if (basic.isPresent()) {
                users.authenticate(basic.get()[0], basic.get()[1], remote(request));
                session = sessions.open(tokens.verify(tokens.issue(basic.get()[0], Map.of())));
                ephemeral = true;
            } else {
                session = sessions.open(bearer(request));
            }
            user = session.username();
            text = asked.sql();
            String sql = asked.sql();
            RowWindow window = RowWindow.resolve(option(request, RowWindow.LIMIT), option(request, RowWindow.OFFSET), policy.mode());
            // Under row-level security the statement DuckDB runs is the token's filtered rewrite, which the gate checks.
            dev.mallard.server.sql.CheckedSql checked = policy.check(session, session.admit(sql));
            QueryOptions options = QueryOptions.resolve(option(request, QueryOptions.FETCH_SIZE), option(request, QueryOptions.QUERY_TIMEOUT),
                    defaultFetchSize, maxTimeoutSeconds).withQueryId(asked.id().map(String::valueOf).or(() -> option(request, QueryOptions.QUERY_ID))
                    .or(() -> Optional.of(String.valueOf(nextStatementId.getAndIncrement()))));
            statementId = options.queryId().orElseThrow();
            Session.Outcome outcome = session.execute(checked, options);
            response.header(HeaderNames.create(QueryOptions.QUERY_ID), options.queryId().orElseThrow());
            if (outcome.rows().isEmpty()) {
                // No rows (SET, DDL, INSERT): an empty answer in the negotiated format, the count in a header.
                response.header(HeaderNames.create(UPDATE_COUNT), String.valueOf(outcome.updateCount().orElse(0)));
                response.header(HeaderNames.CONTENT_TYPE, format.contentType());
                sent = counted(response.outputStream());
                try (OutputStream out = sent) {
                    if (format == ResultFormat.ARROW) {
                        writeEmptyArrowStream(out, session);
                    }
                }
                return;
            }
            try (ResultStream stream = outcome.rows().get(); RowWindow.Rows rows = window.over(stream, session.allocator())) {
                response.header(HeaderNames.CONTENT_TYPE, format.contentType());
                boolean gzip = acceptsGzip(request);
                if (gzip) {
                    response.header(HeaderNames.CONTENT_ENCODING, "gzip");
                }
                response.header(HeaderNames.VARY, "Accept, Accept-Encoding");
                // ArrowStreamWriter writes each buffer separately; gather them into large chunks for the socket.
                sent = counted(response.outputStream());
                OutputStream raw = sent;
                try (OutputStream out = new java.io.BufferedOutputStream(gzip ? new GZIPOutputStream(raw, 1 << 16) : raw, 1 << 18)) {
                    rowsSent[0] = write(format, rows, out, arrowCompression);
                }
            }
        } catch (RuntimeException | IOException e) {
            failure = e;
            if (sent != null || response.isSent()) {
                // Once the output stream is open the status goes out with its first bytes (Helidon's isSent() turns
                // true only when it closes); cutting the stream short is all that is left. A client
                // that went away is routine: one DEBUG line, no stack trace (Helidon logs a CloseConnectionException at TRACE).
                if (clientWentAway(e)) {
                    LOG.debug("client disconnected while streaming remote={} reason={}", remote(request), rootMessage(e));
                } else {
                    LOG.warn("query failed while streaming error={}", Redactor.redact(String.valueOf(e.getMessage())));
                }
                throw new io.helidon.webserver.CloseConnectionException("the result stream was cut short", e);
            }
            fail(response, e instanceof RuntimeException runtime ? runtime : new java.io.UncheckedIOException((IOException) e));
        } finally {
            if (ephemeral && session != null) {
                sessions.discard(session.id());
            }
            audit.finished(statementId, user, "http", text, rowsSent[0], sent == null ? 0 : sent.count(),
                    java.time.Duration.ofNanos(System.nanoTime() - started), StatementAudit.outcome(failure));
        }
    }

    /**
     * ZSTD's level for Arrow bodies. Level 1 rather than Arrow's default 3: on 10M rows of integers, doubles, text
     * and timestamps it wrote 79.8 MB instead of 82.1 MB in 1.5-1.8 s instead of 1.9-2.1 s (curl as the client).
     */
    private static final int ZSTD_LEVEL = 1;

    /** Header of an answer without rows: how many rows the statement changed. */
    static final String UPDATE_COUNT = "x-dd-update-count";

    /** {@code zstd} (the default; also {@code zstandard}) or {@code none}, in any case: how Arrow batch bodies are compressed. */
    public static CompressionUtil.CodecType arrowCompression(Optional<String> asked) {
        String value = asked.orElse("zstd").trim().toLowerCase(java.util.Locale.ROOT);
        return switch (value) {
            case "zstd", "zstandard" -> CompressionUtil.CodecType.ZSTD;
            case "none" -> CompressionUtil.CodecType.NO_COMPRESSION;
            default -> throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "Invalid Arrow compression codec specified: " + asked.get().trim()
                    + "; " + ARROW_COMPRESSION + " takes zstd, zstandard or none");
        };
    }

    /** An Arrow stream of no columns and no batches: what a statement without rows answers in Arrow. */
    private static void writeEmptyArrowStream(OutputStream out, Session session) throws IOException {
        try (VectorSchemaRoot empty = VectorSchemaRoot.create(new org.apache.arrow.vector.types.pojo.Schema(List.of()), session.allocator());
                ArrowStreamWriter writer = new ArrowStreamWriter(empty, null, java.nio.channels.Channels.newChannel(out))) {
            writer.start();
            writer.end();
        }
    }

    /** @return the rows written */
    private static long write(ResultFormat format, RowWindow.Rows rows, OutputStream out, CompressionUtil.CodecType compression) throws IOException {
        VectorSchemaRoot root = rows.root();
        long written = 0;
        switch (format) {
            case ARROW -> {
                try (ArrowStreamWriter writer = new ArrowStreamWriter(root, rows.dictionaries(), java.nio.channels.Channels.newChannel(out),
                        IpcOption.DEFAULT, compression == CompressionUtil.CodecType.NO_COMPRESSION
                                ? NoCompressionCodec.Factory.INSTANCE : CommonsCompressionFactory.INSTANCE, compression,
                        Optional.of(ZSTD_LEVEL))) {
                    writer.start();
                    while (rows.loadNextBatch()) {
                        written += root.getRowCount();
                        writer.writeBatch();
                    }
                    writer.end();
                }
            }
            case JSONL -> {
                JsonLinesWriter writer = new JsonLinesWriter(out, JsonLinesWriter.Decimals.NUMBERS);
                while (rows.loadNextBatch()) {
                    written += writer.write(root, rows.dictionaries());
                }
                writer.flush();
            }
            case TSV -> {
                TsvWriter writer = new TsvWriter(out);
                writer.writeHeader(root.getSchema().getFields());
                while (rows.loadNextBatch()) {
                    written += root.getRowCount();
                    writer.write(root, rows.dictionaries());
                }
                writer.flush();
            }
        }
        return written;
    }

    /** The stream, counting what goes through it into the bytes {@code /health} and {@code /metrics} report. */
    private Counting counted(OutputStream out) {
        return new Counting(out);
    }

    private final class Counting extends java.io.FilterOutputStream {
        private long count;

        Counting(OutputStream out) {
            super(out);
        }

        long count() {
            return count;
        }

        @Override
        public void write(int b) throws IOException {
            out.write(b);
            wrote(1);
        }

        @Override
        public void write(byte[] bytes, int offset, int length) throws IOException {
            out.write(bytes, offset, length);
            wrote(length);
        }

        private void wrote(long bytes) {
            count += bytes;
            health.wrote(bytes);
            metrics.bytesOut(bytes);
        }
    }

    /** An {@code x-dd-*} option: the header, or else the query parameter of the same name. */
    private static Optional<String> option(ServerRequest request, String name) {
        Optional<String> header = request.headers().first(io.helidon.http.HeaderNames.create(name));
        return header.isPresent() ? header : request.query().first(name).asOptional();
    }

    /** True when Accept-Encoding admits gzip ({@link AcceptEncoding}: quality factors and {@code *} honoured). */
    static boolean acceptsGzip(ServerRequest request) {
        return AcceptEncoding.accepts(request.headers().all(HeaderNames.ACCEPT_ENCODING, List::of), "gzip");
    }

    /** The request body as UTF-8 text, read no further than {@code http.max_body_bytes}. */
    private String body(ServerRequest request) {
        if (!request.content().hasEntity()) {
            return "";
        }
        try (java.io.InputStream in = request.content().inputStream()) {
            byte[] bytes = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, maxBodyBytes + 1));
            if (bytes.length > maxBodyBytes) {
                throw new MallardException(ErrorCode.USER_REQUEST_TOO_LARGE, "the request body is larger than " + maxBodyBytes
                        + " bytes, the server's http.max_body_bytes; send a shorter query or raise the limit");
            }
            health.read(bytes.length);
            metrics.bytesIn(bytes.length);
            return new String(bytes, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "the request body could not be read: " + e.getMessage(), e);
        }
    }

    /**
     * The statement asked for: {@code GET ?q=...&id=N}, or a POST body that is DazzleDuck's JSON
     * {@code {"query": "...", "id": N}} or the SQL text itself.
     */
    private QueryRequest queryRequest(ServerRequest request) {
        Optional<String> id = request.query().first("id").asOptional();
        Optional<String> q = request.query().first("q").asOptional();
        if (q.isPresent() && !q.get().isBlank()) {
            return new QueryRequest(q.get(), id.map(QueryRequest::statementId));
        }
        String body = body(request);
        if (body.isBlank()) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID,
                    "Missing required parameter: q; give the query as the q parameter, a JSON body {\"query\": ...} or the request body");
        }
        return QueryRequest.fromBody(body, id);
    }

    private AccessToken bearer(ServerRequest request) {
        Optional<String> header = request.headers().first(HeaderNames.AUTHORIZATION);
        if (header.isEmpty() || !header.get().regionMatches(true, 0, "Bearer ", 0, 7)) {
            throw new MallardException(ErrorCode.USER_AUTH_FAILED,
                    "no access token; get one from POST /v1/login and send it as Authorization: Bearer <token>");
        }
        return tokens.verify(header.get().substring(7).trim());
    }

    private static Optional<String[]> basicCredentials(ServerRequest request) {
        Optional<String> header = request.headers().first(HeaderNames.AUTHORIZATION);
        if (header.isEmpty() || !header.get().regionMatches(true, 0, "Basic ", 0, 6)) {
            return Optional.empty();
        }
        String decoded;
        try {
            decoded = new String(Base64.getDecoder().decode(header.get().substring(6).trim()), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new MallardException(ErrorCode.USER_AUTH_FAILED, "the Basic credentials are not base64");
        }
        int colon = decoded.indexOf(':');
        if (colon < 0) {
            throw new MallardException(ErrorCode.USER_AUTH_FAILED, "the Basic credentials are not user:password");
        }
        return Optional.of(new String[] {decoded.substring(0, colon), decoded.substring(colon + 1)});
    }

    private static JsonNode readJson(String text) {
        try {
            JsonNode node = JSON.readTree(text);
            if (node == null || !node.isObject()) {
                throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "the body must be a JSON object");
            }
            return node;
        } catch (com.fasterxml.jackson.core.exc.StreamConstraintsException e) {
            // Jackson's own message names its internals (StreamReadConstraints); say what is wrong instead.
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "the body nests or runs longer than a login or query body may; send a flat JSON object");
        } catch (JsonProcessingException e) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "the body is not JSON: " + e.getOriginalMessage());
        }
    }

    /** Whether a failure while sending is the client closing its end: an I/O error writing to the socket. */
    static boolean clientWentAway(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof IOException || cause instanceof io.helidon.webserver.ServerConnectionException) {
                return true;
            }
        }
        return false;
    }

    private static String rootMessage(Throwable failure) {
        Throwable root = failure;
        while (root.getCause() != null) {
            root = root.getCause();
        }
        return Redactor.redact(String.valueOf(root.getMessage()));
    }

    /** The client's address, as failed logins are counted and logged. */
    private static String remote(ServerRequest request) {
        return request.remotePeer().host();
    }

    private static void fail(ServerResponse response, RuntimeException e) {
        if (e instanceof dev.mallard.server.auth.LoginThrottledException throttled) {
            response.header(HeaderNames.RETRY_AFTER, Long.toString(throttled.retryAfterSeconds()));
        }
        HttpErrors.send(response, e, LOG, "request");
    }

    @Override
    public void close() {
        try {
            endpoints.close();
        } finally {
            statements.shutdownNow();
        }
    }
}
