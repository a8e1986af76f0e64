// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.ingest;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.ByteString;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.logs.v1.LogRecord;
import io.opentelemetry.proto.logs.v1.ResourceLogs;
import io.opentelemetry.proto.logs.v1.ScopeLogs;
import io.opentelemetry.proto.metrics.v1.ExponentialHistogramDataPoint;
import io.opentelemetry.proto.metrics.v1.HistogramDataPoint;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import io.opentelemetry.proto.metrics.v1.ResourceMetrics;
import io.opentelemetry.proto.metrics.v1.ScopeMetrics;
import io.opentelemetry.proto.metrics.v1.SummaryDataPoint;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.TimeStampMilliVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.MapVector;
import org.apache.arrow.vector.complex.impl.UnionListWriter;
import org.apache.arrow.vector.complex.impl.UnionMapWriter;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * OTLP export requests flattened into one Arrow row per log record, span or metric data point (resource and scope
 * promoted to columns), with the column names and types of DazzleDuck's OpenTelemetry collector, encoded as an Arrow
 * IPC stream: the body an ingestion queue takes.
 */
final class OtlpRows {
    private static final HexFormat HEX = HexFormat.of();

    static final Schema LOGS = new Schema(List.of(timestamp("timestamp"), timestamp("observed_timestamp"), int32("severity_number"),
            utf8("severity_text"), utf8("body"), utf8("trace_id"), utf8("span_id"), int32("flags"), utf8("event_name"), map("attributes"),
            map("resource_attributes"), utf8("scope_name"), utf8("scope_version")));

    static final Schema TRACES = new Schema(List.of(utf8("trace_id"), utf8("span_id"), utf8("parent_span_id"), utf8("name"), utf8("kind"),
            timestamp("start_time_ms"), timestamp("end_time_ms"), int64("duration_ms"), utf8("status_code"), utf8("status_message"),
            map("attributes"), map("resource_attributes"), utf8("scope_name"), utf8("scope_version")));

    static final Schema METRICS = new Schema(List.of(utf8("name"), utf8("description"), utf8("unit"), utf8("metric_type"),
            timestamp("start_time_ms"), timestamp("time_ms"), map("attributes"), map("resource_attributes"), utf8("scope_name"),
            utf8("scope_version"), float64("value_double"), int64("value_int"), int64("count"), float64("sum"), list("bucket_counts", int64Type()),
            list("explicit_bounds", float64Type()), bool("is_monotonic"), utf8("aggregation_temporality")));

    private OtlpRows() {}

    /** One row per log record. */
    static List<Object[]> logs(ExportLogsServiceRequest request) {
        List<Object[]> rows = new ArrayList<>();
        for (ResourceLogs resource : request.getResourceLogsList()) {
            Map<String, String> resourceAttributes = attributes(resource.getResource().getAttributesList());
            for (ScopeLogs scope : resource.getScopeLogsList()) {
                InstrumentationScope s = scope.getScope();
                for (LogRecord log : scope.getLogRecordsList()) {
                    rows.add(new Object[] {millis(log.getTimeUnixNano()), millis(log.getObservedTimeUnixNano()), log.getSeverityNumberValue(),
                            text(log.getSeverityText()), log.hasBody() ? value(log.getBody()) : null, hex(log.getTraceId()), hex(log.getSpanId()),
                            log.getFlags(), text(log.getEventName()), attributes(log.getAttributesList()), resourceAttributes, text(s.getName()),
                            text(s.getVersion())});
                }
            }
        }
        return rows;
    }

    /** One row per span. */
    static List<Object[]> traces(ExportTraceServiceRequest request) {
        List<Object[]> rows = new ArrayList<>();
        for (ResourceSpans resource : request.getResourceSpansList()) {
            Map<String, String> resourceAttributes = attributes(resource.getResource().getAttributesList());
            for (ScopeSpans scope : resource.getScopeSpansList()) {
                InstrumentationScope s = scope.getScope();
                for (Span span : scope.getSpansList()) {
                    long start = span.getStartTimeUnixNano();
                    long end = span.getEndTimeUnixNano();
                    rows.add(new Object[] {hex(span.getTraceId()), hex(span.getSpanId()), hex(span.getParentSpanId()), span.getName(),
                            span.getKind().name(), millis(start), millis(end), end >= start && start > 0 ? (end - start) / 1_000_000 : null,
                            span.hasStatus() ? span.getStatus().getCode().name() : null, span.hasStatus() ? text(span.getStatus().getMessage()) : null,
                            attributes(span.getAttributesList()), resourceAttributes, text(s.getName()), text(s.getVersion())});
                }
            }
        }
        return rows;
    }

