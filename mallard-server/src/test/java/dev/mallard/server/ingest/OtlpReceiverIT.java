// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.server.MallardServer;
import dev.mallard.server.auth.PasswordHash;
import dev.mallard.server.config.AccessMode;
import dev.mallard.server.config.UserAccount;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.logs.Severity;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.exporter.otlp.logs.OtlpGrpcLogRecordExporter;
import io.opentelemetry.exporter.otlp.metrics.OtlpGrpcMetricExporter;
import io.opentelemetry.exporter.otlp.trace.OtlpGrpcSpanExporter;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;
import io.opentelemetry.proto.collector.logs.v1.LogsServiceGrpc;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.logs.v1.LogRecord;
import io.opentelemetry.proto.logs.v1.ResourceLogs;
import io.opentelemetry.proto.logs.v1.ScopeLogs;
import io.opentelemetry.sdk.logs.SdkLoggerProvider;
import io.opentelemetry.sdk.logs.export.BatchLogRecordProcessor;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.export.PeriodicMetricReader;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The OTLP receiver fed by the real OpenTelemetry Java SDK's gRPC exporters, and its refusals over raw gRPC. */
class OtlpReceiverIT {
    private static final Resource SERVICE = Resource.create(Attributes.of(AttributeKey.stringKey("service.name"), "checkout"));

    @TempDir
    Path root;

    private static IngestionConfig otlpQueues() {
        // Logs and metrics have a queue of their own; traces go where the token's x-dd-ingestion-queue claim says.
        return IngestFixtures.queues(IngestionConfig.Queue.named("logs", "otel/logs"), IngestionConfig.Queue.named("spans", "otel/spans"),
                IngestionConfig.Queue.named("metrics", "otel/metrics"))
                .withOtlp(new IngestionConfig.Otlp(0, Optional.of("logs"), Optional.empty(), Optional.of("metrics"), IngestionConfig.Otlp.DEFAULT_MAX_MESSAGE_BYTES));
    }

