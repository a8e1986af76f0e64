package dev.mallard.flow.sink.iceberg;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * How a batch's DuckDB columns become Iceberg fields: the type a new table gets, and the DuckDB type each value is
 * cast to before DuckDB writes the Parquet file, so the file's physical types are the ones Iceberg reads.
 */
final class IcebergColumns {
    private static final Pattern DECIMAL = Pattern.compile("DECIMAL\\((\\d+),\\s*(\\d+)\\)");

    private IcebergColumns() {}

    /** A result column as DuckDB describes it. */
    record Column(String name, String duckDbType) {}

    /** The schema of a table created for a batch of these columns: every field optional, ids from 1 in column order. */
    static Schema schemaOf(List<Column> columns) {
        List<Types.NestedField> fields = new ArrayList<>();
        int id = 1;
        for (Column column : columns) {
            Type type = icebergType(column).orElseThrow(() -> new MallardException(ErrorCode.USER_ICEBERG_SCHEMA_MISMATCH,
                    "result column " + column.name() + " is " + column.duckDbType() + ", which has no Iceberg type in this version; "
                            + "cast it in the handler's SQL (to VARCHAR, or with to_json for a STRUCT, LIST or MAP)"));
            fields.add(Types.NestedField.optional(id++, column.name(), type));
        }
        return new Schema(fields);
    }

    static Optional<Type> icebergType(Column column) {
        String type = column.duckDbType().toUpperCase(Locale.ROOT);
        Matcher decimal = DECIMAL.matcher(type);
        if (decimal.matches()) {
            return Optional.of(Types.DecimalType.of(Integer.parseInt(decimal.group(1)), Integer.parseInt(decimal.group(2))));
        }
        if (type.startsWith("ENUM(")) {
            return Optional.of(Types.StringType.get());
        }
        return Optional.ofNullable(switch (type) {
            case "BOOLEAN" -> Types.BooleanType.get();
            case "TINYINT", "SMALLINT", "INTEGER", "UTINYINT", "USMALLINT" -> Types.IntegerType.get();
            case "BIGINT", "UINTEGER" -> Types.LongType.get();
            case "UBIGINT" -> Types.DecimalType.of(20, 0);
            case "HUGEINT", "UHUGEINT" -> Types.DecimalType.of(38, 0);
            case "FLOAT" -> Types.FloatType.get();
            case "DOUBLE" -> Types.DoubleType.get();
            case "VARCHAR", "UUID", "JSON" -> Types.StringType.get();
            case "BLOB" -> Types.BinaryType.get();
            case "DATE" -> Types.DateType.get();
            case "TIME" -> Types.TimeType.get();
            case "TIMESTAMP", "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS" -> Types.TimestampType.withoutZone();
            case "TIMESTAMP WITH TIME ZONE" -> Types.TimestampType.withZone();
            default -> null;
        });
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
