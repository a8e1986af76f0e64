// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.namedquery;

import dev.mallard.server.http.HttpApi;
import dev.mallard.server.http.HttpErrors;
import dev.mallard.server.http.ResultFormat;
import dev.mallard.server.http.TsvWriter;
import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.JinjavaConfig;
import dev.mallard.core.arrow.JsonLinesWriter;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.error.Redactor;
import dev.mallard.server.auth.TokenService;
import dev.mallard.server.session.QueryOptions;
import dev.mallard.server.session.ResultStream;
import dev.mallard.server.session.Session;
import dev.mallard.server.session.SessionRegistry;
import dev.mallard.server.sql.AccessPolicy;
import dev.mallard.server.sql.CheckedSql;
import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Supplier;
import org.apache.arrow.compression.CommonsCompressionFactory;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.compression.NoCompressionCodec;
import org.apache.arrow.vector.ipc.message.IpcOption;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * DazzleDuck's named queries over HTTP: Jinja SQL templates kept in the {@code named_query_table}.
 * {@code GET /v1/named-query} lists them ({@code offset} is an id to start after, {@code limit} at most 200),
 * {@code GET /v1/named-query/{name}} shows one, {@code POST /v1/named-query} runs one with its parameters and answers
 * Arrow (zstd-compressed unless {@code x-dd-arrow-compression: none}) or, by Accept, TSV or JSON lines. Statuses and plain-text bodies are DazzleDuck's: 400 for a body without a name or
 * parameters a validator refuses, 404 for an unknown name.
 *
 * <p>A rendered template is a client statement like any other: it goes {@code policy.check(session,
 * session.admit(sql))} on the caller's session and runs there, so the access mode and the token's row filters apply
 * to it as to {@code /v1/query}. The template table itself is read on a server connection, outside the caller's
 * session: it is the server's configuration, and a caller needs a valid token to read it.
 */
