// SPDX-License-Identifier: Apache-2.0
package dev.mallard.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPInputStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;

class RowAppenderTest {
    static final Schema EVERY_TYPE = new Schema(List.of(
            Field.nullable("flag", ArrowType.Bool.INSTANCE),
            Field.nullable("small", new ArrowType.Int(16, true)),
            Field.nullable("big", new ArrowType.Int(64, true)),
            Field.nullable("ratio", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)),
            Field.nullable("name", ArrowType.Utf8.INSTANCE),
            Field.nullable("blob", ArrowType.Binary.INSTANCE),
            Field.nullable("day", new ArrowType.Date(DateUnit.DAY)),
            Field.nullable("at", new ArrowType.Timestamp(TimeUnit.MICROSECOND, "UTC")),
            Field.nullable("price", new ArrowType.Decimal(10, 2, 128)),
            new Field("attrs", FieldType.nullable(new ArrowType.Map(false)), List.of(new Field("entries", FieldType.notNullable(ArrowType.Struct.INSTANCE),
                    List.of(Field.notNullable("key", ArrowType.Utf8.INSTANCE), Field.nullable("value", ArrowType.Utf8.INSTANCE)))))));

    @Test
    void everyJavaValueKindLandsInItsArrowColumnAndSurvivesTheGzippedStream() throws Exception {
        Instant at = Instant.parse("2026-12-02T06:00:00.123456Z");
        try (BufferAllocator allocator = new RootAllocator(); VectorSchemaRoot root = VectorSchemaRoot.create(EVERY_TYPE, allocator)) {
            root.allocateNew();
            RowAppender appender = new RowAppender(root);
            appender.append(0, new Object[] {true, 7, 1L << 40, 0.5, "naïve", new byte[] {1, 2}, LocalDate.of(2026, 12, 2), at,
                    new BigDecimal("12.30"), Map.of("k", "v")});
            appender.append(1, new Object[] {null, null, null, null, null, null, null, null, null, null});
            appender.append(2, new Object[] {false, (short) -1, 3, 2, "x", new byte[0], LocalDate.EPOCH, 5L, BigDecimal.ONE, Map.of()});
            root.setRowCount(3);
            byte[] stream = BatchEngine.serialize(root, true);
            try (ArrowStreamReader reader = new ArrowStreamReader(new GZIPInputStream(new ByteArrayInputStream(stream)), allocator)) {
                assertThat(reader.loadNextBatch()).isTrue();
                VectorSchemaRoot read = reader.getVectorSchemaRoot();
                assertThat(read.getRowCount()).isEqualTo(3);
                assertThat(read.getVector("flag").getObject(0)).isEqualTo(true);
                assertThat(read.getVector("small").getObject(0)).isEqualTo((short) 7);
                assertThat(read.getVector("big").getObject(0)).isEqualTo(1L << 40);
                assertThat(read.getVector("ratio").getObject(0)).isEqualTo(0.5);
                assertThat(read.getVector("name").getObject(0).toString()).isEqualTo("naïve");
                assertThat((byte[]) read.getVector("blob").getObject(0)).containsExactly(1, 2);
                assertThat(read.getVector("day").getObject(0)).isEqualTo((int) LocalDate.of(2026, 12, 2).toEpochDay());
                assertThat(read.getVector("at").getObject(0)).isEqualTo(at.getEpochSecond() * 1_000_000L + 123_456L);
                assertThat(read.getVector("price").getObject(0)).isEqualTo(new BigDecimal("12.30"));
                assertThat(read.getVector("attrs").getObject(0).toString()).contains("\"key\":\"k\"").contains("\"value\":\"v\"");
                for (Field field : EVERY_TYPE.getFields()) {
                    assertThat(read.getVector(field.getName()).isNull(1)).as(field.getName()).isTrue();
                }
                assertThat(read.getVector("big").getObject(2)).isEqualTo(3L);
                assertThat(read.getVector("at").getObject(2)).isEqualTo(5L);
                assertThat(reader.loadNextBatch()).isFalse();
            }
        }
    }

    @Test
    void aValueOfTheWrongKindIsRefusedNamingItsColumn() {
        try (BufferAllocator allocator = new RootAllocator(); VectorSchemaRoot root = VectorSchemaRoot.create(EVERY_TYPE, allocator)) {
            root.allocateNew();
            RowAppender appender = new RowAppender(root);
            assertThatThrownBy(() -> appender.append(0, new Object[] {"yes", 1, 1L, 1.0, "a", new byte[0], LocalDate.EPOCH, 1L, BigDecimal.ONE, Map.of()}))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("flag").hasMessageContaining("Boolean");
        }
    }
}
