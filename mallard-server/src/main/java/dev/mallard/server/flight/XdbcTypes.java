// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.flight;

import java.sql.DatabaseMetaData;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** The DuckDB types a JDBC tool offers (CommandGetXdbcTypeInfo), in the Flight SQL type-info row layout. */
final class XdbcTypes {
    private record TypeInfo(String name, int jdbcType, Integer columnSize, String prefix, String suffix, List<String> createParams,
            boolean caseSensitive, Boolean unsigned, boolean fixedPrecision, Integer minScale, Integer maxScale, Integer radix) {
        List<Object> row() {
            return Arrays.asList(name, jdbcType, columnSize, prefix, suffix, createParams, DatabaseMetaData.typeNullable, caseSensitive,
                    DatabaseMetaData.typeSearchable, unsigned, fixedPrecision, false, name, minScale, maxScale, jdbcType, null, radix, null);
        }
    }

    private static final List<TypeInfo> TYPES = List.of(
            number("BOOLEAN", Types.BOOLEAN, 1, null),
            number("TINYINT", Types.TINYINT, 3, false),
            number("SMALLINT", Types.SMALLINT, 5, false),
            number("INTEGER", Types.INTEGER, 10, false),
            number("BIGINT", Types.BIGINT, 19, false),
            number("HUGEINT", Types.NUMERIC, 39, false),
            number("UTINYINT", Types.SMALLINT, 3, true),
            number("USMALLINT", Types.INTEGER, 5, true),
            number("UINTEGER", Types.BIGINT, 10, true),
            number("UBIGINT", Types.NUMERIC, 20, true),
            new TypeInfo("FLOAT", Types.REAL, 24, null, null, null, false, false, false, null, null, 2),
            new TypeInfo("DOUBLE", Types.DOUBLE, 53, null, null, null, false, false, false, null, null, 2),
            new TypeInfo("DECIMAL", Types.DECIMAL, 38, null, null, List.of("precision", "scale"), false, false, true, 0, 38, 10),
            new TypeInfo("VARCHAR", Types.VARCHAR, null, "'", "'", null, true, null, false, null, null, null),
            new TypeInfo("BLOB", Types.VARBINARY, null, "'", "'::BLOB", null, false, null, false, null, null, null),
            new TypeInfo("DATE", Types.DATE, 10, "DATE '", "'", null, false, null, false, null, null, null),
            new TypeInfo("TIME", Types.TIME, 15, "TIME '", "'", null, false, null, false, null, null, null),
            new TypeInfo("TIMESTAMP", Types.TIMESTAMP, 26, "TIMESTAMP '", "'", null, false, null, false, null, null, null),
            new TypeInfo("TIMESTAMP WITH TIME ZONE", Types.TIMESTAMP_WITH_TIMEZONE, 32, "TIMESTAMPTZ '", "'", null, false, null, false, null, null, null),
            new TypeInfo("INTERVAL", Types.OTHER, null, "INTERVAL '", "'", null, false, null, false, null, null, null),
            new TypeInfo("UUID", Types.OTHER, 36, "'", "'::UUID", null, false, null, false, null, null, null),
            new TypeInfo("JSON", Types.OTHER, null, "'", "'::JSON", null, true, null, false, null, null, null));

    private XdbcTypes() {}

    private static TypeInfo number(String name, int jdbcType, int precision, Boolean unsigned) {
        return new TypeInfo(name, jdbcType, precision, null, null, null, false, unsigned, false, 0, 0, unsigned == null ? null : 10);
    }

    /** Every type, or those of one JDBC type code. */
    static List<List<Object>> rows(Integer jdbcType) {
        List<List<Object>> rows = new ArrayList<>();
        for (TypeInfo type : TYPES) {
            if (jdbcType == null || type.jdbcType() == jdbcType) {
                rows.add(type.row());
            }
        }
        return rows;
    }
}
