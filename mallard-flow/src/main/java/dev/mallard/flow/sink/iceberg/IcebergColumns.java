// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink.iceberg;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.arrow.ArrowExport;
import dev.mallard.core.arrow.ArrowExtension;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.flow.sink.ResultTable;
import java.io.IOException;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * How a batch's DuckDB columns become Iceberg fields: the type a new table gets, and the DuckDB type each value is
 * cast to before DuckDB writes the Parquet file, so the file's physical types are the ones Iceberg reads.
 *
 * <p>A column's type is read from the typed Arrow schema DuckDB exports for the batch (its type ids, widths,
 * precision and scale, time units and zones, extension names), never from DuckDB's type text.
 */
final class IcebergColumns {
    private IcebergColumns() {}

    /** A result column as DuckDB exports it to Arrow. */
    record Column(String name, Field field) {
        Column {
            requireNonNull(name, "name is null");
            requireNonNull(field, "field is null");
        }

        /** The column's type as a user reads it in an error. */
        String describe() {
            ArrowExtension extension = ArrowExtension.of(field);
            String name = extension.duckDbType() != null ? extension.duckDbType() : extension.name();
            return name == null ? field.getType().toString() : name + " (" + field.getType() + ")";
        }
    }

    /** The batch's columns, from the Arrow schema of its (empty) result: DuckDB types every column. */
    static List<Column> of(ResultTable batch, BufferAllocator allocator) {
        List<Column> columns = new ArrayList<>();
        try (Statement statement = batch.connection().createStatement();
                ResultSet rows = statement.executeQuery("SELECT * FROM " + batch.name() + " LIMIT 0");
                ArrowReader reader = ArrowExport.export(rows, allocator, 1)) {
            for (Field field : reader.getVectorSchemaRoot().getSchema().getFields()) {
                columns.add(new Column(field.getName(), field));
            }
        } catch (SQLException | IOException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot read the batch's result types: " + e.getMessage(), e);
        }
        return columns;
    }

    /** The schema of a table created for a batch of these columns: every field optional, ids from 1 in column order. */
    static Schema schemaOf(List<Column> columns) {
        List<Types.NestedField> fields = new ArrayList<>();
        int id = 1;
        for (Column column : columns) {
            Type type = icebergType(column.field()).orElseThrow(() -> new MallardException(ErrorCode.USER_ICEBERG_SCHEMA_MISMATCH,
                    "result column " + column.name() + " is " + column.describe() + ", which has no Iceberg type in this version; "
                            + "cast it in the handler's SQL (to VARCHAR, or with to_json for a STRUCT, LIST or MAP)"));
            fields.add(Types.NestedField.optional(id++, column.name(), type));
        }
        return new Schema(fields);
    }

    /** The Iceberg type of a DuckDB column; empty for one this version does not write (nested types, intervals, ...). */
    static Optional<Type> icebergType(Field field) {
        if (field.getDictionary() != null) {
            // An ENUM: its values are strings, whatever the index type.
            return Optional.of(Types.StringType.get());
        }
        ArrowExtension extension = ArrowExtension.of(field);
        if (extension.name() != null) {
            // DuckDB's types that Arrow has no plain type for; any other extension is refused.
            if (extension.isUuid() || extension.isJson()) {
                return Optional.of(Types.StringType.get());
            }
            if (extension.isBool8()) {
                return Optional.of(Types.BooleanType.get());
            }
            boolean int128 = "hugeint".equals(extension.duckDbType()) || "uhugeint".equals(extension.duckDbType());
            return int128 ? Optional.of(Types.DecimalType.of(38, 0)) : Optional.empty();
        }
        return Optional.ofNullable(switch (field.getType()) {
            case ArrowType.Bool bool -> Types.BooleanType.get();
            case ArrowType.Int integer -> integerType(integer);
            case ArrowType.FloatingPoint floating -> floating.getPrecision() == FloatingPointPrecision.SINGLE ? Types.FloatType.get()
                    : floating.getPrecision() == FloatingPointPrecision.DOUBLE ? Types.DoubleType.get() : null;
            case ArrowType.Decimal decimal -> decimal.getPrecision() <= 38 ? Types.DecimalType.of(decimal.getPrecision(), decimal.getScale()) : null;
            case ArrowType.Utf8 text -> Types.StringType.get();
            case ArrowType.LargeUtf8 text -> Types.StringType.get();
            case ArrowType.Utf8View text -> Types.StringType.get();
            case ArrowType.Binary bytes -> Types.BinaryType.get();
            case ArrowType.LargeBinary bytes -> Types.BinaryType.get();
            case ArrowType.BinaryView bytes -> Types.BinaryType.get();
            case ArrowType.Date date -> Types.DateType.get();
            case ArrowType.Time time -> Types.TimeType.get();
            case ArrowType.Timestamp timestamp -> timestamp.getTimezone() == null ? Types.TimestampType.withoutZone() : Types.TimestampType.withZone();
            default -> null;
        });
    }

    private static Type integerType(ArrowType.Int integer) {
        int bits = integer.getBitWidth();
        if (bits < 32 || bits == 32 && integer.getIsSigned()) {
            return Types.IntegerType.get();
        }
        if (bits == 32 || integer.getIsSigned() && bits == 64) {
            return Types.LongType.get();
        }
        // UBIGINT: 20 decimal digits hold every value.
        return bits == 64 ? Types.DecimalType.of(20, 0) : null;
    }

    /** The DuckDB type whose Parquet encoding is the one Iceberg reads for {@code type}; empty for types not written. */
    static Optional<String> duckDbType(Type type) {
        return Optional.ofNullable(switch (type.typeId()) {
            case BOOLEAN -> "BOOLEAN";
            case INTEGER -> "INTEGER";
            case LONG -> "BIGINT";
            case FLOAT -> "FLOAT";
            case DOUBLE -> "DOUBLE";
            case DECIMAL -> "DECIMAL(" + ((Types.DecimalType) type).precision() + ", " + ((Types.DecimalType) type).scale() + ")";
            case STRING -> "VARCHAR";
            case BINARY -> "BLOB";
            case DATE -> "DATE";
            case TIME -> "TIME";
            case TIMESTAMP -> ((Types.TimestampType) type).shouldAdjustToUTC() ? "TIMESTAMPTZ" : "TIMESTAMP";
            case UUID -> "UUID";
            default -> null;
        });
    }
}
