// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.arrow;

import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DateMilliVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeMilliVector;
import org.apache.arrow.vector.TimeNanoVector;
import org.apache.arrow.vector.TimeSecVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.util.Text;

/**
 * Arrow values as the Java values DuckDB's {@code setObject} takes and text formats print: dates as
 * {@link LocalDate}, times as {@link LocalTime}, timestamps as {@link LocalDateTime} (or {@link java.time.OffsetDateTime}
 * in UTC when the column has a time zone), text as {@link String}.
 */
public final class ArrowValues {
    private ArrowValues() {}

    /** Every row of the batch (bound parameters arrive this way). */
    public static List<List<Object>> rows(VectorSchemaRoot root) {
        List<List<Object>> rows = new ArrayList<>();
        for (int row = 0; row < root.getRowCount(); row++) {
            List<Object> values = new ArrayList<>();
            for (FieldVector vector : root.getFieldVectors()) {
                values.add(value(vector, row));
            }
            rows.add(values);
        }
        return rows;
    }

    public static Object value(FieldVector vector, int row) {
        if (vector.isNull(row)) {
            return null;
        }
        return switch (vector) {
            case DateDayVector dates -> LocalDate.ofEpochDay(dates.get(row));
            case DateMilliVector dates -> LocalDate.ofEpochDay(Math.floorDiv(dates.get(row), 86_400_000L));
            case TimeSecVector times -> LocalTime.ofSecondOfDay(times.get(row));
            case TimeMilliVector times -> LocalTime.ofNanoOfDay(times.get(row) * 1_000_000L);
            case TimeMicroVector times -> LocalTime.ofNanoOfDay(times.get(row) * 1_000L);
            case TimeNanoVector times -> LocalTime.ofNanoOfDay(times.get(row));
            case TimeStampVector stamps -> timestamp(stamps, row);
            default -> {
                Object value = vector.getObject(row);
                yield value instanceof Text text ? text.toString() : value;
            }
        };
    }

    private static Object timestamp(TimeStampVector vector, int row) {
        ArrowType.Timestamp type = (ArrowType.Timestamp) vector.getField().getType();
        long value = vector.get(row);
        Instant instant = switch (type.getUnit()) {
            case SECOND -> Instant.ofEpochSecond(value);
            case MILLISECOND -> Instant.ofEpochMilli(value);
            case MICROSECOND -> Instant.ofEpochSecond(Math.floorDiv(value, 1_000_000L), Math.floorMod(value, 1_000_000L) * 1_000L);
            case NANOSECOND -> Instant.ofEpochSecond(Math.floorDiv(value, 1_000_000_000L), Math.floorMod(value, 1_000_000_000L));
        };
        if (type.getTimezone() == null) {
            return LocalDateTime.ofInstant(instant, ZoneOffset.UTC);
        }
        return instant.atOffset(ZoneOffset.UTC);
    }
}
