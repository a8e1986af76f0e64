// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.arrow;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.io.ByteArrayOutputStream;
import java.math.BigDecimal;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.arrow.vector.DateMilliVector;
import org.apache.arrow.vector.Decimal256Vector;
import org.apache.arrow.vector.DurationVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.Float2Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.IntervalDayVector;
import org.apache.arrow.vector.IntervalYearVector;
import org.apache.arrow.vector.TimeSecVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.RunEndEncodedVector;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class JsonLinesWriterTest {
    private DuckDbJson db;

    @BeforeEach
    void open() throws Exception {
        db = new DuckDbJson();
    }

    @AfterEach
    void close() throws Exception {
        db.close();
    }

    @Test
    void eachRowIsOneObjectWithTheColumnNamesAsKeysInSchemaOrder() throws Exception {
        assertThat(db.json("SELECT 3 AS z, 1 AS a, 2 AS \"with \"\"quote\"\"\" FROM range(2)"))
                .isEqualTo("{\"z\":3,\"a\":1,\"with \\\"quote\\\"\":2}\n{\"z\":3,\"a\":1,\"with \\\"quote\\\"\":2}\n");
    }

    @Test
    void integersOfEveryWidthSignedAndUnsignedAreJsonNumbers() throws Exception {
        assertThat(db.json("SELECT (-128)::TINYINT i8, (-32768)::SMALLINT i16, (-2147483648)::INTEGER i32,"
                + " (-9223372036854775808)::BIGINT i64, 255::UTINYINT u8, 65535::USMALLINT u16,"
                + " 4294967295::UINTEGER u32, 18446744073709551615::UBIGINT u64"))
                .isEqualTo("{\"i8\":-128,\"i16\":-32768,\"i32\":-2147483648,\"i64\":-9223372036854775808,"
                        + "\"u8\":255,\"u16\":65535,\"u32\":4294967295,\"u64\":18446744073709551615}\n");
        assertThat(db.json("SELECT 127::TINYINT i8, 32767::SMALLINT i16, 2147483647::INTEGER i32,"
                + " 9223372036854775807::BIGINT i64, 0::UTINYINT u8, 9223372036854775808::UBIGINT u64"))
                .isEqualTo("{\"i8\":127,\"i16\":32767,\"i32\":2147483647,\"i64\":9223372036854775807,"
                        + "\"u8\":0,\"u64\":9223372036854775808}\n");
    }

    @Test
    void booleansAreTrueOrFalse() throws Exception {
        assertThat(db.json("SELECT true t, false f")).isEqualTo("{\"t\":true,\"f\":false}\n");
        db.execute(ArrowExport.LOSSLESS_SETTING);
        assertThat(db.json("SELECT true t, false f, NULL::BOOLEAN n, [true] l, {'b': false} s"))
                .as("as arrow.bool8").isEqualTo("{\"t\":true,\"f\":false,\"n\":null,\"l\":[true],\"s\":{\"b\":false}}\n");
    }

    @Test
    void nullIsJsonNullWhateverTheType() throws Exception {
        assertThat(db.json("SELECT NULL n, NULL::INT i, NULL::VARCHAR s, NULL::DECIMAL(10,2) d, NULL::TIMESTAMP t,"
                + " NULL::INT[] l, NULL::STRUCT(a INT) st, NULL::MAP(VARCHAR, INT) m, NULL::BLOB b, NULL::INTERVAL iv"))
                .isEqualTo("{\"n\":null,\"i\":null,\"s\":null,\"d\":null,\"t\":null,\"l\":null,\"st\":null,\"m\":null,"
                        + "\"b\":null,\"iv\":null}\n");
    }

    @Test
    void floatsAndDoublesAreJsonNumbers() throws Exception {
        assertThat(db.json("SELECT 1.5::FLOAT f, 1.1::FLOAT f2, 0.1::DOUBLE d, 1e300::DOUBLE big,"
                + " 123456789.0::DOUBLE x, '-0.0'::DOUBLE nz"))
                .isEqualTo("{\"f\":1.5,\"f2\":1.1,\"d\":0.1,\"big\":1.0E300,\"x\":1.23456789E8,\"nz\":-0.0}\n");
    }

    @Test
    void nanAndInfinitiesAreStrings() throws Exception {
        assertThat(db.json("SELECT 'nan'::DOUBLE n, 'inf'::DOUBLE i, '-inf'::DOUBLE ni,"
                + " 'nan'::FLOAT fn, 'inf'::FLOAT fi, '-inf'::FLOAT fni"))
                .isEqualTo("{\"n\":\"NaN\",\"i\":\"Infinity\",\"ni\":\"-Infinity\","
                        + "\"fn\":\"NaN\",\"fi\":\"Infinity\",\"fni\":\"-Infinity\"}\n");
    }

    @Test
    void decimalIsTheStringOfItsExactDigits() throws Exception {
        assertThat(db.json("SELECT 1.5::DECIMAL(10,2) a, (-0.05)::DECIMAL(4,2) b, 0::DECIMAL(18,3) c,"
                + " 123456789012345.678::DECIMAL(18,3) d,"
                + " 12345678901234567890123456789.123456789::DECIMAL(38,9) e,"
                + " (-1)::DECIMAL(38,37) f, 7::DECIMAL(5,0) g, (-9.9)::DECIMAL(2,1) h"))
                .isEqualTo("{\"a\":\"1.50\",\"b\":\"-0.05\",\"c\":\"0.000\",\"d\":\"123456789012345.678\","
                        + "\"e\":\"12345678901234567890123456789.123456789\","
                        + "\"f\":\"-1.0000000000000000000000000000000000000\",\"g\":\"7\",\"h\":\"-9.9\"}\n");
    }

    @Test
    void decimal256IsTheStringOfItsExactDigits() throws Exception {
        // DuckDB stops at 38 digits, so this layout only comes from other producers.
        BigDecimal big = new BigDecimal("-123456789012345678901234567890123456789012345678901234567890.12");
        try (Decimal256Vector vector = new Decimal256Vector("d", db.allocator, 76, 2)) {
            vector.allocateNew(3);
            vector.set(0, new BigDecimal("1.50"));
            vector.set(1, big);
            vector.setNull(2);
            vector.setValueCount(3);
            assertThat(write(new VectorSchemaRoot(List.of(vector))))
                    .isEqualTo("{\"d\":\"1.50\"}\n{\"d\":\"" + big.toPlainString() + "\"}\n{\"d\":null}\n");
        }
    }

    @Test
    void hugeintIsTheNumberOfItsDigits() throws Exception {
        String sql = "SELECT 170141183460469231731687303715884105727::HUGEINT max,"
                + " (-170141183460469231731687303715884105727 - 1)::HUGEINT min, 42::HUGEINT small,"
                + " SUM(x) s FROM (VALUES (1::BIGINT), (2)) t(x)";
        // Without lossless conversion DuckDB exports HUGEINT as DECIMAL(38,0), which cannot be told from a decimal.
        assertThat(db.json(sql)).isEqualTo("{\"max\":\"170141183460469231731687303715884105727\","
                + "\"min\":\"-170141183460469231731687303715884105728\",\"small\":\"42\",\"s\":\"3\"}\n");
        db.execute(ArrowExport.LOSSLESS_SETTING);
        assertThat(db.json(sql)).as("as an opaque 128-bit integer").isEqualTo("{\"max\":170141183460469231731687303715884105727,"
                + "\"min\":-170141183460469231731687303715884105728,\"small\":42,\"s\":3}\n");
    }

    @Test
    void uhugeintIsTheNumberOfItsDigitsUnderLosslessConversion() throws Exception {
        db.execute(ArrowExport.LOSSLESS_SETTING);
        assertThat(db.json("SELECT 340282366920938463463374607431768211455::UHUGEINT max, 0::UHUGEINT zero,"
                + " 18446744073709551616::UHUGEINT two64"))
                .isEqualTo("{\"max\":340282366920938463463374607431768211455,\"zero\":0,"
                        + "\"two64\":18446744073709551616}\n");
    }

    @Test
    void bignumIsTheStringOfItsDigits() throws Exception {
        assertThat(db.json("SELECT 123456789012345678901234567890::BIGNUM big, (-256)::BIGNUM neg, 0::BIGNUM zero,"
                + " (-1)::BIGNUM minus_one"))
                .isEqualTo("{\"big\":\"123456789012345678901234567890\",\"neg\":\"-256\",\"zero\":\"0\","
                        + "\"minus_one\":\"-1\"}\n");
    }

    @Test
    void varcharIsAStringWithQuotesBackslashesAndControlCharactersEscaped() throws Exception {
        assertThat(db.json("SELECT 'a\"b\\c' || chr(1) || chr(10) || chr(9) || chr(13) || chr(8) || chr(12)"
                + " || chr(31) || 'é中😀</' s, '' e"))
                .isEqualTo("{\"s\":\"a\\\"b\\\\c\\u0001\\n\\t\\r\\b\\f\\u001Fé中😀</\",\"e\":\"\"}\n");
    }

    @Test
    void jsonIsEmbeddedRawWhenTheFieldIsMarkedAsJson() throws Exception {
        // DuckDB marks JSON (arrow.json) only under lossless conversion.
        db.execute(ArrowExport.LOSSLESS_SETTING);
        assertThat(db.json("SELECT '{\"a\": [1, 2]}'::JSON j, '\"text\"'::JSON s, NULL::JSON n,"
                + " ['1'::JSON, '{\"b\":true}'::JSON] list, {'inner': '[null]'::JSON} st,"
                + " '{\"a\":\n 1}'::JSON multiline"))
                .isEqualTo("{\"j\":{\"a\": [1, 2]},\"s\":\"text\",\"n\":null,\"list\":[1,{\"b\":true}],"
                        + "\"st\":{\"inner\":[null]},\"multiline\":{\"a\":  1}}\n");
    }

    @Test
    void jsonIsAStringWhenDuckDbExportsItAsPlainVarchar() throws Exception {
        // Without lossless conversion DuckDB 2.0 exports JSON as a plain Utf8 field, indistinguishable from VARCHAR.
        assertThat(db.json("SELECT '{\"a\":1}'::JSON j")).isEqualTo("{\"j\":\"{\\\"a\\\":1}\"}\n");
    }

    @Test
    void blobIsABase64String() throws Exception {
        assertThat(db.json("SELECT 'ab'::BLOB b, ''::BLOB e, '\\x00\\xFF\\x10'::BLOB bin"))
                .isEqualTo("{\"b\":\"YWI=\",\"e\":\"\",\"bin\":\"AP8Q\"}\n");
    }

    @Test
    void uuidIsItsCanonicalStringWhetherExportedAsTextOrAsArrowUuid() throws Exception {
        String sql = "SELECT '4F94BA9A-76E4-49F8-9C83-109DC27686CB'::UUID u, '00000000-0000-0000-0000-000000000001'::UUID one,"
                + " 'ffffffff-ffff-ffff-ffff-ffffffffffff'::UUID max, NULL::UUID n";
        String expected = "{\"u\":\"4f94ba9a-76e4-49f8-9c83-109dc27686cb\",\"one\":\"00000000-0000-0000-0000-000000000001\","
                + "\"max\":\"ffffffff-ffff-ffff-ffff-ffffffffffff\",\"n\":null}\n";
        assertThat(db.json(sql)).as("exported as Utf8").isEqualTo(expected);
        db.execute(ArrowExport.LOSSLESS_SETTING);
        assertThat(db.json(sql)).as("exported as arrow.uuid").isEqualTo(expected);
    }

    @Test
    void enumIsItsLabel() throws Exception {
        db.execute("CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')");
        assertThat(db.json("SELECT m, [m] l FROM (VALUES ('ok'::mood), (NULL), ('happy')) t(m)"))
                .isEqualTo("{\"m\":\"ok\",\"l\":[\"ok\"]}\n{\"m\":null,\"l\":[null]}\n{\"m\":\"happy\",\"l\":[\"happy\"]}\n");
    }

    @Test
    void aDictionaryEncodedColumnWithoutADictionaryProviderFailsNamingTheColumn() throws Exception {
        db.execute("CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')");
        try (Statement statement = db.connection.createStatement();
                ResultSet rs = statement.executeQuery("SELECT 'ok'::mood feeling");
                ArrowReader reader = ArrowExport.export(rs, db.allocator, 1024)) {
            assertThat(reader.loadNextBatch()).isTrue();
            JsonLinesWriter writer = new JsonLinesWriter(new ByteArrayOutputStream());
            assertThatThrownBy(() -> writer.write(reader.getVectorSchemaRoot()))
                    .isInstanceOfSatisfying(MallardException.class,
                            e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.SYSTEM_INTERNAL))
                    .hasMessageContaining("\"feeling\"")
                    .hasMessageContaining("dictionary");
        }
    }

    @Test
    void dateIsAnIsoLocalDate() throws Exception {
        assertThat(db.json("SELECT DATE '2020-01-31' d, DATE '1970-01-01' epoch, DATE '1969-12-31' before,"
                + " DATE '0044-03-15 (BC)' bc, DATE '12345-06-07' far, 'infinity'::DATE inf, '-infinity'::DATE ninf"))
                .isEqualTo("{\"d\":\"2020-01-31\",\"epoch\":\"1970-01-01\",\"before\":\"1969-12-31\","
                        + "\"bc\":\"-0043-03-15\",\"far\":\"+12345-06-07\",\"inf\":\"infinity\",\"ninf\":\"-infinity\"}\n");
    }

    @Test
    void timeIsAnIsoLocalTimeWithAFractionOnlyWhenNotZero() throws Exception {
        assertThat(db.json("SELECT TIME '12:00:01' t, TIME '12:00:01.5' half, TIME '23:59:59.123456' micros,"
                + " TIME '00:00:00' midnight, TIME '24:00:00' end_of_day, '12:00:01.123456789'::TIME_NS nanos"))
                .isEqualTo("{\"t\":\"12:00:01\",\"half\":\"12:00:01.500\",\"micros\":\"23:59:59.123456\","
                        + "\"midnight\":\"00:00:00\",\"end_of_day\":\"24:00:00\",\"nanos\":\"12:00:01.123456789\"}\n");
    }

    @Test
    void timestampIsAnIsoLocalDateTimeInEveryUnit() throws Exception {
        assertThat(db.json("SELECT TIMESTAMP '2015-12-12 19:11:01.249' us, TIMESTAMP '2020-01-01 00:00:00' whole,"
                + " TIMESTAMP_S '2020-01-01 00:00:01' s, TIMESTAMP_MS '2020-01-01 00:00:00.5' ms,"
                + " TIMESTAMP_NS '2020-01-01 00:00:00.123456789' ns, TIMESTAMP '1969-12-31 23:59:59.999999' before,"
                + " 'infinity'::TIMESTAMP inf, '-infinity'::TIMESTAMP_NS ninf"))
                .isEqualTo("{\"us\":\"2015-12-12T19:11:01.249\",\"whole\":\"2020-01-01T00:00:00\","
                        + "\"s\":\"2020-01-01T00:00:01\",\"ms\":\"2020-01-01T00:00:00.500\","
                        + "\"ns\":\"2020-01-01T00:00:00.123456789\",\"before\":\"1969-12-31T23:59:59.999999\","
                        + "\"inf\":\"infinity\",\"ninf\":\"-infinity\"}\n");
    }

    @Test
    void timestamptzIsTheInstantInUtcWithAZ() throws Exception {
        db.execute("SET TimeZone = 'America/New_York'");
        assertThat(db.json("SELECT TIMESTAMPTZ '2015-12-12 19:11:01.249+00' a, TIMESTAMPTZ '2020-06-01 12:00:00-04' b,"
                + " TIMESTAMPTZ '2020-06-01 12:00:00' local_new_york"))
                .isEqualTo("{\"a\":\"2015-12-12T19:11:01.249Z\",\"b\":\"2020-06-01T16:00:00Z\","
                        + "\"local_new_york\":\"2020-06-01T16:00:00Z\"}\n");
    }

    @Test
    void intervalIsAnIsoDuration() throws Exception {
        assertThat(db.json("SELECT INTERVAL '1 month 2 days 3 hours' a, INTERVAL 0 SECOND zero, INTERVAL '14 months' b,"
                + " INTERVAL '1 day 1.5 seconds' c, INTERVAL '-90 minutes' d, INTERVAL '1 month -2 days' e,"
                + " INTERVAL '26 hours 0.000001 seconds' f, INTERVAL '-0.5 seconds' g"))
                .isEqualTo("{\"a\":\"P1M2DT3H\",\"zero\":\"PT0S\",\"b\":\"P1Y2M\",\"c\":\"P1DT1.5S\",\"d\":\"PT-1H-30M\","
                        + "\"e\":\"P1M-2D\",\"f\":\"PT26H0.000001S\",\"g\":\"PT-0.5S\"}\n");
    }

    @Test
    void timetzKeepsItsOffsetUnderLosslessConversion() throws Exception {
        String sql = "SELECT TIMETZ '12:00:00+01' a, TIMETZ '12:00:00.5-05:30' b, TIMETZ '00:00:00+00' c";
        // Otherwise DuckDB exports TIMETZ as a plain TIME and the offset is lost.
        assertThat(db.json(sql)).isEqualTo("{\"a\":\"12:00:00\",\"b\":\"12:00:00.500\",\"c\":\"00:00:00\"}\n");
        db.execute(ArrowExport.LOSSLESS_SETTING);
        assertThat(db.json(sql)).isEqualTo("{\"a\":\"12:00:00+01:00\",\"b\":\"12:00:00.500-05:30\",\"c\":\"00:00:00Z\"}\n");
    }

    @Test
    void bitIsAStringOfBitsUnderLosslessConversion() throws Exception {
        String sql = "SELECT '0101'::BIT a, '111100001'::BIT b, '1'::BIT c";
        // Otherwise DuckDB exports BIT as plain binary (its internal layout), which is written as base64.
        assertThat(db.json(sql)).isEqualTo("{\"a\":\"BPU=\",\"b\":\"B//h\",\"c\":\"B/8=\"}\n");
        db.execute(ArrowExport.LOSSLESS_SETTING);
        assertThat(db.json(sql)).isEqualTo("{\"a\":\"0101\",\"b\":\"111100001\",\"c\":\"1\"}\n");
    }

    @Test
    void listsAndArraysAreJsonArraysInEveryArrowLayout() throws Exception {
        String sql = "SELECT [1, 2, NULL] l, []::INT[] empty, [[1], [2, 3]] nested, [1, 2, 3]::INT[3] arr,"
                + " ['a', 'b'] strings, [[1, 2], [3, 4]]::INT[2][2] arr2, ['x'::BLOB] blobs";
        String expected = "{\"l\":[1,2,null],\"empty\":[],\"nested\":[[1],[2,3]],\"arr\":[1,2,3],"
                + "\"strings\":[\"a\",\"b\"],\"arr2\":[[1,2],[3,4]],\"blobs\":[\"eA==\"]}\n";
        assertThat(db.json(sql)).as("List, FixedSizeList").isEqualTo(expected);
        db.execute("SET arrow_large_buffer_size = true");
        assertThat(db.json(sql)).as("LargeList, LargeUtf8, LargeBinary").isEqualTo(expected);
        db.execute("RESET arrow_large_buffer_size", "SET arrow_output_version = '1.5'",
                "SET arrow_output_list_view = true", "SET produce_arrow_string_view = true");
        assertThat(db.json(sql)).as("ListView, Utf8View, BinaryView").isEqualTo(expected);
    }

    @Test
    void structIsAJsonObjectWithItsFieldsInOrder() throws Exception {
        assertThat(db.json("SELECT {'b': 1, 'a': 'x', 'c': {'d': true}} s"))
                .isEqualTo("{\"s\":{\"b\":1,\"a\":\"x\",\"c\":{\"d\":true}}}\n");
    }

    @Test
    void mapWithStringKeysIsAJsonObject() throws Exception {
        db.execute("CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')");
        assertThat(db.json("SELECT MAP {'k1': 1, 'k\"2': NULL} m, MAP {}::MAP(VARCHAR, INT) empty,"
                + " MAP {'ok'::mood: [1]} enum_keys"))
                .isEqualTo("{\"m\":{\"k1\":1,\"k\\\"2\":null},\"empty\":{},\"enum_keys\":{\"ok\":[1]}}\n");
    }

    @Test
    void mapWithOtherKeysIsAnArrayOfKeyValueObjects() throws Exception {
        assertThat(db.json("SELECT MAP {1: 'a', 2: NULL} ints, MAP {[1]: 2} lists, MAP {}::MAP(INT, INT) empty"))
                .isEqualTo("{\"ints\":[{\"key\":1,\"value\":\"a\"},{\"key\":2,\"value\":null}],"
                        + "\"lists\":[{\"key\":[1],\"value\":2}],\"empty\":[]}\n");
    }

    @Test
    void unionIsTheValueOfItsActiveMember() throws Exception {
        // Two members of the same type check that members are found by type id, not by Arrow type.
        assertThat(db.json("SELECT u FROM (VALUES (union_value(b := 2)::UNION(a INT, b INT, c VARCHAR)), ('x'),"
                + " (NULL), (union_value(a := 7)::UNION(a INT, b INT, c VARCHAR))) t(u)"))
                .isEqualTo("{\"u\":2}\n{\"u\":\"x\"}\n{\"u\":null}\n{\"u\":7}\n");
    }

    @Test
    void nullsInsideListsAndStructsAreJsonNull() throws Exception {
        assertThat(db.json("SELECT [NULL, 1] l, {'a': NULL, 'b': [NULL]} s, [{'x': NULL}, NULL] ls,"
                + " {'inner': NULL::STRUCT(y INT)} nested"))
                .isEqualTo("{\"l\":[null,1],\"s\":{\"a\":null,\"b\":[null]},\"ls\":[{\"x\":null},null],"
                        + "\"nested\":{\"inner\":null}}\n");
    }

    @Test
    void aNestedListOfStructsIsAnArrayOfObjects() throws Exception {
        assertThat(db.json("SELECT [{'name': 'a', 'tags': ['x', 'y'], 'at': DATE '2020-01-31'},"
                + " {'name': 'b', 'tags': [], 'at': NULL}] items"))
                .isEqualTo("{\"items\":[{\"name\":\"a\",\"tags\":[\"x\",\"y\"],\"at\":\"2020-01-31\"},"
                        + "{\"name\":\"b\",\"tags\":[],\"at\":null}]}\n");
    }

    @Test
    void everyBatchIsWrittenWhenTheResultSpansManyBatches() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        long rows;
        int batches = 0;
        try (Statement statement = db.connection.createStatement();
                ResultSet rs = statement.executeQuery(
                        "SELECT i, 'row' || i s, [i, NULL] l FROM range(10000) t(i) ORDER BY i");
                ArrowReader reader = ArrowExport.export(rs, db.allocator, 1000)) {
            JsonLinesWriter writer = new JsonLinesWriter(out);
            rows = 0;
            while (reader.loadNextBatch()) {
                batches++;
                rows += writer.write(reader.getVectorSchemaRoot(), reader);
            }
            writer.flush();
        }
        assertThat(batches).isGreaterThan(1);
        assertThat(rows).isEqualTo(10000);
        String expected = IntStream.range(0, 10000)
                .mapToObj(i -> "{\"i\":" + i + ",\"s\":\"row" + i + "\",\"l\":[" + i + ",null]}\n")
                .collect(Collectors.joining());
        assertThat(out.toString(UTF_8)).isEqualTo(expected);
    }

    @Test
    void anEmptyResultWritesNothing() throws Exception {
        assertThat(db.json("SELECT 1 a, 'x' b WHERE false")).isEmpty();
    }

    @Test
    void oneWriterFollowsTheSchemaOfEachReader() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        JsonLinesWriter writer = new JsonLinesWriter(out);
        for (String sql : List.of("SELECT 1 a", "SELECT 'x' b, 2 c", "SELECT 1 a")) {
            try (Statement statement = db.connection.createStatement();
                    ResultSet rs = statement.executeQuery(sql);
                    ArrowReader reader = ArrowExport.export(rs, db.allocator, 1024)) {
                assertThat(writer.writeAll(reader)).isEqualTo(1);
            }
        }
        assertThat(out.toString(UTF_8)).isEqualTo("{\"a\":1}\n{\"b\":\"x\",\"c\":2}\n{\"a\":1}\n");
    }

    @Test
    void anUnsupportedTypeFailsBeforeAnyRowNamingTheColumnAndTheArrowType() throws Exception {
        // DuckDB produces no run-end encoded arrays; a hand-built one stands for any type without an encoder.
        Field runEnds = new Field("run_ends", FieldType.notNullable(new ArrowType.Int(32, true)), null);
        Field values = new Field("values", FieldType.nullable(new ArrowType.Int(32, true)), null);
        Field encoded = new Field("runs", FieldType.nullable(ArrowType.RunEndEncoded.INSTANCE), List.of(runEnds, values));
        Field plain = new Field("fine", FieldType.nullable(new ArrowType.Int(32, true)), null);
        try (VectorSchemaRoot root = VectorSchemaRoot.create(new Schema(List.of(plain, encoded)), db.allocator)) {
            assertThat(root.getVector("runs")).isInstanceOf(RunEndEncodedVector.class);
            IntVector fine = (IntVector) root.getVector("fine");
            fine.allocateNew(1);
            fine.set(0, 1);
            root.setRowCount(1);
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            JsonLinesWriter writer = new JsonLinesWriter(out);
            assertThatThrownBy(() -> writer.write(root))
                    .isInstanceOfSatisfying(MallardException.class,
                            e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.SYSTEM_INTERNAL))
                    .hasMessageContaining("\"runs\"")
                    .hasMessageContaining("RunEndEncoded");
            writer.flush();
            assertThat(out.size()).isZero();
        }
    }

    @Test
    void anUnsupportedTypeInsideANestedTypeNamesItsPath() throws Exception {
        Field runEnds = new Field("run_ends", FieldType.notNullable(new ArrowType.Int(32, true)), null);
        Field values = new Field("values", FieldType.nullable(new ArrowType.Int(32, true)), null);
        Field encoded = new Field("inner", FieldType.nullable(ArrowType.RunEndEncoded.INSTANCE), List.of(runEnds, values));
        Field struct = new Field("outer", FieldType.nullable(ArrowType.Struct.INSTANCE), List.of(encoded));
        try (VectorSchemaRoot root = VectorSchemaRoot.create(new Schema(List.of(struct)), db.allocator)) {
            assertThatThrownBy(() -> new JsonLinesWriter(new ByteArrayOutputStream()).write(root))
                    .isInstanceOf(MallardException.class)
                    .hasMessageContaining("\"outer\"")
                    .hasMessageContaining("outer.inner")
                    .hasMessageContaining("RunEndEncoded");
        }
    }

    @Test
    void arrowLayoutsDuckDbDoesNotProduceFollowTheSameRules() throws Exception {
        try (DateMilliVector date = new DateMilliVector("date", db.allocator);
                TimeSecVector time = new TimeSecVector("time", db.allocator);
                IntervalDayVector dayTime = new IntervalDayVector("day_time", db.allocator);
                IntervalYearVector yearMonth = new IntervalYearVector("year_month", db.allocator);
                DurationVector duration = new DurationVector(
                        new Field("duration", FieldType.nullable(new ArrowType.Duration(TimeUnit.MILLISECOND)), null),
                        db.allocator);
                Float2Vector half = new Float2Vector("half", db.allocator);
                FixedSizeBinaryVector fixed = new FixedSizeBinaryVector("fixed", db.allocator, 3)) {
            date.allocateNew(1);
            date.set(0, 18_292L * 86_400_000L);
            time.allocateNew(1);
            time.set(0, 43_201);
            dayTime.allocateNew(1);
            dayTime.set(0, 2, 3_600_500);
            yearMonth.allocateNew(1);
            yearMonth.set(0, 14);
            duration.allocateNew(1);
            duration.set(0, -90_000L);
            half.allocateNew(1);
            half.setWithPossibleTruncate(0, 1.5f);
            fixed.allocateNew(1);
            fixed.set(0, new byte[] {'a', 'b', 'c'});
            List<FieldVector> vectors = List.of(date, time, dayTime, yearMonth, duration, half, fixed);
            vectors.forEach(vector -> vector.setValueCount(1));
            assertThat(write(new VectorSchemaRoot(vectors)))
                    .isEqualTo("{\"date\":\"2020-01-31\",\"time\":\"12:00:01\",\"day_time\":\"P2DT1H0.5S\","
                            + "\"year_month\":\"P1Y2M\",\"duration\":\"PT-1M-30S\",\"half\":1.5,\"fixed\":\"YWJj\"}\n");
        }
    }

    @Test
    void outputIsBufferedUntilFlushAndTheStreamIsNeverClosed() throws Exception {
        boolean[] closed = {false};
        ByteArrayOutputStream out = new ByteArrayOutputStream() {
            @Override
            public void close() {
                closed[0] = true;
            }
        };
        JsonLinesWriter writer = new JsonLinesWriter(out);
        try (Statement statement = db.connection.createStatement();
                ResultSet rs = statement.executeQuery("SELECT 1 a");
                ArrowReader reader = ArrowExport.export(rs, db.allocator, 1024)) {
            assertThat(reader.loadNextBatch()).isTrue();
            assertThat(writer.write(reader.getVectorSchemaRoot(), reader)).isEqualTo(1);
            assertThat(out.size()).isZero();
            writer.flush();
            assertThat(out.toString(UTF_8)).isEqualTo("{\"a\":1}\n");
        }
        assertThat(closed[0]).isFalse();
    }

    @Test
    void aValueLargerThanTheOutputBufferIsWrittenWhole() throws Exception {
        // Larger than the writer's 64 KiB buffer, with escapes late in the text and a multi-byte character.
        String json = db.json("SELECT repeat('x', 200000) || '\"\\' || chr(10) || repeat('é', 10) s,"
                + " repeat('ab', 100000)::BLOB b, i FROM range(3) t(i)");
        String escaped = "x".repeat(200_000) + "\\\"\\\\\\n" + "é".repeat(10);
        String base64 = java.util.Base64.getEncoder().encodeToString("ab".repeat(100_000).getBytes(UTF_8));
        assertThat(json).isEqualTo(IntStream.range(0, 3)
                .mapToObj(i -> "{\"s\":\"" + escaped + "\",\"b\":\"" + base64 + "\",\"i\":" + i + "}\n")
                .collect(Collectors.joining()));
    }

    private String write(VectorSchemaRoot root) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        JsonLinesWriter writer = new JsonLinesWriter(out);
        writer.write(root);
        writer.flush();
        return out.toString(UTF_8);
    }

}