    @Test
    void logsSpansAndMetricsExportedByTheOpenTelemetrySdkAreQueriedBackFromTheirQueues() throws Exception {
        try (MallardServer server = MallardServer.start(IngestFixtures.config(root, otlpQueues()))) {
            String endpoint = "http://127.0.0.1:" + server.otlpPort().orElseThrow();
            String token = IngestFixtures.login(server.httpPort(), IngestFixtures.USER, IngestFixtures.PASSWORD, Map.of("x-dd-ingestion-queue", "spans"));
            String bearer = "Bearer " + token;

            // The claim names one queue for every signal, so logs and metrics go with a token without it: their defaults.
            String plain = "Bearer " + IngestFixtures.login(server.httpPort());
            try (SdkLoggerProvider logs = SdkLoggerProvider.builder().setResource(SERVICE).addLogRecordProcessor(BatchLogRecordProcessor.builder(
                    OtlpGrpcLogRecordExporter.builder().setEndpoint(endpoint).addHeader("authorization", plain).build()).build()).build()) {
                for (int i = 0; i < 250; i++) {
                    logs.get("orders").logRecordBuilder().setSeverity(i % 2 == 0 ? Severity.INFO : Severity.WARN).setSeverityText(i % 2 == 0 ? "INFO" : "WARN")
                            .setBody("order " + i).setAttribute(AttributeKey.longKey("order"), (long) i).emit();
                }
                assertThat(logs.forceFlush().join(2, TimeUnit.MINUTES).isSuccess()).as("the logs export was not acknowledged").isTrue();
            }
            try (SdkTracerProvider traces = SdkTracerProvider.builder().setResource(SERVICE).addSpanProcessor(BatchSpanProcessor.builder(
                    OtlpGrpcSpanExporter.builder().setEndpoint(endpoint).addHeader("authorization", bearer).build()).build()).build()) {
                for (int i = 0; i < 40; i++) {
                    Span parent = traces.get("orders").spanBuilder("checkout").setAttribute("cart", i).startSpan();
                    try (var scope = parent.makeCurrent()) {
                        traces.get("orders").spanBuilder("charge").startSpan().end();
                    }
                    parent.end();
                }
                assertThat(traces.forceFlush().join(2, TimeUnit.MINUTES).isSuccess()).as("the spans export was not acknowledged").isTrue();
            }
            try (SdkMeterProvider metrics = SdkMeterProvider.builder().setResource(SERVICE).registerMetricReader(PeriodicMetricReader.builder(
                    OtlpGrpcMetricExporter.builder().setEndpoint(endpoint).addHeader("authorization", plain).build()).setInterval(Duration.ofHours(1))
                    .build()).build()) {
                var requests = metrics.get("orders").counterBuilder("orders.placed").build();
                var latency = metrics.get("orders").histogramBuilder("orders.latency").setUnit("ms").build();
                for (int i = 0; i < 10; i++) {
                    requests.add(2, Attributes.of(AttributeKey.stringKey("region"), i % 2 == 0 ? "eu" : "us"));
                    latency.record(i * 10.0);
                }
                assertThat(metrics.forceFlush().join(2, TimeUnit.MINUTES).isSuccess()).as("the metrics export was not acknowledged").isTrue();
            }

            try (Connection connection = server.engineSession(); Statement statement = connection.createStatement()) {
                assertThat(rows(statement, "SELECT count(*), count(DISTINCT body), count(*) FILTER (severity_text = 'WARN'), min(resource_attributes['service.name']),"
                        + " count(*) FILTER (attributes['order'] = '7'), min(scope_name) FROM logs"))
                        .containsExactly(List.of(250L, 250L, 125L, "checkout", 1L, "orders"));
                assertThat(rows(statement, "SELECT name, count(*), count(DISTINCT trace_id), count(parent_span_id), min(kind) FROM spans GROUP BY name ORDER BY name"))
                        .containsExactly(List.of("charge", 40L, 40L, 40L, "SPAN_KIND_INTERNAL"), List.of("checkout", 40L, 40L, 0L, "SPAN_KIND_INTERNAL"));
                // Cumulative points: the forced flush and the provider's close each export the same totals.
                assertThat(rows(statement, "SELECT DISTINCT metric_type, attributes['region'], value_int, is_monotonic, aggregation_temporality FROM metrics"
                        + " WHERE name = 'orders.placed' ORDER BY 2"))
                        .containsExactly(List.of("sum", "eu", 10L, true, "AGGREGATION_TEMPORALITY_CUMULATIVE"),
                                List.of("sum", "us", 10L, true, "AGGREGATION_TEMPORALITY_CUMULATIVE"));
                assertThat(rows(statement, "SELECT DISTINCT metric_type, unit, count, sum, len(bucket_counts) = len(explicit_bounds) + 1 FROM metrics"
                        + " WHERE name = 'orders.latency'")).containsExactly(List.of("histogram", "ms", 10L, 450.0, true));
            }
        }
    }

