// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.ingest;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.error.Redactor;
import dev.mallard.server.auth.AccessToken;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse;
import io.opentelemetry.proto.collector.logs.v1.LogsServiceGrpc;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
import io.opentelemetry.proto.collector.metrics.v1.MetricsServiceGrpc;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.collector.trace.v1.TraceServiceGrpc;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.Schema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The OTLP receiver: OpenTelemetry's gRPC logs, traces and metrics export services. Each export request is checked
 * like a {@code /v1/ingest} request (the server's JWT as {@code authorization: Bearer} metadata, the queue from the
 * token's {@code x-dd-ingestion-queue} claim or the signal's configured queue, the access mode's write claims),
 * flattened by {@link OtlpRows} into one Arrow batch and answered once that batch is committed (durable).
 */
final class OtlpReceiver implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(OtlpReceiver.class);
    private static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    private static final Context.Key<String> BEARER = Context.key("mallard-otlp-bearer");

    /** What the receiver needs of ingestion: tokens checked, and a built batch written to a queue. */
    interface Sink {
        AccessToken verify(String bearer);

        /** Writes the Arrow stream {@code batch} into {@code queue} for {@code token}; returns its rows once committed. */
        long write(AccessToken token, String queue, byte[] batch) throws IOException;
    }

    private enum Signal {
        LOGS, TRACES, METRICS
    }

    private final IngestionConfig.Otlp config;
    private final Sink sink;
    private final BufferAllocator allocator;
    private final ExecutorService handlers = Executors.newVirtualThreadPerTaskExecutor();
    private final Server server;

    private OtlpReceiver(IngestionConfig.Otlp config, Sink sink, BufferAllocator allocator, String host) throws IOException {
        this.config = requireNonNull(config, "config is null");
        this.sink = requireNonNull(sink, "sink is null");
        this.allocator = requireNonNull(allocator, "allocator is null");
        ServerInterceptor bearer = new ServerInterceptor() {
            @Override
            public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
                String value = headers.get(AUTHORIZATION);
                return Contexts.interceptCall(Context.current().withValue(BEARER, value), call, headers, next);
            }
        };
        this.server = NettyServerBuilder.forAddress(new InetSocketAddress(host, config.port())).executor(handlers)
                .maxInboundMessageSize(config.maxMessageBytes())
                .addService(ServerInterceptors.intercept(new Logs(), bearer))
                .addService(ServerInterceptors.intercept(new Traces(), bearer))
                .addService(ServerInterceptors.intercept(new Metrics(), bearer))
                .build().start();
    }

    static OtlpReceiver start(IngestionConfig.Otlp config, Sink sink, BufferAllocator allocator, String host) {
        try {
            OtlpReceiver receiver = new OtlpReceiver(config, sink, allocator, host);
            LOG.info("otlp receiver started port={} logs_queue={} traces_queue={} metrics_queue={}", receiver.port(),
                    config.logsQueue().orElse("none"), config.tracesQueue().orElse("none"), config.metricsQueue().orElse("none"));
            return receiver;
        } catch (IOException e) {
            throw new MallardException(ErrorCode.SYSTEM_IO_FAILED, "cannot listen for OTLP on " + host + ":" + config.port() + ": " + e.getMessage()
                    + "; free the port or set ingestion.otlp.port", e);
        }
    }

    int port() {
        return server.getPort();
    }

    private final class Logs extends LogsServiceGrpc.LogsServiceImplBase {
        @Override
        public void export(ExportLogsServiceRequest request, StreamObserver<ExportLogsServiceResponse> response) {
            if (handle(Signal.LOGS, OtlpRows.LOGS, () -> OtlpRows.logs(request), response)) {
                response.onNext(ExportLogsServiceResponse.getDefaultInstance());
                response.onCompleted();
            }
        }
    }

    private final class Traces extends TraceServiceGrpc.TraceServiceImplBase {
        @Override
        public void export(ExportTraceServiceRequest request, StreamObserver<ExportTraceServiceResponse> response) {
            if (handle(Signal.TRACES, OtlpRows.TRACES, () -> OtlpRows.traces(request), response)) {
                response.onNext(ExportTraceServiceResponse.getDefaultInstance());
                response.onCompleted();
            }
        }
    }

    private final class Metrics extends MetricsServiceGrpc.MetricsServiceImplBase {
        @Override
        public void export(ExportMetricsServiceRequest request, StreamObserver<ExportMetricsServiceResponse> response) {
            if (handle(Signal.METRICS, OtlpRows.METRICS, () -> OtlpRows.metrics(request), response)) {
                response.onNext(ExportMetricsServiceResponse.getDefaultInstance());
                response.onCompleted();
            }
        }
    }

    /** Writes one export request; false (the call already failed with its status) when it was refused. */
    private boolean handle(Signal signal, Schema schema, java.util.function.Supplier<List<Object[]>> flatten, StreamObserver<?> response) {
        try {
            String header = BEARER.get();
            if (header == null || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
                throw new MallardException(ErrorCode.USER_AUTH_FAILED, "no access token; get one from POST /v1/login and send it as the gRPC"
                        + " metadata authorization: Bearer <token>");
            }
            AccessToken token = sink.verify(header.substring(7).trim());
            String queue = queue(signal, token);
            List<Object[]> rows = flatten.get();
            if (!rows.isEmpty()) {
                sink.write(token, queue, OtlpRows.encode(schema, rows, allocator));
            }
            LOG.debug("otlp export committed signal={} queue={} rows={}", signal, queue, rows.size());
            return true;
        } catch (Exception e) {
            response.onError(status(e).asRuntimeException());
            return false;
        }
    }

    /** The token's {@code x-dd-ingestion-queue} claim when it names one queue, else the signal's configured queue. */
    private String queue(Signal signal, AccessToken token) {
        Map<String, Object> claims = token.claims();
        Object claim = claims.get(Ingestion.QUEUE_CLAIM);
        if (claim != null) {
            List<String> named = claim instanceof Collection<?> values ? values.stream().map(String::valueOf).map(String::trim).toList()
                    : IngestionConfig.split(String.valueOf(claim));
            if (named.size() == 1) {
                return named.getFirst();
            }
            Optional<String> configured = configured(signal).filter(named::contains);
            if (configured.isPresent()) {
                return configured.get();
            }
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "the token's " + Ingestion.QUEUE_CLAIM + " claim names " + named
                    + ", not one queue, and none is ingestion.otlp." + signal.name().toLowerCase(java.util.Locale.ROOT) + "_queue");
        }
        return configured(signal).orElseThrow(() -> new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "the token has no "
                + Ingestion.QUEUE_CLAIM + " claim and the server sets no ingestion.otlp." + signal.name().toLowerCase(java.util.Locale.ROOT)
                + "_queue; log in with that claim or configure the queue"));
    }

    private Optional<String> configured(Signal signal) {
        return switch (signal) {
            case LOGS -> config.logsQueue();
            case TRACES -> config.tracesQueue();
            case METRICS -> config.metricsQueue();
        };
    }

    /**
     * The gRPC status of a refusal. Backpressure is UNAVAILABLE, which OpenTelemetry's exporters retry with backoff
     * (the OTLP specification's answer for a server that cannot keep up); a batch too large for the server is not.
     */
    private static Status status(Exception e) {
        if (e instanceof MallardException mallard) {
            Status status = switch (mallard.errorCode()) {
                case USER_AUTH_FAILED -> Status.UNAUTHENTICATED;
                case USER_ACCESS_DENIED -> Status.PERMISSION_DENIED;
                case USER_INGEST_QUEUE_NOT_FOUND -> Status.NOT_FOUND;
                case USER_INGEST_PENDING_WRITE_EXCEEDED -> Status.UNAVAILABLE;
                default -> mallard.errorCode().errorClass().equals("user") ? Status.INVALID_ARGUMENT : Status.INTERNAL;
            };
            return status.withDescription(mallard.errorCode().code() + ": " + mallard.getMessage());
        }
        LOG.error("otlp export failed", e);
        return Status.INTERNAL.withDescription(ErrorCode.SYSTEM_INTERNAL.code() + ": " + Redactor.redact(String.valueOf(e)));
    }

    @Override
    public void close() {
        server.shutdown();
        try {
            if (!server.awaitTermination(30, TimeUnit.SECONDS)) {
                server.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            server.shutdownNow();
        }
        handlers.shutdown();
    }
}
