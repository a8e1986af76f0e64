// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink.iceberg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.engine.Engine;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.flow.sink.ResultTable;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/** The Iceberg type of each DuckDB column, read from the Arrow schema DuckDB exports on a pipeline's own connection. */
class IcebergColumnsTest {
    private static List<IcebergColumns.Column> columns(Engine engine, String select) throws Exception {
        try (Statement statement = engine.connection().createStatement()) {
            statement.execute("CREATE OR REPLACE TEMP TABLE result AS " + select);
        }
        return IcebergColumns.of(new ResultTable(engine.connection(), "result", 1), engine.allocator());
    }

    @Test
    void everyScalarDuckDbTypeGetsTheIcebergTypeThatHoldsItsValues() throws Exception {
        Map<String, Type> expected = new LinkedHashMap<>();
        expected.put("true", Types.BooleanType.get());
        expected.put("1::TINYINT", Types.IntegerType.get());
        expected.put("1::SMALLINT", Types.IntegerType.get());
        expected.put("1::INTEGER", Types.IntegerType.get());
        expected.put("1::UTINYINT", Types.IntegerType.get());
        expected.put("1::USMALLINT", Types.IntegerType.get());
        expected.put("1::UINTEGER", Types.LongType.get());
        expected.put("1::BIGINT", Types.LongType.get());
        expected.put("1::UBIGINT", Types.DecimalType.of(20, 0));
        expected.put("1::HUGEINT", Types.DecimalType.of(38, 0));
        expected.put("1.5::FLOAT", Types.FloatType.get());
        expected.put("1.5::DOUBLE", Types.DoubleType.get());
        expected.put("1.5::DECIMAL(9,2)", Types.DecimalType.of(9, 2));
        expected.put("1.5::DECIMAL(38,10)", Types.DecimalType.of(38, 10));
        expected.put("'a'", Types.StringType.get());
        expected.put("'{\"k\": 1}'::JSON", Types.StringType.get());
        expected.put("uuid()", Types.StringType.get());
        expected.put("'a'::ENUM('a', 'b')", Types.StringType.get());
        expected.put("'a'::BLOB", Types.BinaryType.get());
        expected.put("DATE '2026-12-02'", Types.DateType.get());
        expected.put("TIME '12:00:00'", Types.TimeType.get());
        expected.put("TIMESTAMP '2026-12-02 12:00:00'", Types.TimestampType.withoutZone());
        expected.put("TIMESTAMP_MS '2026-12-02 12:00:00'", Types.TimestampType.withoutZone());
        expected.put("TIMESTAMPTZ '2026-12-02 12:00:00+00'", Types.TimestampType.withZone());
        StringBuilder select = new StringBuilder("SELECT ");
        int i = 0;
        for (String value : expected.keySet()) {
            select.append(i == 0 ? "" : ", ").append(value).append(" AS c").append(i++);
        }
        try (Engine engine = Engine.inMemory()) {
            List<IcebergColumns.Column> columns = columns(engine, select.toString());
            assertThat(columns).hasSize(expected.size());
            int index = 0;
            for (Map.Entry<String, Type> entry : expected.entrySet()) {
                assertThat(IcebergColumns.icebergType(columns.get(index++).field())).as(entry.getKey()).contains(entry.getValue());
            }
        }
    }

    @Test
    void aNestedOrUnknownTypeIsRefusedNamingTheColumnAndTheFix() throws Exception {
        try (Engine engine = Engine.inMemory()) {
            for (String value : List.of("{'a': 1}", "[1, 2]", "MAP {'a': 1}", "INTERVAL 1 DAY", "'101'::BIT", "TIMETZ '12:00:00+02'")) {
                List<IcebergColumns.Column> columns = columns(engine, "SELECT " + value + " AS odd");
                assertThatThrownBy(() -> IcebergColumns.schemaOf(columns)).as(value)
                        .isInstanceOfSatisfying(MallardException.class, e -> {
                            assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_ICEBERG_SCHEMA_MISMATCH);
                            assertThat(e.getMessage()).contains("result column odd", "cast it in the handler's SQL");
                        });
            }
        }
    }
}