    @Test
    void anExportWithoutAValidTokenOrAQueueIsRefusedWithItsGrpcStatus() throws Exception {
        IngestionConfig noLogsQueue = IngestFixtures.queues(IngestionConfig.Queue.named("logs", "otel/logs"))
                .withOtlp(new IngestionConfig.Otlp(0, Optional.empty(), Optional.empty(), Optional.empty(), IngestionConfig.Otlp.DEFAULT_MAX_MESSAGE_BYTES));
        try (MallardServer server = MallardServer.start(IngestFixtures.config(root, noLogsQueue))) {
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.otlpPort().orElseThrow()).usePlaintext().build();
            try {
                assertThat(export(channel, Optional.empty())).isEqualTo(Status.Code.UNAUTHENTICATED);
                assertThat(export(channel, Optional.of("not-a-token"))).isEqualTo(Status.Code.UNAUTHENTICATED);
                assertThat(export(channel, Optional.of(IngestFixtures.login(server.httpPort())))).isEqualTo(Status.Code.INVALID_ARGUMENT);
                assertThat(export(channel, Optional.of(IngestFixtures.login(server.httpPort(), IngestFixtures.USER, IngestFixtures.PASSWORD,
                        Map.of("x-dd-ingestion-queue", "nowhere"))))).isEqualTo(Status.Code.NOT_FOUND);
                assertThat(export(channel, Optional.of(IngestFixtures.login(server.httpPort(), IngestFixtures.USER, IngestFixtures.PASSWORD,
                        Map.of("x-dd-ingestion-queue", "logs"))))).isEqualTo(Status.Code.OK);
            } finally {
                channel.shutdownNow().awaitTermination(1, TimeUnit.MINUTES);
            }
            try (Connection connection = server.engineSession(); Statement statement = connection.createStatement()) {
                assertThat(rows(statement, "SELECT count(*), min(body) FROM logs")).containsExactly(List.of(1L, "raw"));
            }
        }
    }

    @Test
    void inARestrictedModeATokenWithoutTheWriteClaimsIsPermissionDenied() throws Exception {
        List<UserAccount> users = List.of(
                new UserAccount("writer", PasswordHash.of("pw"), Map.of("x-dd-table", "logs", "x-dd-access-type", "WRITE", "ingestion_queue", "logs"),
                        List.of(), List.of()),
                new UserAccount("reader", PasswordHash.of("pw"), Map.of("x-dd-table", "logs"), List.of(), List.of()));
        IngestionConfig ingestion = IngestFixtures.queues(IngestionConfig.Queue.named("logs", "otel/logs"))
                .withOtlp(new IngestionConfig.Otlp(0, Optional.of("logs"), Optional.empty(), Optional.empty(), IngestionConfig.Otlp.DEFAULT_MAX_MESSAGE_BYTES));
        try (MallardServer server = MallardServer.start(IngestFixtures.config(root, AccessMode.RESTRICTED, ingestion, users))) {
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.otlpPort().orElseThrow()).usePlaintext().build();
            try {
                assertThat(export(channel, Optional.of(IngestFixtures.login(server.httpPort(), "reader", "pw", Map.of()))))
                        .isEqualTo(Status.Code.PERMISSION_DENIED);
                assertThat(export(channel, Optional.of(IngestFixtures.login(server.httpPort(), "writer", "pw", Map.of())))).isEqualTo(Status.Code.OK);
            } finally {
                channel.shutdownNow().awaitTermination(1, TimeUnit.MINUTES);
            }
        }
    }

    /** Exports one log record over raw gRPC, with {@code token} as the bearer; the call's status code. */
    private static Status.Code export(ManagedChannel channel, Optional<String> token) {
        Metadata headers = new Metadata();
        token.ifPresent(value -> headers.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + value));
        LogsServiceGrpc.LogsServiceBlockingStub stub = LogsServiceGrpc.newBlockingStub(channel)
                .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers)).withDeadlineAfter(1, TimeUnit.MINUTES);
        ExportLogsServiceRequest request = ExportLogsServiceRequest.newBuilder().addResourceLogs(ResourceLogs.newBuilder().addScopeLogs(
                ScopeLogs.newBuilder().addLogRecords(LogRecord.newBuilder().setTimeUnixNano(1_700_000_000_000_000_000L)
                        .setBody(AnyValue.newBuilder().setStringValue("raw"))))).build();
        try {
            stub.export(request);
            return Status.Code.OK;
        } catch (StatusRuntimeException e) {
            assertThat(e.getStatus().getDescription()).as("a refusal names its code").isNotBlank();
            return e.getStatus().getCode();
        }
    }

    private static List<List<Object>> rows(Statement statement, String sql) throws Exception {
        List<List<Object>> rows = new ArrayList<>();
        try (ResultSet rs = statement.executeQuery(sql)) {
            int columns = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                List<Object> row = new ArrayList<>();
                for (int c = 1; c <= columns; c++) {
                    Object value = rs.getObject(c);
                    row.add(value instanceof Integer number ? (Object) number.longValue() : value);
                }
                rows.add(row);
            }
        }
        return rows;
    }
}