    /** One row per data point of every metric. */
    static List<Object[]> metrics(ExportMetricsServiceRequest request) {
        List<Object[]> rows = new ArrayList<>();
        for (ResourceMetrics resource : request.getResourceMetricsList()) {
            Map<String, String> resourceAttributes = attributes(resource.getResource().getAttributesList());
            for (ScopeMetrics scope : resource.getScopeMetricsList()) {
                InstrumentationScope s = scope.getScope();
                for (Metric metric : scope.getMetricsList()) {
                    MetricRows out = new MetricRows(rows, metric, resourceAttributes, s);
                    switch (metric.getDataCase()) {
                        case GAUGE -> metric.getGauge().getDataPointsList().forEach(point -> out.number("gauge", point, null, null));
                        case SUM -> metric.getSum().getDataPointsList().forEach(point -> out.number("sum", point, metric.getSum().getIsMonotonic(),
                                metric.getSum().getAggregationTemporality().name()));
                        case HISTOGRAM -> metric.getHistogram().getDataPointsList().forEach(point -> out.histogram(point,
                                metric.getHistogram().getAggregationTemporality().name()));
                        case EXPONENTIAL_HISTOGRAM -> metric.getExponentialHistogram().getDataPointsList().forEach(point -> out.exponential(point,
                                metric.getExponentialHistogram().getAggregationTemporality().name()));
                        case SUMMARY -> metric.getSummary().getDataPointsList().forEach(out::summary);
                        default -> {
                            // a metric without data carries no row
                        }
                    }
                }
            }
        }
        return rows;
    }

    private record MetricRows(List<Object[]> rows, Metric metric, Map<String, String> resourceAttributes, InstrumentationScope scope) {
        private void add(String type, long start, long time, List<KeyValue> attributes, Double valueDouble, Long valueInt, Long count, Double sum,
                List<Long> buckets, List<Double> bounds, Boolean monotonic, String temporality) {
            rows.add(new Object[] {metric.getName(), text(metric.getDescription()), text(metric.getUnit()), type, millis(start), millis(time),
                    attributes(attributes), resourceAttributes, text(scope.getName()), text(scope.getVersion()), valueDouble, valueInt, count, sum,
                    buckets, bounds, monotonic, temporality});
        }

        void number(String type, NumberDataPoint point, Boolean monotonic, String temporality) {
            boolean isDouble = point.getValueCase() == NumberDataPoint.ValueCase.AS_DOUBLE;
            add(type, point.getStartTimeUnixNano(), point.getTimeUnixNano(), point.getAttributesList(), isDouble ? point.getAsDouble() : null,
                    isDouble ? null : point.getAsInt(), null, null, null, null, monotonic, temporality);
        }

        void histogram(HistogramDataPoint point, String temporality) {
            add("histogram", point.getStartTimeUnixNano(), point.getTimeUnixNano(), point.getAttributesList(), null, null, point.getCount(),
                    point.hasSum() ? point.getSum() : null, point.getBucketCountsList(), point.getExplicitBoundsList(), null, temporality);
        }

        void exponential(ExponentialHistogramDataPoint point, String temporality) {
            add("exponential_histogram", point.getStartTimeUnixNano(), point.getTimeUnixNano(), point.getAttributesList(), null, null,
                    point.getCount(), point.hasSum() ? point.getSum() : null, null, null, null, temporality);
        }

        void summary(SummaryDataPoint point) {
            add("summary", point.getStartTimeUnixNano(), point.getTimeUnixNano(), point.getAttributesList(), null, null, point.getCount(),
                    point.getSum(), null, null, null, null);
        }
    }

