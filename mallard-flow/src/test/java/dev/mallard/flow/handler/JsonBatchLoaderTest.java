// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.handler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.flow.source.Message;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.duckdb.DuckDBConnection;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class JsonBatchLoaderTest {
    private DuckDBConnection connection;
    private JsonBatchLoader loader;

    @BeforeEach
    void open() throws SQLException {
        connection = (DuckDBConnection) DriverManager.getConnection("jdbc:duckdb:");
        loader = new JsonBatchLoader(connection);
    }

    @AfterEach
    void close() throws SQLException {
        loader.close();
        connection.close();
    }

    private static List<Message> batch(String... lines) {
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < lines.length; i++) {
            messages.add(Message.ofLine("events", i, lines[i].getBytes(StandardCharsets.UTF_8)));
        }
        return messages;
    }

    private void sql(String sql) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    private List<List<Object>> rows(String sql) throws SQLException {
        List<List<Object>> rows = new ArrayList<>();
        try (Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(sql)) {
            int n = result.getMetaData().getColumnCount();
            while (result.next()) {
                Object[] row = new Object[n];
                for (int i = 0; i < n; i++) {
                    row[i] = result.getObject(i + 1);
                }
                rows.add(Arrays.asList(row));
            }
        }
        return rows;
    }

    /** DuckDB's own spelling of a type: it leaves out quotes that a field name does not need. */
    private String canonicalType(String type) throws SQLException {
        return (String) rows("SELECT typeof(CAST(NULL AS " + type + "))").get(0).get(0);
    }

    private long load(String table, String... lines) {
        return loader.load(batch(lines), table, JsonBatchLoader.describe(connection, table));
    }

    @Test
    void structuredBatchLoadsSqlFlowShapedMessages() throws SQLException {
        sql("CREATE TABLE events(ip VARCHAR, event VARCHAR, properties STRUCT(city VARCHAR, country VARCHAR), "
                + "timestamp TIMESTAMPTZ, type VARCHAR, userId VARCHAR)");
        long rows = load("events",
                "{\"ip\":\"1.2.3.4\",\"event\":\"search\",\"properties\":{\"city\":\"New York\",\"country\":\"US\"},"
                        + "\"timestamp\":\"2024-01-01T00:00:00Z\",\"type\":\"track\",\"userId\":\"u123\"}");
        assertThat(rows).isEqualTo(1);
        assertThat(rows("SELECT ip, event, properties.city, properties.country, type, userId FROM events"))
                .containsExactly(List.of("1.2.3.4", "search", "New York", "US", "track", "u123"));
        assertThat(rows("SELECT timestamp FROM events").get(0).get(0)).isInstanceOf(OffsetDateTime.class)
                .satisfies(t -> assertThat(((OffsetDateTime) t).toInstant())
                        .isEqualTo(OffsetDateTime.of(2024, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC).toInstant()));
    }

    @Test
    void describeReadsTheDeclaredColumnsInOrder() throws SQLException {
        sql("CREATE TABLE t(\"Mixed Case\" INTEGER, p STRUCT(\"a b\" VARCHAR), l BIGINT[], ts TIMESTAMPTZ)");
        assertThat(JsonBatchLoader.describe(connection, "t")).containsExactly(
                new Column("Mixed Case", "INTEGER"), new Column("p", "STRUCT(\"a b\" VARCHAR)"),
                new Column("l", "BIGINT[]"), new Column("ts", "TIMESTAMP WITH TIME ZONE"));
    }

    @Test
    void describeOfAMissingTableNamesIt() {
        MallardException e = catchThrowableOfType(MallardException.class, () -> JsonBatchLoader.describe(connection, "nope"));
        assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_HANDLER_SQL_FAILED);
        assertThat(e.getMessage()).contains("\"nope\"");
    }

    @Test
    void missingFieldAndExplicitNullAreTheSameValue() throws SQLException {
        sql("CREATE TABLE t(s VARCHAR, n BIGINT, p STRUCT(a BIGINT), l BIGINT[], j JSON)");
        load("t", "{\"s\":null,\"n\":null,\"p\":null,\"l\":null,\"j\":null}", "{}");
        assertThat(rows("SELECT s IS NULL, n IS NULL, p IS NULL, l IS NULL, j IS NULL FROM t"))
                .containsExactly(List.of(true, true, true, true, true), List.of(true, true, true, true, true));
    }

    @Test
    void missingNestedKeysBecomeNull() throws SQLException {
        sql("CREATE TABLE t(p STRUCT(a BIGINT, b VARCHAR, c STRUCT(d DOUBLE)))");
        load("t", "{\"p\":{\"a\":1}}", "{\"p\":{\"c\":{}}}");
        assertThat(rows("SELECT p.a, p.b, p.c.d FROM t")).containsExactly(Arrays.asList(1L, null, null),
                Arrays.asList(null, null, null));
    }

    @Test
    void keysTheTableDoesNotHaveAreIgnored() throws SQLException {
        sql("CREATE TABLE t(a BIGINT, p STRUCT(x BIGINT))");
        load("t", "{\"a\":1,\"extra\":[1,2],\"p\":{\"x\":2,\"y\":\"z\"}}");
        assertThat(rows("SELECT a, p.x FROM t")).containsExactly(List.of(1L, 2L));
    }

    @Test
    void blankLinesAreSkipped() throws SQLException {
        sql("CREATE TABLE t(a BIGINT)");
        long rows = load("t", "", "{\"a\":1}", "  \t", "\n", "{\"a\":2}");
        assertThat(rows).isEqualTo(2);
        assertThat(rows("SELECT a FROM t")).containsExactly(List.of(1L), List.of(2L));
    }

    @Test
    void escapesAreDecoded() throws SQLException {
        sql("CREATE TABLE t(s VARCHAR, p STRUCT(s VARCHAR), l VARCHAR[])");
        load("t", "{\"s\":\"a\\nb\\u00e9\\\"q\\\"\\\\\\ud83d\\ude00\",\"p\":{\"s\":\"c\\td\\u00e9\"},\"l\":[\"x\\ny\"]}");
        assertThat(rows("SELECT s, p.s, l[1] FROM t")).containsExactly(List.of("a\nbé\"q\"\\😀", "c\tdé", "x\ny"));
    }

    @Test
    void rawUtf8IsKept() throws SQLException {
        sql("CREATE TABLE t(s VARCHAR)");
        load("t", "{\"s\":\"Zürich 東京\"}");
        assertThat(rows("SELECT s FROM t")).containsExactly(List.of("Zürich 東京"));
    }

    @Test
    void objectOrNumberArrivingAtAVarcharColumnKeepsItsJsonText() throws SQLException {
        sql("CREATE TABLE t(s VARCHAR, p STRUCT(s VARCHAR))");
        load("t", "{\"s\":{\"a\":[1,true]},\"p\":{\"s\":{\"b\":null}}}", "{\"s\":42,\"p\":{\"s\":1.5}}", "{\"s\":true}");
        assertThat(rows("SELECT s, p.s FROM t")).containsExactly(List.of("{\"a\":[1,true]}", "{\"b\":null}"),
                List.of("42", "1.5"), Arrays.asList("true", null));
    }

    @Test
    void timestampWithZoneIsCastFromAnIsoString() throws SQLException {
        sql("CREATE TABLE t(ts TIMESTAMPTZ, d DATE)");
        load("t", "{\"ts\":\"2020-01-01T00:00:00Z\",\"d\":\"2020-02-03\"}");
        assertThat(rows("SELECT epoch(ts)::BIGINT, d::VARCHAR FROM t")).containsExactly(List.of(1577836800L, "2020-02-03"));
    }

    @Test
    void loadAppendsAndLeavesTruncatingToTheCaller() throws SQLException {
        sql("CREATE TABLE t(a BIGINT)");
        load("t", "{\"a\":1}");
        load("t", "{\"a\":2}");
        assertThat(rows("SELECT a FROM t ORDER BY a")).containsExactly(List.of(1L), List.of(2L));
    }

    @Test
    void wrongTypeInStructuredTableNamesTheMessage() throws SQLException {
        sql("CREATE TABLE t(a VARCHAR, n INTEGER)");
        BadMessagesException e = catchThrowableOfType(BadMessagesException.class,
                () -> load("t", "{\"a\":\"x\",\"n\":1}", "{\"a\":\"y\",\"n\":\"abc\"}"));
        assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_HANDLER_PARSE_FAILED);
        assertThat(e.getMessage()).contains("events line 2").contains("\"n\"").contains("Could not convert string 'abc'")
                .contains("table \"t\"");
        assertThat(e.badMessages()).singleElement().satisfies(bad -> {
            assertThat(bad.index()).isEqualTo(1);
            assertThat(bad.where()).isEqualTo("events line 2");
            assertThat(bad.column()).isEqualTo("n");
            assertThat(bad.error()).contains("Conversion Error: Could not convert string 'abc' to INT32");
        });
        assertThat(rows("SELECT count(*) FROM t")).containsExactly(List.of(0L));
    }

    @Test
    void everyBadMessageIsListedSoTheRestCanBeLoaded() throws SQLException {
        sql("CREATE TABLE t(n BIGINT)");
        List<Message> messages = batch("{\"n\":1}", "{\"n\":\"x\"}", "{\"n\":3}", "[1]", "{\"n\":5}", "{\"n\":", "");
        List<Column> columns = JsonBatchLoader.describe(connection, "t");
        BadMessagesException e = catchThrowableOfType(BadMessagesException.class, () -> loader.load(messages, "t", columns));
        assertThat(e.badMessages()).extracting(BadMessage::index).containsExactly(1, 3, 5);
        assertThat(e.badMessages()).extracting(BadMessage::column).containsExactly("n", null, null);
        assertThat(e.getMessage()).startsWith("3 messages do not fit table \"t\"");

        // What an on_error: IGNORE policy will do: drop the bad ones and load the rest.
        List<Message> good = new ArrayList<>(messages);
        e.badMessages().reversed().forEach(bad -> good.remove(bad.index()));
        assertThat(loader.load(good, "t", columns)).isEqualTo(3);
        assertThat(rows("SELECT n FROM t")).containsExactly(List.of(1L), List.of(3L), List.of(5L));
    }

    @Test
    void messageThatIsNotJsonNamesItsPosition() throws SQLException {
        sql("CREATE TABLE t(n BIGINT)");
        BadMessagesException e = catchThrowableOfType(BadMessagesException.class,
                () -> load("t", "{\"n\":1}", "hello", "{\"n\":2"));
        assertThat(e.badMessages()).extracting(BadMessage::where).containsExactly("events line 2", "events line 3");
        assertThat(e.badMessages().get(0).error()).contains("not a JSON object");
        assertThat(e.badMessages().get(1).error()).contains("not valid JSON").contains("Malformed JSON");
        assertThat(e.getMessage()).contains("events line 2").contains("events line 3");
    }

    @Test
    void topLevelArrayOrScalarIsABadMessage() throws SQLException {
        sql("CREATE TABLE t(n BIGINT)");
        BadMessagesException e = catchThrowableOfType(BadMessagesException.class, () -> load("t", "[{\"n\":1}]", " 5"));
        assertThat(e.badMessages()).extracting(BadMessage::index).containsExactly(0, 1);
    }

    @Test
    void invalidUtf8IsABadMessageRatherThanASilentLoss() throws SQLException {
        sql("CREATE TABLE t(s VARCHAR)");
        List<Message> messages = List.of(
                Message.ofLine("f", 0, "{\"s\":\"ok\"}".getBytes(StandardCharsets.UTF_8)),
                Message.ofLine("f", 1, new byte[] {'{', '"', 's', '"', ':', '"', (byte) 0xC3, '"', '}'}));
        BadMessagesException e = catchThrowableOfType(BadMessagesException.class,
                () -> loader.load(messages, "t", JsonBatchLoader.describe(connection, "t")));
        assertThat(e.badMessages()).singleElement().satisfies(bad -> {
            assertThat(bad.where()).isEqualTo("f line 2");
            assertThat(bad.error()).contains("UTF-8");
        });
    }

    @Test
    void aWhereFunctionNamesMessagesByLine() throws SQLException {
        sql("CREATE TABLE t(n BIGINT)");
        try (JsonBatchLoader byLine = new JsonBatchLoader(connection, m -> "line " + (m.offset() + 1), RecordColumns.NONE)) {
            BadMessagesException e = catchThrowableOfType(BadMessagesException.class,
                    () -> byLine.load(batch("{\"n\":1}", "{\"n\":2}", "{\"n\":\"q\"}"), "t",
                            JsonBatchLoader.describe(connection, "t")));
            assertThat(e.getMessage()).contains("line 3, column \"n\"");
            assertThat(e.badMessages()).extracting(BadMessage::where).containsExactly("line 3");
        }
    }

    @Test
    void constraintViolationIsNotBlamedOnAMessage() throws SQLException {
        sql("CREATE TABLE t(n BIGINT NOT NULL)");
        MallardException e = catchThrowableOfType(MallardException.class, () -> load("t", "{\"n\":1}", "{}"));
        assertThat(e).isNotInstanceOf(BadMessagesException.class);
        assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_HANDLER_SQL_FAILED);
        assertThat(e.getMessage()).contains("table \"t\"").contains("NOT NULL");
    }

    @Test
    void anErrorOfTheStatementIsNotBlamedOnTheMessages() {
        MallardException e = catchThrowableOfType(MallardException.class,
                () -> loader.load(batch("{\"a\":1}"), "missing_table", List.of(new Column("a", "BIGINT"))));
        assertThat(e).isNotInstanceOf(BadMessagesException.class);
        assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_HANDLER_SQL_FAILED);
        assertThat(e.getMessage()).contains("\"missing_table\"").contains("Catalog Error");
    }

    @Test
    void identifiersAndKeysWithSpacesQuotesDotsAndMixedCaseAreQuoted() throws SQLException {
        sql("CREATE TABLE \"My \"\"Table\"\"\"(\"a b\" BIGINT, \"q\"\"t\" VARCHAR, \"MixedCase\" BIGINT, \"x.y\" BIGINT, "
                + "\"s/l~\" BIGINT, \"it's\" VARCHAR, \"*\" BIGINT)");
        List<Column> columns = JsonBatchLoader.describe(connection, "My \"Table\"");
        loader.load(batch("{\"a b\":1,\"q\\\"t\":\"v\",\"MixedCase\":3,\"x.y\":4,\"s/l~\":5,\"it's\":\"o'k\",\"*\":7,"
                + "\"x\":{\"y\":99}}"), "My \"Table\"", columns);
        assertThat(rows("SELECT * FROM \"My \"\"Table\"\"\"")).containsExactly(List.of(1L, "v", 3L, 4L, 5L, "o'k", 7L));
    }

    @Test
    void nestedFieldNamesWithQuotesAndSpacesLoad() throws SQLException {
        sql("CREATE TABLE t(p STRUCT(\"a b\" BIGINT, \"q\"\"t\" VARCHAR, \"it's\" BIGINT)[])");
        load("t", "{\"p\":[{\"a b\":1,\"q\\\"t\":\"v\",\"it's\":2}]}");
        assertThat(rows("SELECT p[1].\"a b\", p[1].\"q\"\"t\", p[1].\"it's\" FROM t")).containsExactly(List.of(1L, "v", 2L));
    }

    @Test
    void columnsMayBeASubsetOfTheTable() throws SQLException {
        sql("CREATE TABLE t(a BIGINT, b VARCHAR DEFAULT 'dflt')");
        loader.load(batch("{\"a\":1,\"b\":\"x\"}"), "t", List.of(new Column("a", "BIGINT")));
        assertThat(rows("SELECT a, b FROM t")).containsExactly(List.of(1L, "dflt"));
    }

    /**
     * Pins a limit of DuckDB's json_transform, which STRUCT and list columns use so that missing nested keys
     * load as NULL: it also turns a nested value of the wrong type into NULL instead of failing.
     */
    @Test
    void nestedValueOfTheWrongTypeInADeclaredStructBecomesNull() throws SQLException {
        sql("CREATE TABLE t(p STRUCT(n BIGINT))");
        load("t", "{\"p\":{\"n\":\"abc\"}}");
        assertThat(rows("SELECT p.n FROM t")).containsExactly(Arrays.asList((Object) null));
    }

    @Test
    void createAndLoadCreatesTheInferredTypesAndValues() throws SQLException {
        List<Message> messages = batch(
                "{\"s\":\"x\",\"i\":1,\"d\":1,\"h\":1,\"b\":true,\"j\":null,\"p\":{\"c\":\"NY\"},\"l\":[1],\"e\":[],\"o\":{},"
                        + "\"ls\":[{\"a\":1}]}",
                "{\"s\":null,\"i\":2,\"d\":2.5,\"h\":170141183460469231731687303715884105727,\"p\":{\"z\":1},"
                        + "\"l\":[null,2],\"ls\":[{\"b\":\"q\"}]}");
        SchemaInference inference = new SchemaInference();
        messages.forEach(m -> inference.add(m.value(), m.position()));
        List<Column> columns = inference.columns();
        assertThat(loader.createAndLoad(messages, "batch", columns)).isEqualTo(2);
        List<Column> canonical = new ArrayList<>();
        for (Column column : columns) {
            canonical.add(new Column(column.name(), canonicalType(column.type())));
        }
        assertThat(JsonBatchLoader.describe(connection, "batch")).isEqualTo(canonical);
        assertThat(columns).extracting(Column::type).containsExactly("VARCHAR", "BIGINT", "DOUBLE", "HUGEINT", "BOOLEAN",
                "JSON", "STRUCT(\"c\" VARCHAR, \"z\" BIGINT)", "BIGINT[]", "JSON[]", "JSON",
                "STRUCT(\"a\" BIGINT, \"b\" VARCHAR)[]");
        assertThat(rows("SELECT s, i, d, h, b, j, p.c, p.z, l::VARCHAR, ls[1].a, ls[1].b FROM batch")).containsExactly(
                Arrays.asList("x", 1L, 1.0, BigInteger.ONE, true, null, "NY", null, "[1]", 1L, null),
                Arrays.asList(null, 2L, 2.5, new BigInteger("170141183460469231731687303715884105727"), null, null,
                        null, 1L, "[NULL, 2]", null, "q"));
    }

    @Test
    void createAndLoadReplacesTheTableOfThePreviousBatch() throws SQLException {
        loader.createAndLoad(batch("{\"a\":1}", "{\"a\":2}"), "batch", List.of(new Column("a", "BIGINT")));
        loader.createAndLoad(batch("{\"b\":\"x\"}"), "batch", List.of(new Column("b", "VARCHAR")));
        assertThat(rows("SELECT * FROM batch")).containsExactly(List.of("x"));
    }

    @Test
    void createAndLoadOfAnEmptyBatchMakesAnEmptyTable() throws SQLException {
        assertThat(loader.createAndLoad(batch("", " "), "batch", List.of(new Column("a", "BIGINT")))).isZero();
        assertThat(rows("SELECT count(*) FROM batch")).containsExactly(List.of(0L));
    }

    @Test
    void createAndLoadWithoutColumnsExplainsWhy() {
        MallardException e = catchThrowableOfType(MallardException.class,
                () -> loader.createAndLoad(batch("{}"), "batch", List.of()));
        assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_HANDLER_PARSE_FAILED);
        assertThat(e.getMessage()).contains("empty object").contains("handlers.StructuredBatch");
    }

    @Test
    void createAndLoadFailureKeepsThePreviousTable() throws SQLException {
        loader.createAndLoad(batch("{\"a\":1}"), "batch", List.of(new Column("a", "BIGINT")));
        BadMessagesException e = catchThrowableOfType(BadMessagesException.class,
                () -> loader.createAndLoad(batch("{\"a\":\"x\"}"), "batch", List.of(new Column("a", "BIGINT"))));
        assertThat(e.badMessages()).extracting(BadMessage::column).containsExactly("a");
        assertThat(rows("SELECT a FROM batch")).containsExactly(List.of(1L));
    }

    @Test
    void twoLoadersOnOneConnectionTakeTurns() throws SQLException {
        try (JsonBatchLoader other = new JsonBatchLoader(connection)) {
            sql("CREATE TABLE t(a BIGINT)");
            load("t", "{\"a\":1}");
            other.load(batch("{\"a\":2}"), "t", JsonBatchLoader.describe(connection, "t"));
            load("t", "{\"a\":3}");
        }
        assertThat(rows("SELECT a FROM t")).containsExactly(List.of(1L), List.of(2L), List.of(3L));
    }

    @Test
    void noViewIsLeftBehindAfterABatch() throws SQLException {
        sql("CREATE TABLE t(a BIGINT)");
        load("t", "{\"a\":1}");
        catchThrowableOfType(BadMessagesException.class, () -> load("t", "{\"a\":\"x\"}"));
        assertThat(rows("SELECT count(*) FROM duckdb_views() WHERE view_name LIKE '%mallard%'")).containsExactly(List.of(0L));
    }

    @Test
    void jsonColumnKeepsJsonNextToTypedColumns() throws SQLException {
        sql("CREATE TABLE t(s VARCHAR, j JSON, n BIGINT)");
        load("t", "{\"s\":\"a\",\"j\":\"b\",\"n\":1}", "{\"s\":{\"x\":1},\"j\":{\"x\":[1,null]},\"n\":2}",
                "{\"j\":3.5}");
        assertThat(rows("SELECT s, j::VARCHAR, n FROM t")).containsExactly(List.of("a", "\"b\"", 1L),
                List.of("{\"x\":1}", "{\"x\":[1,null]}", 2L), Arrays.asList(null, "3.5", null));
    }

    @Test
    void scalarCastsAreStrict() throws SQLException {
        sql("CREATE TABLE t(n BIGINT, b BOOLEAN, d DOUBLE, ts TIMESTAMPTZ)");
        for (String bad : List.of("{\"n\":\"abc\"}", "{\"n\":true}", "{\"n\":{\"x\":1}}", "{\"b\":\"maybe\"}",
                "{\"d\":[1]}", "{\"ts\":\"yesterday\"}", "{\"n\":9223372036854775808}")) {
            BadMessagesException e = catchThrowableOfType(BadMessagesException.class, () -> load("t", bad));
            assertThat(e).as(bad).isNotNull();
            assertThat(e.badMessages()).as(bad).singleElement().extracting(BadMessage::column).isNotNull();
        }
        load("t", "{\"n\":\"12\",\"b\":true,\"d\":1,\"ts\":\"2024-01-01 10:00:00+02\"}");
        assertThat(rows("SELECT n, b, d, epoch(ts)::BIGINT FROM t")).containsExactly(List.of(12L, true, 1.0, 1704096000L));
    }
}
