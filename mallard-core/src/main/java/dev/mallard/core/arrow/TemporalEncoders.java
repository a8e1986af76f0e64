// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.arrow;

import static dev.mallard.core.arrow.IsoFormat.NANOS_PER_SECOND;

import java.io.IOException;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DateMilliVector;
import org.apache.arrow.vector.DurationVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.IntervalDayVector;
import org.apache.arrow.vector.IntervalMonthDayNanoVector;
import org.apache.arrow.vector.IntervalYearVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.types.TimeUnit;

/**
 * Encoders for dates, times, timestamps and intervals, all as ISO-8601 strings (see {@link IsoFormat}).
 * DuckDB's infinite dates and timestamps, which it stores as the largest and smallest-but-one values, are
 * written as {@code "infinity"} and {@code "-infinity"}, the spelling DuckDB casts them to and from.
 */
final class TemporalEncoders {
    private static final String INFINITY = "infinity";
    private static final String NEGATIVE_INFINITY = "-infinity";

    private TemporalEncoders() {}

    static long unitsPerSecond(TimeUnit unit) {
        return switch (unit) {
            case SECOND -> 1L;
            case MILLISECOND -> 1_000L;
            case MICROSECOND -> 1_000_000L;
            case NANOSECOND -> NANOS_PER_SECOND;
        };
    }

    record DateDay(DateDayVector vector, IsoFormat.LastDate dates) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
                return;
            }
            int days = vector.getDataBuffer().getInt(4L * index);
            if (days == Integer.MAX_VALUE) {
                out.writeAsciiString(INFINITY);
            } else if (days == -Integer.MAX_VALUE) {
                out.writeAsciiString(NEGATIVE_INFINITY);
            } else {
                out.append('"');
                dates.appendTo(out, days);
                out.append('"');
            }
        }
    }

    /** Arrow's other DATE layout (milliseconds, always a whole day); DuckDB does not produce it. */
    record DateMilli(DateMilliVector vector) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
                return;
            }
            out.append('"');
            IsoFormat.appendDate(out, Math.floorDiv(vector.getDataBuffer().getLong(8L * index), 86_400_000L));
            out.append('"');
        }
    }

    /** TIME in any unit: 32-bit values for seconds and milliseconds, 64-bit for micro- and nanoseconds. */
    record Time(BaseFixedWidthVector vector, long nanosPerUnit) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
                return;
            }
            ArrowBuf data = vector.getDataBuffer();
            long value = vector.getTypeWidth() == 4 ? data.getInt(4L * index) : data.getLong(8L * index);
            out.append('"');
            IsoFormat.appendTime(out, value * nanosPerUnit);
            out.append('"');
        }
    }

    /**
     * TIMESTAMP in any unit. Without a time zone it is a local date-time; with one, the value is an instant
     * (Arrow stores UTC whatever the zone) and is written in UTC with a {@code Z}.
     */
    record Timestamp(TimeStampVector vector, long unitsPerSecond, boolean utc, IsoFormat.LastDate dates)
            implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
                return;
            }
            long value = vector.getDataBuffer().getLong(8L * index);
            if (value == Long.MAX_VALUE) {
                out.writeAsciiString(INFINITY);
                return;
            }
            if (value == -Long.MAX_VALUE) {
                out.writeAsciiString(NEGATIVE_INFINITY);
                return;
            }
            long seconds = Math.floorDiv(value, unitsPerSecond);
            int nanos = (int) (Math.floorMod(value, unitsPerSecond) * (NANOS_PER_SECOND / unitsPerSecond));
            out.append('"');
            IsoFormat.appendDateTime(out, dates, seconds, nanos);
            if (utc) {
                out.append('Z');
            }
            out.append('"');
        }
    }

    /**
     * DuckDB's TIMETZ as exported under {@code arrow_lossless_conversion}: an opaque 8-byte value holding the
     * microseconds of the day in the upper 40 bits and, in the lower 24, the offset in seconds stored as
     * {@code 57599 - offset} (57599 s is DuckDB's largest offset, 15:59:59). Written as {@code 12:00:00+01:00}.
     */
    record TimeTz(FixedSizeBinaryVector vector) implements ValueEncoder {
        private static final int MAX_OFFSET_SECONDS = 16 * 60 * 60 - 1;

        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
                return;
            }
            long bits = vector.getDataBuffer().getLong(8L * index);
            long micros = bits >>> 24;
            int offset = MAX_OFFSET_SECONDS - (int) (bits & 0xFF_FFFF);
            out.append('"');
            IsoFormat.appendTime(out, micros * 1000);
            IsoFormat.appendOffset(out, offset);
            out.append('"');
        }
    }

    /** INTERVAL as DuckDB exports it: 32-bit months, 32-bit days, 64-bit nanoseconds. */
    record MonthDayNano(IntervalMonthDayNanoVector vector) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
                return;
            }
            ArrowBuf data = vector.getDataBuffer();
            long offset = 16L * index;
            long nanos = data.getLong(offset + 8);
            out.append('"');
            IsoFormat.appendDuration(out, data.getInt(offset), data.getInt(offset + 4),
                    nanos / NANOS_PER_SECOND, (int) (nanos % NANOS_PER_SECOND));
            out.append('"');
        }
    }

    record DayTime(IntervalDayVector vector) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
                return;
            }
            ArrowBuf data = vector.getDataBuffer();
            int millis = data.getInt(8L * index + 4);
            out.append('"');
            IsoFormat.appendDuration(out, 0, data.getInt(8L * index), millis / 1000, (millis % 1000) * 1_000_000);
            out.append('"');
        }
    }

    record YearMonth(IntervalYearVector vector) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
                return;
            }
            out.append('"');
            IsoFormat.appendDuration(out, vector.getDataBuffer().getInt(4L * index), 0, 0, 0);
            out.append('"');
        }
    }

    record Duration(DurationVector vector, long unitsPerSecond) implements ValueEncoder {
        @Override
        public void write(JsonOutput out, int index) throws IOException {
            if (vector.isNull(index)) {
                out.writeNull();
                return;
            }
            long value = vector.getDataBuffer().getLong(8L * index);
            out.append('"');
            IsoFormat.appendDuration(out, 0, 0, value / unitsPerSecond,
                    (int) (value % unitsPerSecond * (NANOS_PER_SECOND / unitsPerSecond)));
            out.append('"');
        }
    }
}