    /** The rows as an Arrow IPC stream of one batch. */
    static byte[] encode(Schema schema, List<Object[]> rows, BufferAllocator allocator) throws IOException {
        requireNonNull(rows, "rows is null");
        try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator); ByteArrayOutputStream out = new ByteArrayOutputStream()) {
            root.allocateNew();
            List<FieldVector> vectors = root.getFieldVectors();
            for (int c = 0; c < vectors.size(); c++) {
                FieldVector vector = vectors.get(c);
                for (int r = 0; r < rows.size(); r++) {
                    set(vector, r, rows.get(r)[c]);
                }
                vector.setValueCount(rows.size());
            }
            root.setRowCount(rows.size());
            try (ArrowStreamWriter writer = new ArrowStreamWriter(root, null, out)) {
                writer.start();
                writer.writeBatch();
                writer.end();
            }
            return out.toByteArray();
        }
    }

    @SuppressWarnings("unchecked")
    private static void set(FieldVector vector, int row, Object value) {
        if (value == null) {
            // A list or map left unwritten is null: its writer fills the offsets of the rows it skipped.
            if (!(vector instanceof ListVector)) {
                vector.setNull(row);
            }
            return;
        }
        switch (vector) {
            case VarCharVector v -> v.setSafe(row, ((String) value).getBytes(StandardCharsets.UTF_8));
            case IntVector v -> v.setSafe(row, ((Number) value).intValue());
            case BigIntVector v -> v.setSafe(row, ((Number) value).longValue());
            case Float8Vector v -> v.setSafe(row, ((Number) value).doubleValue());
            case BitVector v -> v.setSafe(row, (Boolean) value ? 1 : 0);
            case TimeStampMilliVector v -> v.setSafe(row, (Long) value);
            case MapVector v -> {
                UnionMapWriter writer = v.getWriter();
                writer.setPosition(row);
                writer.startMap();
                for (Map.Entry<String, String> entry : ((Map<String, String>) value).entrySet()) {
                    writer.startEntry();
                    writer.key().varChar().writeVarChar(entry.getKey());
                    writer.value().varChar().writeVarChar(entry.getValue() == null ? "" : entry.getValue());
                    writer.endEntry();
                }
                writer.endMap();
            }
            case ListVector v -> {
                UnionListWriter writer = v.getWriter();
                writer.setPosition(row);
                writer.startList();
                for (Object item : (List<?>) value) {
                    if (item instanceof Long number) {
                        writer.bigInt().writeBigInt(number);
                    } else {
                        writer.float8().writeFloat8((Double) item);
                    }
                }
                writer.endList();
            }
            default -> throw new IllegalStateException("no OTLP column of type " + vector.getField().getType());
        }
    }

    private static Long millis(long nanos) {
        return nanos == 0 ? null : nanos / 1_000_000;
    }

    private static String text(String value) {
        return value.isEmpty() ? null : value;
    }

    private static String hex(ByteString bytes) {
        return bytes.isEmpty() ? null : HEX.formatHex(bytes.toByteArray());
    }

    private static Map<String, String> attributes(List<KeyValue> attributes) {
        Map<String, String> map = new LinkedHashMap<>();
        for (KeyValue attribute : attributes) {
            map.put(attribute.getKey(), value(attribute.getValue()));
        }
        return map;
    }

    /** An attribute value as text: scalars as themselves, arrays and maps as JSON-like lists. */
    private static String value(AnyValue value) {
        return switch (value.getValueCase()) {
            case STRING_VALUE -> value.getStringValue();
            case BOOL_VALUE -> String.valueOf(value.getBoolValue());
            case INT_VALUE -> String.valueOf(value.getIntValue());
            case DOUBLE_VALUE -> String.valueOf(value.getDoubleValue());
            case BYTES_VALUE -> HEX.formatHex(value.getBytesValue().toByteArray());
            case ARRAY_VALUE -> value.getArrayValue().getValuesList().stream().map(OtlpRows::value).toList().toString();
            case KVLIST_VALUE -> attributes(value.getKvlistValue().getValuesList()).toString();
            default -> null;
        };
    }

    private static Field utf8(String name) {
        return Field.nullable(name, ArrowType.Utf8.INSTANCE);
    }

    private static Field int32(String name) {
        return Field.nullable(name, new ArrowType.Int(32, true));
    }

    private static Field int64(String name) {
        return Field.nullable(name, int64Type());
    }

    private static ArrowType int64Type() {
        return new ArrowType.Int(64, true);
    }

    private static ArrowType float64Type() {
        return new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
    }

    private static Field float64(String name) {
        return Field.nullable(name, float64Type());
    }

    private static Field bool(String name) {
        return Field.nullable(name, ArrowType.Bool.INSTANCE);
    }

    private static Field timestamp(String name) {
        return Field.nullable(name, new ArrowType.Timestamp(TimeUnit.MILLISECOND, null));
    }

    private static Field list(String name, ArrowType item) {
        return new Field(name, FieldType.nullable(ArrowType.List.INSTANCE), List.of(Field.nullable("item", item)));
    }

    private static Field map(String name) {
        Field key = new Field("key", FieldType.notNullable(ArrowType.Utf8.INSTANCE), null);
        Field value = Field.nullable("value", ArrowType.Utf8.INSTANCE);
        Field entries = new Field("entries", FieldType.notNullable(ArrowType.Struct.INSTANCE), List.of(key, value));
        return new Field(name, FieldType.nullable(new ArrowType.Map(false)), List.of(entries));
    }
}