public final class NamedQueries implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(NamedQueries.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    static final int DEFAULT_LIMIT = 20;
    static final int MAX_LIMIT = 200;
    /** DazzleDuck's header naming an Arrow answer's compression: {@code zstd} (the default) or {@code none}. */
    private static final String ARROW_COMPRESSION = "x-dd-arrow-compression";
    /** zstd's level for Arrow bodies, as /v1/query uses it. */
    private static final int ZSTD_LEVEL = 1;

    private final NamedQueryTable table;
    private final Connection connection;
    private final TokenService tokens;
    private final SessionRegistry sessions;
    private final AccessPolicy policy;
    private final int fetchSize;
    private final int maxTimeoutSeconds;
    private final Jinjava jinja = new Jinjava(JinjavaConfig.newBuilder().build());
    private final Map<String, ParameterValidator> validators = new ConcurrentHashMap<>();
    private final ExecutorService statements = Executors.newCachedThreadPool(Thread.ofPlatform().name("named-query-", 0).daemon().factory());

    /**
     * @param tableName the {@code named_query_table}
     * @param connect a connection to the served database, for reading the template table
     */
    public NamedQueries(String tableName, Supplier<Connection> connect, TokenService tokens, SessionRegistry sessions, AccessPolicy policy,
            int fetchSize, int maxTimeoutSeconds) {
        this.table = new NamedQueryTable(requireNonNull(tableName, "tableName is null"));
        this.tokens = requireNonNull(tokens, "tokens is null");
        this.sessions = requireNonNull(sessions, "sessions is null");
        this.policy = requireNonNull(policy, "policy is null");
        this.fetchSize = fetchSize;
        this.maxTimeoutSeconds = maxTimeoutSeconds;
        this.connection = requireNonNull(connect, "connect is null").get();
    }

    /** Adds {@code GET /v1/named-query}, {@code GET /v1/named-query/{name}} and {@code POST /v1/named-query}. */
    public void routes(HttpRouting.Builder routes) {
        routes.get("/v1/named-query", (request, response) -> offVirtualThread(() -> list(request, response)))
                .get("/v1/named-query/{name}", (request, response) -> offVirtualThread(() -> describe(request, response)))
                .post("/v1/named-query", (request, response) -> offVirtualThread(() -> execute(request, response)));
    }

    private void list(ServerRequest request, ServerResponse response) {
        try {
            caller(request);
            long offset = Math.max(0, number(request, "offset", 0));
            long asked = number(request, "limit", DEFAULT_LIMIT);
            int limit = (int) (asked < 1 ? DEFAULT_LIMIT : Math.min(asked, MAX_LIMIT));
            byte[] body = readTable(() -> table.list(connection, offset, limit));
            response.header(HeaderNames.CONTENT_TYPE, "application/json").send(body);
        } catch (RuntimeException e) {
            fail(response, e);
        }
    }

    private void describe(ServerRequest request, ServerResponse response) {
        try {
            caller(request);
            String name = request.path().pathParameters().get("name");
            Optional<byte[]> body = readTable(() -> table.describe(connection, name));
            if (body.isEmpty()) {
                text(response, Status.NOT_FOUND_404, "Named query not found: " + name);
                return;
            }
            response.header(HeaderNames.CONTENT_TYPE, "application/json").send(body.get());
        } catch (RuntimeException e) {
            fail(response, e);
        }
    }

    private void execute(ServerRequest request, ServerResponse response) {
        String name;
        Map<String, String> parameters = new LinkedHashMap<>();
        try (InputStream in = request.content().inputStream()) {
            JsonNode body = JSON.readTree(in);
            if (body == null || !body.isObject()) {
                throw new IOException("not a JSON object");
            }
            name = body.path("name").isTextual() ? body.get("name").asText() : null;
            JsonNode given = body.path("parameters");
            if (given.isObject()) {
                given.fields().forEachRemaining(entry -> parameters.put(entry.getKey(), entry.getValue().isTextual()
                        ? entry.getValue().asText() : entry.getValue().toString()));
            } else if (!given.isMissingNode() && !given.isNull()) {
                throw new IOException("parameters is not an object");
            }
        } catch (IOException | RuntimeException e) {
            text(response, Status.BAD_REQUEST_400, "Invalid request body");
            return;
        }
        if (name == null || name.isBlank()) {
            text(response, Status.BAD_REQUEST_400, "Missing required field: name");
            return;
        }
        try {
            Session session = caller(request);
            String wanted = name;
            Optional<NamedQueryTable.Definition> definition = readTable(() -> table.find(connection, wanted));
            if (definition.isEmpty()) {
                text(response, Status.NOT_FOUND_404, "Named query not found: " + name);
                return;
            }
            List<String> problems = validate(definition.get().validators(), parameters);
            if (!problems.isEmpty()) {
                text(response, Status.BAD_REQUEST_400, String.join("; ", problems));
                return;
            }
            String sql;
            try {
                sql = jinja.render(definition.get().template(), new LinkedHashMap<>(parameters));
            } catch (RuntimeException e) {
                throw new MallardException(ErrorCode.USER_NAMED_QUERY_PARAMETER_INVALID, "the template of " + name + " does not render: " + e.getMessage(), e);
            }
            // The rendered text is a client statement: the row filter rewrite, then the access gate, on the caller's session.
            CheckedSql checked = policy.check(session, session.admit(sql));
            QueryOptions options = QueryOptions.resolve(request.headers().first(HeaderNames.create(QueryOptions.FETCH_SIZE)),
                    request.headers().first(HeaderNames.create(QueryOptions.QUERY_TIMEOUT)), fetchSize, maxTimeoutSeconds);
            Session.Outcome outcome = session.execute(checked, options);
            // As /v1/query negotiates: TSV or JSON lines by Accept, else Arrow, compressed as x-dd-arrow-compression asks (zstd by default).
            ResultFormat format = ResultFormat.negotiate(request.headers());
            CompressionUtil.CodecType compression = HttpApi.arrowCompression(request.headers().first(HeaderNames.create(ARROW_COMPRESSION)));
            response.header(HeaderNames.CONTENT_TYPE, format.contentType());
            if (outcome.rows().isEmpty()) {
                try (OutputStream out = response.outputStream()) {
                    if (format == ResultFormat.ARROW) {
                        try (VectorSchemaRoot empty = VectorSchemaRoot.create(new org.apache.arrow.vector.types.pojo.Schema(List.of()), session.allocator());
                                ArrowStreamWriter writer = new ArrowStreamWriter(empty, null, Channels.newChannel(out))) {
                            writer.start();
                            writer.end();
                        }
                    }
                }
                return;
            }
            try (ResultStream rows = outcome.rows().get(); OutputStream out = new BufferedOutputStream(response.outputStream(), 1 << 16)) {
                VectorSchemaRoot root = rows.root();
                switch (format) {
                    case JSONL -> {
                        JsonLinesWriter writer = new JsonLinesWriter(out, JsonLinesWriter.Decimals.NUMBERS);
                        while (rows.loadNextBatch()) {
                            writer.write(root, rows.reader());
                        }
                        writer.flush();
                    }
                    case TSV -> {
                        TsvWriter writer = new TsvWriter(out);
                        writer.writeHeader(root.getSchema().getFields());
                        while (rows.loadNextBatch()) {
                            writer.write(root, rows.reader());
                        }
                        writer.flush();
                    }
                    case ARROW -> {
                        try (ArrowStreamWriter writer = new ArrowStreamWriter(root, rows.reader(), Channels.newChannel(out), IpcOption.DEFAULT,
                                compression == CompressionUtil.CodecType.NO_COMPRESSION ? NoCompressionCodec.Factory.INSTANCE : CommonsCompressionFactory.INSTANCE,
                                compression, Optional.of(ZSTD_LEVEL))) {
                            writer.start();
                            while (rows.loadNextBatch()) {
                                writer.writeBatch();
                            }
                            writer.end();
                        }
                    }
                }
            }
        } catch (RuntimeException | IOException e) {
            if (response.isSent()) {
                LOG.warn("named query failed while streaming name={} error={}", name, Redactor.redact(String.valueOf(e.getMessage())));
                throw new io.helidon.webserver.CloseConnectionException("the result stream was cut short", e);
            }
            fail(response, e instanceof RuntimeException runtime ? runtime : new java.io.UncheckedIOException((IOException) e));
        }
    }

    /** Every validator's refusal, as DazzleDuck collects them; a class that is not a {@link ParameterValidator} is refused, never instantiated. */
    private List<String> validate(List<String> classNames, Map<String, String> parameters) {
        List<String> problems = new ArrayList<>();
        for (String className : classNames) {
            ParameterValidator validator;
            try {
                validator = validators.computeIfAbsent(className, NamedQueries::instantiate);
            } catch (RuntimeException e) {
                problems.add("Validator configuration error: " + className + " — " + e.getMessage());
                continue;
            }
            try {
                validator.validate(Map.copyOf(parameters));
            } catch (ParameterValidator.Rejected e) {
                problems.add(e.getMessage());
            }
        }
        return problems;
    }

    private static ParameterValidator instantiate(String className) {
        Class<?> type;
        try {
            type = Class.forName(className, false, NamedQueries.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new IllegalArgumentException("no such class on the server's class path");
        }
        if (!ParameterValidator.class.isAssignableFrom(type)) {
            throw new IllegalArgumentException("not a " + ParameterValidator.class.getName());
        }
        try {
            return (ParameterValidator) type.getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            throw new IllegalArgumentException("cannot be made with a public no-argument constructor: " + e);
        }
    }

    private Session caller(ServerRequest request) {
        Optional<String> header = request.headers().first(HeaderNames.AUTHORIZATION);
        if (header.isEmpty() || !header.get().regionMatches(true, 0, "Bearer ", 0, 7)) {
            throw new MallardException(ErrorCode.USER_AUTH_FAILED, "no access token; get one from POST /v1/login and send it as Authorization: Bearer <token>");
        }
        return sessions.open(tokens.verify(header.get().substring(7).trim()));
    }

    private static long number(ServerRequest request, String name, long fallback) {
        Optional<String> value = request.query().first(name).asOptional();
        if (value.isEmpty()) {
            return fallback;
        }
        try {
            return Long.parseLong(value.get().trim());
        } catch (NumberFormatException e) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, name + " '" + value.get() + "' is not a number");
        }
    }

    @FunctionalInterface
    private interface TableRead<T> {
        T read() throws SQLException;
    }

    private <T> T readTable(TableRead<T> read) {
        synchronized (connection) {
            try {
                return read.read();
            } catch (SQLException e) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "named_query_table cannot be read: " + e.getMessage(), e);
            }
        }
    }

    /** DuckDB's native calls pin a virtual thread; they run on a platform thread while the request's thread waits. */
    private void offVirtualThread(Runnable work) throws Exception {
        Future<?> future = statements.submit(work);
        try {
            future.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception cause) {
                throw cause;
            }
            throw e;
        } catch (InterruptedException e) {
            future.cancel(true);
            Thread.currentThread().interrupt();
            throw e;
        }
    }

    private static void text(ServerResponse response, Status status, String message) {
        response.status(status).header(HeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8").send(message);
    }

    private static void fail(ServerResponse response, RuntimeException e) {
        HttpErrors.send(response, e, LOG, "named query request");
    }

    @Override
    public void close() {
        statements.shutdownNow();
        try {
            connection.close();
        } catch (SQLException e) {
            LOG.debug("closing the named query connection failed reason={}", e.getMessage());
        }
    }
}
