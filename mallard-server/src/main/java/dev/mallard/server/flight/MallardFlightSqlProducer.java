// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.flight;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.Message;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlText;
import dev.mallard.server.arrow.ArrowValues;
import dev.mallard.server.config.AccessMode;
import dev.mallard.server.ops.StatementAudit;
import dev.mallard.server.rows.RowWindow;
import dev.mallard.server.session.QueryOptions;
import dev.mallard.server.session.ResultStream;
import dev.mallard.server.session.Session;
import dev.mallard.server.session.SessionRegistry;
import dev.mallard.server.sql.AccessPolicy;
import dev.mallard.server.sql.CheckedSql;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.channels.Channels;
import java.sql.ParameterMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSetMetaData;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.CancelFlightInfoRequest;
import org.apache.arrow.flight.CancelStatus;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.PutResult;
import org.apache.arrow.flight.Result;
import org.apache.arrow.flight.SchemaResult;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.flight.CloseSessionRequest;
import org.apache.arrow.flight.CloseSessionResult;
import org.apache.arrow.flight.GetSessionOptionsRequest;
import org.apache.arrow.flight.GetSessionOptionsResult;
import org.apache.arrow.flight.SetSessionOptionsRequest;
import org.apache.arrow.flight.SetSessionOptionsResult;
import org.apache.arrow.flight.sql.NoOpFlightSqlProducer;
import org.apache.arrow.flight.sql.SqlInfoBuilder;
import org.apache.arrow.flight.sql.impl.FlightSql.ActionClosePreparedStatementRequest;
import org.apache.arrow.flight.sql.impl.FlightSql.ActionCreatePreparedStatementRequest;
import org.apache.arrow.flight.sql.impl.FlightSql.ActionCreatePreparedStatementResult;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandGetCatalogs;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandGetDbSchemas;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandGetPrimaryKeys;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandGetSqlInfo;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandGetTableTypes;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandGetTables;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandGetXdbcTypeInfo;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandPreparedStatementQuery;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandPreparedStatementUpdate;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementQuery;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementUpdate;
import org.apache.arrow.flight.sql.impl.FlightSql.DoPutUpdateResult;
import org.apache.arrow.flight.sql.impl.FlightSql.SqlSupportedTransaction;
import org.apache.arrow.flight.sql.impl.FlightSql.TicketStatementQuery;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.WriteChannel;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.Schema;
import org.duckdb.DuckDBResultSetMetaData;
import org.duckdb.StatementReturnType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Flight SQL producer over DuckDB. A statement runs when its FlightInfo is asked for (so the info carries the
 * result's real schema); the result waits in the caller's session under a handle that the ticket names, and DoGet
 * streams it with flow control. The RPCs not overridden here answer UNIMPLEMENTED.
 */
public final class MallardFlightSqlProducer extends NoOpFlightSqlProducer {
    private static final Logger LOG = LoggerFactory.getLogger(MallardFlightSqlProducer.class);

    private final SessionRegistry sessions;
    private final AccessPolicy policy;
    private final BufferAllocator allocator;
    private final SqlInfoBuilder sqlInfo;
    private final int defaultFetchSize;
    private final int maxTimeoutSeconds;
    private final StatementAudit audit;
    private final Optional<dev.mallard.server.ingest.Ingestion> ingestion;
    /**
     * DoGet streams results from threads of their own, never from the gRPC call's thread: gRPC delivers a call's
     * ready and cancel callbacks on that thread, so a handler blocked in DuckDB or in flow control would never hear
     * that the client cancelled or became ready. Platform threads, because a DuckDB call pins a virtual one's carrier.
     */
    private final ExecutorService streams = Executors.newCachedThreadPool(Thread.ofPlatform().name("flight-stream-", 0).daemon().factory());

    private final dev.mallard.server.plan.SplitPlanner planner;
    private final org.apache.arrow.flight.Location[] dataProcessors;

    /**
     * @param planner plans a GetFlightInfo sent with {@code x-dd-split-size} into one endpoint per split
     * @param dataProcessors the locations each split's endpoint names (none: this server)
     */
    public MallardFlightSqlProducer(SessionRegistry sessions, AccessPolicy policy, BufferAllocator allocator, String version,
            int defaultFetchSize, int maxTimeoutSeconds, StatementAudit audit, dev.mallard.server.plan.SplitPlanner planner,
            List<java.net.URI> dataProcessors) {
        this(sessions, policy, allocator, version, defaultFetchSize, maxTimeoutSeconds, audit, planner, dataProcessors, Optional.empty());
    }

    /** @param ingestion where a DoPut ingest with the {@code ingestion_queue} option goes */
    public MallardFlightSqlProducer(SessionRegistry sessions, AccessPolicy policy, BufferAllocator allocator, String version,
            int defaultFetchSize, int maxTimeoutSeconds, StatementAudit audit, dev.mallard.server.plan.SplitPlanner planner,
            List<java.net.URI> dataProcessors, Optional<dev.mallard.server.ingest.Ingestion> ingestion) {
        this.ingestion = requireNonNull(ingestion, "ingestion is null");
        this.planner = requireNonNull(planner, "planner is null");
        this.dataProcessors = dataProcessors.stream().map(org.apache.arrow.flight.Location::new).toArray(org.apache.arrow.flight.Location[]::new);
        this.audit = requireNonNull(audit, "audit is null");
        this.defaultFetchSize = defaultFetchSize;
        this.maxTimeoutSeconds = maxTimeoutSeconds;
        this.sessions = requireNonNull(sessions, "sessions is null");
        this.policy = requireNonNull(policy, "policy is null");
        this.allocator = requireNonNull(allocator, "allocator is null");
        this.sqlInfo = new SqlInfoBuilder()
                .withFlightSqlServerName("Mallard")
                .withFlightSqlServerVersion(version)
                .withFlightSqlServerArrowVersion("18.3.0")
                .withFlightSqlServerReadOnly(policy.mode() != AccessMode.COMPLETE)
                .withFlightSqlServerSql(true)
                .withFlightSqlServerSubstrait(false)
                .withFlightSqlServerTransaction(SqlSupportedTransaction.SQL_SUPPORTED_TRANSACTION_NONE)
                .withFlightSqlServerCancel(true)
                .withFlightSqlServerBulkIngestion(true)
                .withFlightSqlServerBulkIngestionTransaction(false)
                .withSqlIdentifierQuoteChar("\"")
                .withSqlSchemaTerm("schema")
                .withSqlCatalogTerm("database")
                .withSqlProcedureTerm("procedure")
                .withSqlDdlCatalog(true)
                .withSqlDdlSchema(true)
                .withSqlDdlTable(true)
                .withSqlSearchStringEscape("\\")
                .withSqlTransactionsSupported(false)
                .withSqlSupportsColumnAliasing(true)
                .withSqlNullPlusNullIsNull(true)
                .withSqlSupportsExpressionsInOrderBy(true)
                .withSqlSupportsOrderByUnrelated(true)
                .withSqlSupportsLikeEscapeClause(true)
                .withSqlSupportsNonNullableColumns(true)
                .withSqlCorrelatedSubqueriesSupported(true)
                .withSqlBatchUpdatesSupported(false)
                .withSqlNamedParametersSupported(false);
    }

    // ---- statements ----

    @Override
    public FlightInfo getFlightInfoStatement(CommandStatementQuery command, CallContext context, FlightDescriptor descriptor) {
        return guarded(() -> {
            window(context);
            Session session = statementSession(context);
            String sql = command.getQuery();
            CheckedSql checked = policy.check(session, session.admit(sql));
            long splitSize = dev.mallard.server.plan.SplitPlanner.splitSize(header(context, dev.mallard.server.plan.SplitPlanner.SPLIT_SIZE));
            if (splitSize > 0 && dev.mallard.server.plan.SplitPlanner.plannable(checked)) {
                return splitInfo(session, sql, splitSize, context, descriptor);
            }
            if (checked.throughViews()) {
                return pending(session, session.execute(checked, options(context)), descriptor);
            }
            // Prepared now, so the info carries the schema; a query runs in its DoGet, where a cancel can reach it.
            PreparedQuery prepared = prepare(session, checked, context);
            if (!prepared.parameterSchema().getFields().isEmpty()) {
                session.release(prepared);
                throw new MallardException(ErrorCode.USER_SQL_INVALID, "a statement query takes no parameters, and this one has "
                        + prepared.parameterSchema().getFields().size() + "; prepare it (ActionCreatePreparedStatement) and bind them");
            }
            if (prepared.datasetSchema().getFields().isEmpty()) {
                return pending(session, session.executeOwned(prepared.statement(), options(context)), descriptor);
            }
            String handle = UUID.randomUUID().toString();
            session.keep(handle, DeferredQuery.ofStatement(prepared, options(context)));
            return new FlightInfo(prepared.datasetSchema(), descriptor, List.of(endpoint(handle)), -1, -1);
        });
    }

    @Override
    public SchemaResult getSchemaStatement(CommandStatementQuery command, CallContext context, FlightDescriptor descriptor) {
        return guarded(() -> {
            Session session = statementSession(context);
            CheckedSql checked = policy.check(session, session.admit(command.getQuery()));
            if (checked.throughViews()) {
                // The views' front door has no prepare without running: their texts are refused here rather than run.
                throw new MallardException(ErrorCode.USER_VIEW_UNSUPPORTED,
                        "GetSchema of a statement naming a materialized view or a dbsp_ function: run it (GetFlightInfo) to see its schema");
            }
            // Prepared only, never run: DuckDB binds the text and answers its columns.
            PreparedQuery prepared = prepare(session, checked, context);
            try {
                return new SchemaResult(prepared.datasetSchema());
            } finally {
                session.release(prepared);
            }
        });
    }

    /** One endpoint per split, its ticket the split's signed descriptor, each naming the data processors. */
    private FlightInfo splitInfo(Session session, String sql, long splitSize, CallContext context, FlightDescriptor descriptor) {
        List<dev.mallard.server.plan.SplitPlanner.Split> splits = planner.plan(session, policy, sql, splitSize);
        PreparedQuery prepared = prepare(session, policy.check(session, session.admit(sql)), context);
        Schema schema = prepared.datasetSchema();
        session.release(prepared);
        List<FlightEndpoint> endpoints = new ArrayList<>();
        for (dev.mallard.server.plan.SplitPlanner.Split split : splits) {
            TicketStatementQuery ticket = TicketStatementQuery.newBuilder().setStatementHandle(ByteString.copyFromUtf8(split.descriptor())).build();
            endpoints.add(new FlightEndpoint(new Ticket(Any.pack(ticket).toByteArray()), dataProcessors));
        }
        return new FlightInfo(schema, descriptor, endpoints, -1, -1);
    }

    /**
     * A split descriptor's SQL, checked for this session as every statement is ({@code policy.check(session, session.admit(sql))}),
     * kept as a query this DoGet runs.
     */
    private String keepSplit(Session session, String descriptor, CallContext context) {
        CheckedSql checked = policy.check(session, session.admit(planner.verifiedSql(descriptor)));
        if (checked.throughViews()) {
            throw new MallardException(ErrorCode.USER_VIEW_UNSUPPORTED, "a split runs a query over Parquet files, not a materialized view statement");
        }
        PreparedQuery prepared = prepare(session, checked, context);
        String handle = UUID.randomUUID().toString();
        session.keep(handle, DeferredQuery.ofStatement(prepared, options(context)));
        return handle;
    }

    private static java.util.Optional<String> header(CallContext context, String name) {
        CallHeadersMiddleware headers = context.getMiddleware(CallHeadersMiddleware.KEY);
        return headers == null ? java.util.Optional.empty() : headers.get(name);
    }

    @Override
    public void getStreamStatement(TicketStatementQuery ticket, CallContext context, ServerStreamListener listener) {
        String given = ticket.getStatementHandle().toStringUtf8();
        try {
            Session session = dev.mallard.server.plan.SplitPlanner.isDescriptor(given) ? statementSession(context) : session(context);
            String handle = dev.mallard.server.plan.SplitPlanner.isDescriptor(given) ? keepSplit(session, given, context) : given;
            java.util.Optional<DeferredQuery> deferred = session.find(handle, DeferredQuery.class);
            if (deferred.isPresent()) {
                QueryOptions options = atDoGet(deferred.get().options(), context);
                RowWindow window = window(context);
                long started = System.nanoTime();
                streams.execute(() -> audited(session, options.queryId().orElse(handle), deferred.get().prepared().sql(), started, listener,
                        () -> runDeferred(session, handle, deferred.get(), options, window, listener)));
                return;
            }
            if (session.take(handle, NoRows.class).isPresent()) {
                sendNoRows(listener);
                return;
            }
            ResultStream result = session.take(handle, ResultStream.class)
                    .orElseThrow(() -> FlightErrors.notFound("no result waits under this ticket: it was fetched already or its session closed"));
            long started = System.nanoTime();
            streams.execute(() -> audited(session, handle, "(a result computed at GetFlightInfo)", started, listener, () -> {
                try (result) {
                    return ResultSender.send(result, listener);
                }
            }));
        } catch (Throwable e) {
            listener.error(FlightErrors.toFlight(e));
        }
    }

    @FunctionalInterface
    private interface Streaming {
        void run() throws Exception;
    }

    @FunctionalInterface
    private interface Sending {
        ResultSender.Sent run() throws Exception;
    }

    /** Streams a statement's result and writes its audit line (and metrics), however it ends. */
    private void audited(Session session, String id, String sql, long started, ServerStreamListener listener, Sending sending) {
        ResultSender.Sent sent = new ResultSender.Sent(0, 0);
        Throwable failure = null;
        try {
            sent = sending.run();
        } catch (Throwable e) {
            failure = e instanceof org.apache.arrow.flight.FlightRuntimeException flight && flight.status().code() == org.apache.arrow.flight.FlightStatusCode.CANCELLED
                    ? new MallardException(ErrorCode.USER_SQL_CANCELLED, String.valueOf(e.getMessage())) : e;
            listener.error(FlightErrors.toFlight(e));
        } finally {
            audit.finished(id, session.username(), "flight", sql, sent.rows(), sent.bytes(), java.time.Duration.ofNanos(System.nanoTime() - started),
                    StatementAudit.outcome(failure));
        }
    }

    private static void streamed(ServerStreamListener listener, Streaming streaming) {
        try {
            streaming.run();
        } catch (Throwable e) {
            listener.error(FlightErrors.toFlight(e));
        }
    }

    /** Runs a prepared query in its DoGet; the client cancelling the call, or CancelFlightInfo, interrupts it. */
    private static ResultSender.Sent runDeferred(Session session, String handle, DeferredQuery query, QueryOptions options, RowWindow window,
            ServerStreamListener listener) throws IOException {
        if (!query.start()) {
            session.take(handle, DeferredQuery.class);
            throw query.cancelled() ? CallStatus.CANCELLED.withDescription("the query was cancelled on request before it ran").toRuntimeException()
                    : FlightErrors.notFound("no result waits under this ticket: it was fetched already or its session closed");
        }
        Runnable onClientCancel = () -> query.cancel(session);
        listener.setOnCancelHandler(onClientCancel);
        try (DeferredQuery.Hold held = query.hold(session)) {
            session.sql(connection -> {
                query.prepared().apply(query.parameters());
                return null;
            });
            Session.Outcome outcome = session.execute(query.prepared().statement(), options);
            if (outcome.rows().isEmpty()) {
                throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "the prepared statement returned no rows; run it as an update");
            }
            try (ResultStream result = outcome.rows().get(); RowWindow.Rows rows = window.over(result, session.allocator())) {
                ResultSender.Sent sent = ResultSender.send(rows, listener, onClientCancel, query::cancelled);
                LOG.debug("result sent user={} rows={}", session.username(), sent.rows());
                return sent;
            }
        } finally {
            query.finish();
            session.take(handle, DeferredQuery.class);
        }
    }

    @Override
    public Runnable acceptPutStatement(CommandStatementUpdate command, CallContext context, FlightStream stream, StreamListener<PutResult> ack) {
        return () -> {
            try {
                Session session = statementSession(context);
                CheckedSql checked = policy.check(session, session.admit(command.getQuery()));
                Session.Outcome outcome = session.execute(checked, options(context));
                outcome.rows().ifPresent(ResultStream::close);
                acknowledge(ack, outcome.updateCount().orElse(0));
            } catch (Throwable e) {
                ack.onError(FlightErrors.toFlight(e));
            }
        };
    }

    @Override
    public Runnable acceptPutStatementBulkIngest(CommandStatementIngest command, CallContext context, FlightStream stream,
            StreamListener<PutResult> ack) {
        if (ingestion.isPresent() && dev.mallard.server.ingest.Ingestion.wantsQueue(command)) {
            CallHeadersMiddleware headers = context.getMiddleware(CallHeadersMiddleware.KEY);
            return () -> ingestion.get().put(command, headers == null ? Optional.empty() : headers.get("authorization"), stream, ack);
        }
        return () -> {
            try {
                Session session = session(context);
                if (policy.mode() != AccessMode.COMPLETE) {
                    throw new MallardException(ErrorCode.USER_ACCESS_DENIED, "this server is " + policy.mode()
                            + ": it takes no ingestion; connect to a COMPLETE server to load data");
                }
                long rows = BulkIngest.run(session, command, stream, session.allocator());
                session.syncViews();
                LOG.debug("ingested user={} table={} rows={}", session.username(), command.getTable(), rows);
                acknowledge(ack, rows);
            } catch (Throwable e) {
                ack.onError(FlightErrors.toFlight(e));
            }
        };
    }

    // ---- prepared statements ----

    @Override
    public void createPreparedStatement(ActionCreatePreparedStatementRequest request, CallContext context, StreamListener<Result> listener) {
        try {
            Session session = statementSession(context);
            String sql = request.getQuery();
            PreparedQuery prepared = prepare(session, policy.check(session, session.admit(sql)), context);
            String handle = UUID.randomUUID().toString();
            session.keepPrepared(handle, prepared);
            ActionCreatePreparedStatementResult result = ActionCreatePreparedStatementResult.newBuilder()
                    .setPreparedStatementHandle(ByteString.copyFromUtf8(handle))
                    .setDatasetSchema(ByteString.copyFrom(serialize(prepared.datasetSchema())))
                    .setParameterSchema(ByteString.copyFrom(serialize(prepared.parameterSchema())))
                    .build();
            listener.onNext(new Result(Any.pack(result).toByteArray()));
            listener.onCompleted();
        } catch (Throwable e) {
            listener.onError(FlightErrors.toFlight(e));
        }
    }

    private PreparedQuery prepare(Session session, CheckedSql checked, CallContext context) {
        String sql = checked.sql();
        if (checked.throughViews()) {
            Session.Outcome first = session.execute(checked, options(context));
            return PreparedQuery.throughViews(sql, first, first.rows().map(MallardFlightSqlProducer::announced).orElse(new Schema(List.of())));
        }
        PreparedStatement statement = session.sql(connection -> connection.prepareStatement(sql));
        try {
            List<String> names = new ArrayList<>();
            List<String> types = new ArrayList<>();
            List<String> parameterNames = new ArrayList<>();
            List<String> parameterTypes = new ArrayList<>();
            boolean returnsRows = session.sql(connection -> {
                ResultSetMetaData metaData = statement.getMetaData();
                boolean rows = metaData.unwrap(DuckDBResultSetMetaData.class).getReturnType() == StatementReturnType.QUERY_RESULT;
                if (rows) {
                    for (int i = 1; i <= metaData.getColumnCount(); i++) {
                        names.add(metaData.getColumnLabel(i));
                        types.add(metaData.getColumnTypeName(i));
                    }
                }
                ParameterMetaData parameters = statement.getParameterMetaData();
                for (int i = 1; i <= parameters.getParameterCount(); i++) {
                    parameterNames.add("parameter_" + i);
                    parameterTypes.add(parameters.getParameterTypeName(i));
                }
                return rows;
            });
            Schema dataset = returnsRows ? ArrowTypes.schemaOf(session, names, types) : new Schema(List.of());
            Schema parameters = ArrowTypes.schemaOf(session, parameterNames, parameterTypes);
            return new PreparedQuery(sql, statement, dataset, parameters);
        } catch (RuntimeException e) {
            session.sql(connection -> {
                statement.close();
                return null;
            });
            throw e;
        }
    }

    @Override
    public void closePreparedStatement(ActionClosePreparedStatementRequest request, CallContext context, StreamListener<Result> listener) {
        try {
            Session session = session(context);
            session.closePrepared(request.getPreparedStatementHandle().toStringUtf8());
            listener.onCompleted();
        } catch (Throwable e) {
            listener.onError(FlightErrors.toFlight(e));
        }
    }

    @Override
    public Runnable acceptPutPreparedStatementQuery(CommandPreparedStatementQuery command, CallContext context, FlightStream stream,
            StreamListener<PutResult> ack) {
        return () -> {
            try {
                PreparedQuery prepared = prepared(session(context), command.getPreparedStatementHandle());
                prepared.bind(readParameters(stream));
                ack.onCompleted();
            } catch (Throwable e) {
                ack.onError(FlightErrors.toFlight(e));
            }
        };
    }

    @Override
    public FlightInfo getFlightInfoPreparedStatement(CommandPreparedStatementQuery command, CallContext context, FlightDescriptor descriptor) {
        return guarded(() -> {
            Session session = session(context);
            try (Session.Lease<PreparedQuery> lease = leased(session, command.getPreparedStatementHandle())) {
                PreparedQuery prepared = lease.value();
                List<List<Object>> rows = prepared.parameters();
                List<Object> row = rows.isEmpty() ? List.of() : rows.get(0);
                if (prepared.runsThroughViews()) {
                    return pending(session, prepared.takeFirstOutcome().orElseGet(() -> session.executeThroughViews(prepared.sql(), options(context))), descriptor);
                }
                if (!prepared.datasetSchema().getFields().isEmpty()) {
                    // A query: announced with the schema its prepare derived, run when its ticket is fetched (DeferredQuery).
                    String handle = UUID.randomUUID().toString();
                    session.keep(handle, DeferredQuery.ofPrepared(command.getPreparedStatementHandle().toStringUtf8(), prepared, row, options(context)));
                    return new FlightInfo(prepared.datasetSchema(), descriptor, List.of(endpoint(handle)), -1, -1);
                }
                session.sql(connection -> {
                    prepared.apply(row);
                    return null;
                });
                return pending(session, session.execute(prepared.statement(), options(context)), descriptor);
            }
        });
    }

    @Override
    public SchemaResult getSchemaPreparedStatement(CommandPreparedStatementQuery command, CallContext context, FlightDescriptor descriptor) {
        return guarded(() -> new SchemaResult(prepared(session(context), command.getPreparedStatementHandle()).datasetSchema()));
    }

    @Override
    public Runnable acceptPutPreparedStatementUpdate(CommandPreparedStatementUpdate command, CallContext context, FlightStream stream,
            StreamListener<PutResult> ack) {
        return () -> {
            try {
                Session session = session(context);
                List<List<Object>> rows = readParameters(stream);
                try (Session.Lease<PreparedQuery> lease = leased(session, command.getPreparedStatementHandle())) {
                    runUpdate(ack, session, lease.value(), rows, options(context));
                }
            } catch (Throwable e) {
                ack.onError(FlightErrors.toFlight(e));
            }
        };
    }

    /** Runs a prepared update once per parameter row (or once with the rows bound before) and acknowledges the total. */
    private void runUpdate(StreamListener<PutResult> ack, Session session, PreparedQuery prepared, List<List<Object>> rows, QueryOptions options) {
        if (prepared.runsThroughViews()) {
            Session.Outcome outcome = prepared.takeFirstOutcome().orElseGet(() -> session.executeThroughViews(prepared.sql(), options));
            outcome.rows().ifPresent(ResultStream::close);
            acknowledge(ack, outcome.updateCount().orElse(0));
            return;
        }
        if (rows.isEmpty()) {
            rows = prepared.parameters().isEmpty() ? List.of(List.of()) : prepared.parameters();
        }
        long total = 0;
        for (List<Object> row : rows) {
            session.sql(connection -> {
                prepared.apply(row);
                return null;
            });
            Session.Outcome outcome = session.execute(prepared.statement(), options);
            outcome.rows().ifPresent(ResultStream::close);
            total += outcome.updateCount().orElse(0);
        }
        acknowledge(ack, total);
    }

    // ---- catalog metadata ----

    @Override
    public FlightInfo getFlightInfoSqlInfo(CommandGetSqlInfo request, CallContext context, FlightDescriptor descriptor) {
        return metadataInfo(request, Schemas.GET_SQL_INFO_SCHEMA, descriptor);
    }

    @Override
    public void getStreamSqlInfo(CommandGetSqlInfo command, CallContext context, ServerStreamListener listener) {
        sqlInfo.send(command.getInfoList(), listener);
    }

    @Override
    public FlightInfo getFlightInfoCatalogs(CommandGetCatalogs request, CallContext context, FlightDescriptor descriptor) {
        return metadataInfo(request, Schemas.GET_CATALOGS_SCHEMA, descriptor);
    }

    @Override
    public void getStreamCatalogs(CallContext context, ServerStreamListener listener) {
        metadata(listener, Schemas.GET_CATALOGS_SCHEMA, () -> CatalogQueries.catalogs(session(context)));
    }

    @Override
    public FlightInfo getFlightInfoSchemas(CommandGetDbSchemas request, CallContext context, FlightDescriptor descriptor) {
        return metadataInfo(request, Schemas.GET_SCHEMAS_SCHEMA, descriptor);
    }

    @Override
    public void getStreamSchemas(CommandGetDbSchemas command, CallContext context, ServerStreamListener listener) {
        metadata(listener, Schemas.GET_SCHEMAS_SCHEMA, () -> CatalogQueries.schemas(session(context), command));
    }

    @Override
    public FlightInfo getFlightInfoTables(CommandGetTables request, CallContext context, FlightDescriptor descriptor) {
        return metadataInfo(request, request.getIncludeSchema() ? Schemas.GET_TABLES_SCHEMA : Schemas.GET_TABLES_SCHEMA_NO_SCHEMA, descriptor);
    }

    @Override
    public void getStreamTables(CommandGetTables command, CallContext context, ServerStreamListener listener) {
        Schema schema = command.getIncludeSchema() ? Schemas.GET_TABLES_SCHEMA : Schemas.GET_TABLES_SCHEMA_NO_SCHEMA;
        metadata(listener, schema, () -> CatalogQueries.tables(session(context), command));
    }

    @Override
    public FlightInfo getFlightInfoTableTypes(CommandGetTableTypes request, CallContext context, FlightDescriptor descriptor) {
        return metadataInfo(request, Schemas.GET_TABLE_TYPES_SCHEMA, descriptor);
    }

    @Override
    public void getStreamTableTypes(CallContext context, ServerStreamListener listener) {
        metadata(listener, Schemas.GET_TABLE_TYPES_SCHEMA, () -> CatalogQueries.TABLE_TYPES.stream().map(type -> List.<Object>of(type)).toList());
    }

    @Override
    public FlightInfo getFlightInfoPrimaryKeys(CommandGetPrimaryKeys request, CallContext context, FlightDescriptor descriptor) {
        return metadataInfo(request, Schemas.GET_PRIMARY_KEYS_SCHEMA, descriptor);
    }

    @Override
    public void getStreamPrimaryKeys(CommandGetPrimaryKeys command, CallContext context, ServerStreamListener listener) {
        metadata(listener, Schemas.GET_PRIMARY_KEYS_SCHEMA, () -> CatalogQueries.primaryKeys(session(context), command));
    }

    @Override
    public FlightInfo getFlightInfoTypeInfo(CommandGetXdbcTypeInfo request, CallContext context, FlightDescriptor descriptor) {
        return metadataInfo(request, Schemas.GET_TYPE_INFO_SCHEMA, descriptor);
    }

    @Override
    public void getStreamTypeInfo(CommandGetXdbcTypeInfo request, CallContext context, ServerStreamListener listener) {
        metadata(listener, Schemas.GET_TYPE_INFO_SCHEMA, () -> XdbcTypes.rows(request.hasDataType() ? request.getDataType() : null));
    }

    // ---- sessions ----

    @Override
    public void setSessionOptions(SetSessionOptionsRequest request, CallContext context, StreamListener<SetSessionOptionsResult> listener) {
        try {
            Session session = session(context);
            if (policy.mode() != AccessMode.COMPLETE) {
                // USE is not a query; on a READ_ONLY server the options are refused like any other setting.
                java.util.Map<String, SetSessionOptionsResult.Error> refused = new java.util.HashMap<>();
                request.getSessionOptions().keySet().forEach(name -> refused.put(name, new SetSessionOptionsResult.Error(SetSessionOptionsResult.ErrorValue.ERROR)));
                listener.onNext(new SetSessionOptionsResult(refused));
            } else {
                listener.onNext(new SetSessionOptionsResult(SessionOptions.set(session, request.getSessionOptions())));
            }
            listener.onCompleted();
        } catch (Throwable e) {
            listener.onError(FlightErrors.toFlight(e));
        }
    }

    @Override
    public void getSessionOptions(GetSessionOptionsRequest request, CallContext context, StreamListener<GetSessionOptionsResult> listener) {
        try {
            listener.onNext(new GetSessionOptionsResult(SessionOptions.get(session(context))));
            listener.onCompleted();
        } catch (Throwable e) {
            listener.onError(FlightErrors.toFlight(e));
        }
    }

    @Override
    public void closeSession(CloseSessionRequest request, CallContext context, StreamListener<CloseSessionResult> listener) {
        sessions.close(context.peerIdentity());
        listener.onNext(new CloseSessionResult(CloseSessionResult.Status.CLOSED));
        listener.onCompleted();
    }

    // ---- cancellation ----

    /**
     * Cancels the statement behind an info this server answered: a result not yet fetched is dropped, a prepared
     * query not yet fetched will not run, one executing is interrupted in DuckDB, one being sent stops at its next
     * batch. An info whose result was sent already, or from another session, answers NOT_CANCELLABLE.
     */
    @Override
    public void cancelFlightInfo(CancelFlightInfoRequest request, CallContext context, StreamListener<CancelStatus> listener) {
        try {
            Session session = session(context);
            CancelStatus status = CancelStatus.NOT_CANCELLABLE;
            for (String handle : handles(request.getInfo())) {
                java.util.Optional<DeferredQuery> deferred = session.find(handle, DeferredQuery.class);
                if (deferred.isPresent()) {
                    // A DoGet still to come finds it cancelled and drops it; a running one drops it when it ends.
                    status = deferred.get().cancel(session);
                    continue;
                }
                java.util.Optional<ResultStream> waiting = session.take(handle, ResultStream.class);
                if (waiting.isPresent()) {
                    waiting.get().close();
                    status = CancelStatus.CANCELLED;
                }
            }
            LOG.debug("cancel asked user={} status={}", session.username(), status);
            listener.onNext(status);
            listener.onCompleted();
        } catch (Throwable e) {
            listener.onError(FlightErrors.toFlight(e));
        }
    }

    @Override
    public void close() {
        streams.shutdownNow();
    }

    // ---- helpers ----

    private Session session(CallContext context) {
        return sessions.find(context.peerIdentity()).orElseThrow(() -> new MallardException(ErrorCode.USER_AUTH_FAILED,
                "this token's session is closed; log in again"));
    }

    /**
     * The session of a call that starts a statement, in the catalog and schema the call's {@code database} and
     * {@code schema} headers select. Only such calls switch: a cancel or a DoGet must not wait for the session's lock.
     */
    private Session statementSession(CallContext context) {
        Session session = session(context);
        CallHeadersMiddleware headers = context.getMiddleware(CallHeadersMiddleware.KEY);
        // Under row-level security these properties are claims of the token, which the rewriter reads names in.
        if (headers != null && !policy.mode().rowLevelSecurity()) {
            useCatalog(session, headers.get(DATABASE), headers.get(SCHEMA));
        }
        return session;
    }

    /** DazzleDuck's connection properties (sent as call headers) that select the catalog and schema a call runs in. */
    static final String DATABASE = "database";
    static final String SCHEMA = "schema";

    /**
     * Runs the call in the catalog and schema its {@code database} and {@code schema} headers name, as DazzleDuck's
     * connections do ({@code USE database.schema} before each call); one that does not exist fails the call naming it.
     */
    private static void useCatalog(Session session, java.util.Optional<String> database, java.util.Optional<String> schema) {
        if (database.isEmpty() && schema.isEmpty()) {
            return;
        }
        StringBuilder target = new StringBuilder();
        database.ifPresent(name -> target.append(SqlText.identifier(name)));
        schema.ifPresent(name -> target.append(target.isEmpty() ? "" : ".").append(SqlText.identifier(name)));
        try {
            session.sql(connection -> {
                try (java.sql.Statement statement = connection.createStatement()) {
                    return statement.execute("USE " + target);
                }
            });
        } catch (MallardException e) {
            if (e.errorCode() != ErrorCode.USER_SQL_INVALID) {
                throw e;
            }
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "the connection's " + database.map(name -> "database '" + name + "'").orElse("")
                    + (database.isPresent() && schema.isPresent() ? " and " : "") + schema.map(name -> "schema '" + name + "'").orElse("")
                    + " name no catalog and schema of this server: " + e.getMessage() + "; give an attached database and one of its schemas", e);
        }
    }

    /**
     * DazzleDuck's {@code x-dd-limit} and {@code x-dd-offset} call headers: applied on a READ_ONLY server when the
     * query's DoGet sends its rows (DazzleDuck reads them there), refused on a COMPLETE one.
     */
    private RowWindow window(CallContext context) {
        CallHeadersMiddleware headers = context.getMiddleware(CallHeadersMiddleware.KEY);
        if (headers == null) {
            return RowWindow.ALL;
        }
        return RowWindow.resolve(headers.get(RowWindow.LIMIT), headers.get(RowWindow.OFFSET), policy.mode());
    }

    /** The ticket of a statement that ran without rows: its DoGet answers an empty stream. */
    private record NoRows() implements AutoCloseable {
        @Override
        public void close() {}
    }

    private void sendNoRows(ServerStreamListener listener) {
        try (org.apache.arrow.vector.VectorSchemaRoot empty = org.apache.arrow.vector.VectorSchemaRoot.create(new Schema(List.of()), allocator)) {
            listener.start(empty);
            listener.completed();
        }
    }

    /**
     * The options a deferred query runs with: DazzleDuck reads {@code x-dd-fetch-size} and {@code x-dd-query-timeout}
     * on the DoGet, so the DoGet's own headers win over those its GetFlightInfo carried.
     */
    private QueryOptions atDoGet(QueryOptions planned, CallContext context) {
        CallHeadersMiddleware headers = context.getMiddleware(CallHeadersMiddleware.KEY);
        if (headers == null) {
            return planned;
        }
        java.util.Optional<String> fetchSize = headers.get(QueryOptions.FETCH_SIZE);
        java.util.Optional<String> timeout = headers.get(QueryOptions.QUERY_TIMEOUT);
        if (fetchSize.isEmpty() && timeout.isEmpty()) {
            return planned;
        }
        QueryOptions asked = QueryOptions.resolve(fetchSize, timeout, planned.fetchSize(), maxTimeoutSeconds);
        return new QueryOptions(asked.fetchSize(), timeout.isPresent() ? asked.timeout() : planned.timeout(),
                headers.get(QueryOptions.QUERY_ID).or(planned::queryId));
    }

    /** {@code x-dd-fetch-size} and {@code x-dd-query-timeout} from the call's headers, within the server's limits. */
    private QueryOptions options(CallContext context) {
        CallHeadersMiddleware headers = context.getMiddleware(CallHeadersMiddleware.KEY);
        if (headers == null) {
            return QueryOptions.resolve(java.util.Optional.empty(), java.util.Optional.empty(), defaultFetchSize, maxTimeoutSeconds);
        }
        return QueryOptions.resolve(headers.get(QueryOptions.FETCH_SIZE), headers.get(QueryOptions.QUERY_TIMEOUT), defaultFetchSize, maxTimeoutSeconds)
                .withQueryId(headers.get(QueryOptions.QUERY_ID));
    }

    private static PreparedQuery prepared(Session session, ByteString handle) {
        return session.findPrepared(handle.toStringUtf8(), PreparedQuery.class);
    }

    /** The prepared statement under a handle, held until the lease closes so that the session's cap does not close it meanwhile. */
    private static Session.Lease<PreparedQuery> leased(Session session, ByteString handle) {
        return session.leasePrepared(handle.toStringUtf8(), PreparedQuery.class);
    }

    private static List<List<Object>> readParameters(FlightStream stream) {
        List<List<Object>> rows = new ArrayList<>();
        while (stream.next()) {
            rows.addAll(ArrowValues.rows(stream.getRoot()));
        }
        return rows;
    }

    private FlightInfo pending(Session session, Session.Outcome outcome, FlightDescriptor descriptor) {
        if (outcome.rows().isEmpty()) {
            // A statement without rows ran already; as DazzleDuck, its info has one endpoint whose stream is empty.
            String handle = UUID.randomUUID().toString();
            session.keep(handle, new NoRows());
            return new FlightInfo(new Schema(List.of()), descriptor, List.of(endpoint(handle)), -1, -1);
        }
        ResultStream result = outcome.rows().get();
        String handle = UUID.randomUUID().toString();
        session.keep(handle, result);
        return new FlightInfo(announced(result), descriptor, List.of(endpoint(handle)), -1, -1);
    }

    /** A result's schema as its stream sends it (ENUMs decoded to their labels). */
    private static Schema announced(ResultStream result) {
        return DictionaryDecoding.needed(result.schema()) ? DictionaryDecoding.decoded(result.schema(), result.reader()) : result.schema();
    }

    private static FlightEndpoint endpoint(String handle) {
        TicketStatementQuery ticket = TicketStatementQuery.newBuilder().setStatementHandle(ByteString.copyFromUtf8(handle)).build();
        return new FlightEndpoint(new Ticket(Any.pack(ticket).toByteArray()));
    }

    /** The statement handles an info's tickets name (tickets of other kinds are skipped). */
    private static List<String> handles(FlightInfo info) {
        List<String> handles = new ArrayList<>();
        for (FlightEndpoint endpoint : info.getEndpoints()) {
            try {
                Any any = Any.parseFrom(endpoint.getTicket().getBytes());
                if (any.is(TicketStatementQuery.class)) {
                    handles.add(any.unpack(TicketStatementQuery.class).getStatementHandle().toStringUtf8());
                }
            } catch (com.google.protobuf.InvalidProtocolBufferException e) {
                // Not a ticket this server issued: nothing of ours to cancel.
            }
        }
        return handles;
    }

    private static FlightInfo metadataInfo(Message command, Schema schema, FlightDescriptor descriptor) {
        return new FlightInfo(schema, descriptor, List.of(new FlightEndpoint(new Ticket(Any.pack(command).toByteArray()))), -1, -1);
    }

    private void metadata(ServerStreamListener listener, Schema schema, java.util.function.Supplier<List<List<Object>>> rows) {
        try {
            MetadataRows.send(schema, rows.get(), allocator, listener);
        } catch (Throwable e) {
            listener.error(FlightErrors.toFlight(e));
        }
    }

    private void acknowledge(StreamListener<PutResult> ack, long count) {
        byte[] bytes = DoPutUpdateResult.newBuilder().setRecordCount(count).build().toByteArray();
        try (ArrowBuf buffer = allocator.buffer(bytes.length)) {
            buffer.writeBytes(bytes);
            ack.onNext(PutResult.metadata(buffer));
        }
        ack.onCompleted();
    }

    static byte[] serialize(Schema schema) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            MessageSerializer.serialize(new WriteChannel(Channels.newChannel(out)), schema);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    private static <T> T guarded(java.util.concurrent.Callable<T> work) {
        try {
            return work.call();
        } catch (Throwable e) {
            throw FlightErrors.toFlight(e);
        }
    }
}
