// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.arrow;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Array;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.Statement;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.StringJoiner;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The round-trip property: for generated tables, parsing each JSON line gives the values JDBC reads from the
 * same query row by row. Each seed generates a different table, values at the edges of their types included.
 */
class RoundTripTest {
    private static final String COLUMNS = "id INTEGER, i8 TINYINT, i64 BIGINT, u64 UBIGINT, f FLOAT, d DOUBLE,"
            + " b BOOLEAN, s VARCHAR, dec DECIMAL(18,4), big DECIMAL(38,10), dt DATE, ts TIMESTAMP,"
            + " tz TIMESTAMPTZ, l INTEGER[], st STRUCT(a INTEGER, b VARCHAR)";
    private static final int ROWS = 300;
    // Floats are read as BigDecimal so the test compares the exact text written, not a double rounding of it.
    private static final ObjectMapper MAPPER = new ObjectMapper().enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);

    private DuckDbJson db;

    @BeforeEach
    void open() throws Exception {
        db = new DuckDbJson();
        db.execute("SET TimeZone = 'UTC'");
    }

    @AfterEach
    void close() throws Exception {
        db.close();
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 7, 42, 2026, 90210})
    void everyLineParsesToTheValuesJdbcReadsRowByRow(long seed) throws Exception {
        Random random = new Random(seed);
        db.execute("CREATE TABLE t (" + COLUMNS + ")");
        for (int start = 0; start < ROWS; start += 50) {
            StringJoiner values = new StringJoiner(", ", "INSERT INTO t VALUES ", "");
            for (int id = start; id < start + 50; id++) {
                values.add(row(random, id));
            }
            db.execute(values.toString());
        }

        String query = "SELECT * FROM t ORDER BY id";
        // Small batches so rows cross batch boundaries.
        String[] lines = db.json(query, 64).split("\n", -1);
        assertThat(lines).hasSize(ROWS + 1);
        assertThat(lines[ROWS]).isEmpty();

        try (Statement statement = db.connection.createStatement(); ResultSet rs = statement.executeQuery(query)) {
            ResultSetMetaData meta = rs.getMetaData();
            int row = 0;
            while (rs.next()) {
                JsonNode line = MAPPER.readTree(lines[row]);
                List<String> keys = new ArrayList<>();
                line.fieldNames().forEachRemaining(keys::add);
                List<String> columns = new ArrayList<>();
                for (int c = 1; c <= meta.getColumnCount(); c++) {
                    columns.add(meta.getColumnName(c));
                }
                assertThat(keys).as("keys of line %d", row).isEqualTo(columns);
                for (int c = 1; c <= meta.getColumnCount(); c++) {
                    String where = "row " + row + " column " + meta.getColumnName(c) + " in " + lines[row];
                    assertSameValue(rs, c, meta.getColumnName(c), line.get(meta.getColumnName(c)), where);
                }
                row++;
            }
            assertThat(row).isEqualTo(ROWS);
        }
    }

    private static void assertSameValue(ResultSet rs, int c, String column, JsonNode json, String where) throws Exception {
        Object jdbc = rs.getObject(c);
        if (jdbc == null) {
            assertThat(json.isNull()).as(where).isTrue();
            return;
        }
        switch (column) {
            case "id", "i8" -> assertThat(json.intValue()).as(where).isEqualTo(rs.getInt(c));
            case "i64" -> assertThat(json.longValue()).as(where).isEqualTo(rs.getLong(c));
            case "u64" -> assertThat(json.bigIntegerValue()).as(where).isEqualTo(new BigInteger(jdbc.toString()));
            // Boxed, so NaN equals NaN and -0.0 differs from 0.0.
            case "f" -> assertThat(Float.valueOf(json.isTextual() ? Float.parseFloat(json.textValue())
                    : json.decimalValue().floatValue())).as(where).isEqualTo(Float.valueOf(rs.getFloat(c)));
            case "d" -> assertThat(Double.valueOf(json.isTextual() ? Double.parseDouble(json.textValue())
                    : json.decimalValue().doubleValue())).as(where).isEqualTo(Double.valueOf(rs.getDouble(c)));
            case "b" -> assertThat(json.booleanValue()).as(where).isEqualTo(rs.getBoolean(c));
            case "s" -> assertThat(json.textValue()).as(where).isEqualTo(rs.getString(c));
            case "dec", "big" -> assertThat(new BigDecimal(json.textValue())).as(where).isEqualTo(rs.getBigDecimal(c));
            case "dt" -> assertThat(LocalDate.parse(json.textValue())).as(where).isEqualTo(rs.getObject(c, LocalDate.class));
            case "ts" -> assertThat(LocalDateTime.parse(json.textValue())).as(where)
                    .isEqualTo(rs.getObject(c, LocalDateTime.class));
            case "tz" -> {
                assertThat(json.textValue()).as(where).endsWith("Z");
                assertThat(Instant.parse(json.textValue())).as(where)
                        .isEqualTo(rs.getObject(c, OffsetDateTime.class).toInstant());
            }
            case "l" -> {
                Object[] elements = (Object[]) ((Array) jdbc).getArray();
                assertThat(json.size()).as(where).isEqualTo(elements.length);
                Iterator<JsonNode> nodes = json.elements();
                for (Object element : elements) {
                    JsonNode node = nodes.next();
                    assertThat(node.isNull() ? null : (Object) node.intValue()).as(where).isEqualTo(element);
                }
            }
            case "st" -> {
                Map<?, ?> fields = ((org.duckdb.DuckDBStruct) jdbc).getMap();
                assertThat(json.get("a").isNull() ? null : (Object) json.get("a").intValue()).as(where).isEqualTo(fields.get("a"));
                assertThat(json.get("b").isNull() ? null : json.get("b").textValue()).as(where).isEqualTo(fields.get("b"));
            }
            default -> throw new AssertionError("no comparison for column " + column);
        }
    }

    // One row of SQL literals; about one value in seven is NULL.
    private static String row(Random random, int id) {
        StringJoiner row = new StringJoiner(", ", "(", ")");
        row.add(Integer.toString(id));
        row.add(nullOr(random, () -> "(" + pick(random, -128, 127, random.nextInt(256) - 128) + ")::TINYINT"));
        row.add(nullOr(random, () -> "(" + pick(random, Long.MIN_VALUE, Long.MAX_VALUE, random.nextLong()) + ")::BIGINT"));
        row.add(nullOr(random, () -> Long.toUnsignedString(pick(random, 0, -1, random.nextLong())) + "::UBIGINT"));
        row.add(nullOr(random, () -> "'" + randomFloat(random) + "'::FLOAT"));
        row.add(nullOr(random, () -> "'" + randomDouble(random) + "'::DOUBLE"));
        row.add(nullOr(random, () -> Boolean.toString(random.nextBoolean())));
        row.add(nullOr(random, () -> quote(randomString(random))));
        row.add(nullOr(random, () -> BigDecimal.valueOf(random.nextLong() % 1_000_000_000_000_000_000L, 4).toPlainString()
                + "::DECIMAL(18,4)"));
        row.add(nullOr(random, () -> new BigDecimal(new BigInteger(120, random), 10).multiply(
                BigDecimal.valueOf(random.nextBoolean() ? 1 : -1)).toPlainString() + "::DECIMAL(38,10)"));
        LocalDateTime at = LocalDateTime.ofEpochSecond(random.nextLong(-62_000_000_000L, 253_000_000_000L),
                random.nextInt(1_000_000) * 1000, ZoneOffset.UTC);
        row.add(nullOr(random, () -> "'" + at.toLocalDate() + "'::DATE"));
        row.add(nullOr(random, () -> "'" + at + "'::TIMESTAMP"));
        row.add(nullOr(random, () -> "'" + at + "+00'::TIMESTAMPTZ"));
        row.add(nullOr(random, () -> {
            StringJoiner list = new StringJoiner(", ", "[", "]::INTEGER[]");
            int size = random.nextInt(5);
            for (int i = 0; i < size; i++) {
                list.add(random.nextInt(5) == 0 ? "NULL" : Integer.toString(random.nextInt()));
            }
            return list.toString();
        }));
        row.add(nullOr(random, () -> "{'a': " + (random.nextBoolean() ? "NULL" : Integer.toString(random.nextInt()))
                + ", 'b': " + (random.nextBoolean() ? "NULL" : quote(randomString(random))) + "}"));
        return row.toString();
    }

    private static String nullOr(Random random, java.util.function.Supplier<String> literal) {
        return random.nextInt(7) == 0 ? "NULL" : literal.get();
    }

    // Edges of a range come up often enough to be tested in every table.
    private static long pick(Random random, long min, long max, long any) {
        return switch (random.nextInt(8)) {
            case 0 -> min;
            case 1 -> max;
            default -> any;
        };
    }

    private static String randomFloat(Random random) {
        return switch (random.nextInt(10)) {
            case 0 -> "NaN";
            case 1 -> "Infinity";
            case 2 -> "-Infinity";
            default -> {
                float value = Float.intBitsToFloat(random.nextInt());
                yield Float.isFinite(value) ? Float.toString(value) : "0.5";
            }
        };
    }

    private static String randomDouble(Random random) {
        return switch (random.nextInt(10)) {
            case 0 -> "NaN";
            case 1 -> "Infinity";
            case 2 -> "-Infinity";
            case 3 -> Double.toString(random.nextDouble());
            default -> {
                double value = Double.longBitsToDouble(random.nextLong());
                yield Double.isFinite(value) ? Double.toString(value) : "0.25";
            }
        };
    }

    // Code points that need escaping in JSON, and one- to four-byte UTF-8, but no NUL and no lone surrogates.
    private static String randomString(Random random) {
        int[] alphabet = {'"', '\\', '/', '\n', '\r', '\t', '\b', '\f', 0x01, 0x1F, 0x7F, 'a', 'Z', '0', ' ', 'é', 'ß',
            0x2028, 0x4E2D, 0xFFFD, 0x1F600, 0x10FFFF, '\''};
        StringBuilder text = new StringBuilder();
        int length = random.nextInt(20);
        for (int i = 0; i < length; i++) {
            text.appendCodePoint(random.nextInt(3) == 0 ? alphabet[random.nextInt(alphabet.length)] : 0x20 + random.nextInt(0x5F));
        }
        return text.toString();
    }

    private static String quote(String text) {
        return "'" + text.replace("'", "''") + "'";
    }
}
