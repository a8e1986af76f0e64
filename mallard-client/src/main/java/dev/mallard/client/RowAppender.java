// SPDX-License-Identifier: Apache-2.0
package dev.mallard.client;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.MapVector;
import org.apache.arrow.vector.complex.impl.UnionMapWriter;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * Writes one row of Java values into the open batch's vectors, column by column, and estimates the bytes it took
 * (value widths plus string lengths; the estimate is what batching by bytes and the memory bound count).
 */
final class RowAppender {
    private interface Column {
        /** Writes {@code value} (not null) at {@code row}; returns about how many bytes it took. */
        long set(int row, Object value);

        void setNull(int row);
    }

    private final List<Column> columns;

    RowAppender(VectorSchemaRoot root) {
        List<Column> list = new ArrayList<>();
        for (FieldVector vector : root.getFieldVectors()) {
            list.add(column(vector));
        }
        this.columns = List.copyOf(list);
    }

    long append(int row, Object[] values) {
        long bytes = 0;
        for (int i = 0; i < values.length; i++) {
            Object value = values[i];
            if (value == null) {
                columns.get(i).setNull(row);
                bytes += 1;
            } else {
                bytes += columns.get(i).set(row, value);
            }
        }
        return bytes;
    }

    private static Column column(FieldVector vector) {
        Field field = vector.getField();
        String name = field.getName();
        if (vector instanceof BitVector bits) {
            return fixed(bits, (row, v) -> bits.setSafe(row, as(name, v, Boolean.class) ? 1 : 0), 1);
        }
        if (vector instanceof BaseIntVector ints && vector instanceof BaseFixedWidthVector fixedInts) {
            return fixed(fixedInts, (row, v) -> ints.setWithPossibleTruncate(row, as(name, v, Number.class).longValue()),
                    fixedInts.getTypeWidth());
        }
        if (vector instanceof Float8Vector doubles) {
            return fixed(doubles, (row, v) -> doubles.setSafe(row, as(name, v, Number.class).doubleValue()), 8);
        }
        if (vector instanceof Float4Vector floats) {
            return fixed(floats, (row, v) -> floats.setSafe(row, as(name, v, Number.class).floatValue()), 4);
        }
        if (vector instanceof DateDayVector dates) {
            return fixed(dates, (row, v) -> dates.setSafe(row, (int) as(name, v, LocalDate.class).toEpochDay()), 4);
        }
        if (vector instanceof DecimalVector decimals) {
            return fixed(decimals, (row, v) -> decimals.setSafe(row,
                    as(name, v, BigDecimal.class).setScale(decimals.getScale(), java.math.RoundingMode.UNNECESSARY)), 16);
        }
        if (vector instanceof TimeStampVector stamps) {
            TimeUnit unit = ((ArrowType.Timestamp) field.getType()).getUnit();
            return fixed(stamps, (row, v) -> stamps.setSafe(row, v instanceof Instant instant ? inUnit(instant, unit)
                    : as(name, v, Long.class)), 8);
        }
        if (vector instanceof VarCharVector strings) {
            return variable(strings, v -> v.toString().getBytes(StandardCharsets.UTF_8), strings::setSafe);
        }
        if (vector instanceof VarBinaryVector binary) {
            return variable(binary, v -> as(name, v, byte[].class), binary::setSafe);
        }
        if (vector instanceof MapVector map && stringToString(field)) {
            return mapColumn(name, map);
        }
        return new Column() {
            @Override
            public long set(int row, Object value) {
                throw unsupported();
            }

            @Override
            public void setNull(int row) {
                throw unsupported();
            }

            private IllegalArgumentException unsupported() {
                return new IllegalArgumentException("column " + name + " of type " + field.getType()
                        + " cannot take Java values; send a VectorSchemaRoot with ArrowProducer.send instead");
            }
        };
    }

    private interface Setter {
        void set(int row, Object value);
    }

    private interface ByteSetter {
        void set(int row, byte[] bytes);
    }

    private static Column fixed(BaseFixedWidthVector vector, Setter setter, int width) {
        return new Column() {
            @Override
            public long set(int row, Object value) {
                setter.set(row, value);
                return width;
            }

            @Override
            public void setNull(int row) {
                vector.setNull(row);
            }
        };
    }

    private static Column variable(BaseVariableWidthVector vector, java.util.function.Function<Object, byte[]> bytes, ByteSetter setter) {
        return new Column() {
            @Override
            public long set(int row, Object value) {
                byte[] data = bytes.apply(value);
                setter.set(row, data);
                return data.length + 4L;
            }

            @Override
            public void setNull(int row) {
                vector.setNull(row);
            }
        };
    }

    private static boolean stringToString(Field map) {
        List<Field> entry = map.getChildren().get(0).getChildren();
        return entry.size() == 2 && entry.get(0).getType() instanceof ArrowType.Utf8 && entry.get(1).getType() instanceof ArrowType.Utf8;
    }

    private static Column mapColumn(String name, MapVector map) {
        return new Column() {
            @Override
            public long set(int row, Object value) {
                Map<?, ?> entries = as(name, value, Map.class);
                UnionMapWriter writer = map.getWriter();
                writer.setPosition(row);
                writer.startMap();
                long bytes = 8;
                for (Map.Entry<?, ?> e : entries.entrySet()) {
                    if (e.getKey() == null) {
                        throw new IllegalArgumentException("column " + name + " is a map whose keys must not be null");
                    }
                    writer.startEntry();
                    String key = e.getKey().toString();
                    writer.key().varChar().writeVarChar(key);
                    bytes += key.length() + 8L;
                    if (e.getValue() == null) {
                        writer.value().varChar().writeNull();
                    } else {
                        String v = e.getValue().toString();
                        writer.value().varChar().writeVarChar(v);
                        bytes += v.length();
                    }
                    writer.endEntry();
                }
                writer.endMap();
                return bytes;
            }

            @Override
            public void setNull(int row) {
                map.setNull(row);
            }
        };
    }

    private static long inUnit(Instant instant, TimeUnit unit) {
        return switch (unit) {
            case SECOND -> instant.getEpochSecond();
            case MILLISECOND -> instant.toEpochMilli();
            case MICROSECOND -> Math.addExact(Math.multiplyExact(instant.getEpochSecond(), 1_000_000L), instant.getNano() / 1_000L);
            case NANOSECOND -> Math.addExact(Math.multiplyExact(instant.getEpochSecond(), 1_000_000_000L), instant.getNano());
        };
    }

    private static <T> T as(String column, Object value, Class<T> type) {
        if (!type.isInstance(value)) {
            throw new IllegalArgumentException("column " + column + " takes a " + type.getSimpleName() + ", got a "
                    + value.getClass().getSimpleName());
        }
        return type.cast(value);
    }
}
