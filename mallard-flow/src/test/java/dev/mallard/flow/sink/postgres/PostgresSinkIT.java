// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.ExitCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.flow.sink.ResultTable;
import dev.mallard.flow.sink.RetryingSink;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.duckdb.DuckDBConnection;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The Postgres sink against a real server (see {@link PostgresTestDatabase} for where it is). */
class PostgresSinkIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    private PostgresTestDatabase postgres;
    private DuckDBConnection duckDb;
    private BufferAllocator allocator;
    private int results;

    @BeforeEach
    void open() throws SQLException {
        postgres = PostgresTestDatabase.require();
        duckDb = (DuckDBConnection) DriverManager.getConnection("jdbc:duckdb:");
        allocator = new RootAllocator();
    }

    @AfterEach
    void close() throws SQLException {
        if (duckDb != null) {
            duckDb.close();
        }
        if (allocator != null) {
            allocator.close();
        }
    }

    private ResultTable result(String select) throws SQLException {
        String name = "result_" + results++;
        try (Statement statement = duckDb.createStatement()) {
            statement.execute("CREATE TEMP TABLE " + name + " AS " + select);
            try (var count = statement.executeQuery("SELECT count(*) FROM " + name)) {
                count.next();
                return new ResultTable(duckDb, name, count.getLong(1));
            }
        }
    }

    private PostgresSink sink(String block) throws Exception {
        JsonNode settings = JSON.readTree(block);
        return new PostgresSink(PostgresSink.Settings.of(settings, JSON.readTree("{}")), allocator);
    }

    private String block(String table, String mode, String key) {
        return "{\"dsn\":\"" + postgres.dsn() + "\",\"table\":\"" + table + "\",\"mode\":\"" + mode + "\"" + (key == null ? "" : ",\"key\":" + key) + "}";
    }

    private static void deliver(PostgresSink sink, ResultTable batch) {
        sink.write(batch);
        sink.flush();
    }

    @Test
    void appendWritesEachDuckDbTypeAsThePostgresTypeOfItsColumn() throws Exception {
        String table = PostgresTestDatabase.uniqueTable("types");
        postgres.execute("CREATE TABLE " + table + " (i int, b bigint, h numeric, d double precision, m numeric(38,9), ok boolean, "
                + "t text, on_day date, ts timestamp, tz timestamptz, s jsonb, mp json, l int[], words text[], grid int[][], raw bytea, nothing int)");
        try (PostgresSink sink = sink(block(table, "append", null))) {
            deliver(sink, result("""
                    SELECT 42::INTEGER i, 9007199254740993::BIGINT b, 170141183460469231731687303715884105727::HUGEINT h,
                           0.1::DOUBLE d, 12345678901234567890.123456789::DECIMAL(38,9) m, true ok,
                           E'tab\\there\\nnew line \\\\ back "quoted"' t, DATE '2024-02-29' on_day,
                           TIMESTAMP '2015-12-12 19:11:01.249' ts, TIMESTAMPTZ '2015-12-12 21:11:01.249+02' tz,
                           {'city': 'New York', 'n': [1, 2]} s, MAP {'k': 1} mp, [1, NULL, 3] l,
                           ['a,b', 'say "hi"', NULL, 'back\\slash', ''] words, [[1, 2], [3, 4]] grid, 'ab'::BLOB raw, NULL::INTEGER nothing
                    """));
        }
        assertThat(postgres.rows("SELECT i, b, h, d, m, ok, t, on_day, ts, (tz AT TIME ZONE 'UTC')::text, s, mp, l, words, grid, raw, nothing FROM " + table))
                .containsExactly(String.join("|", "42", "9007199254740993", "170141183460469231731687303715884105727", "0.1",
                        "12345678901234567890.123456789", "t", "tab\there\nnew line \\ back \"quoted\"", "2024-02-29",
                        "2015-12-12 19:11:01.249", "2015-12-12 19:11:01.249", "{\"n\": [1, 2], \"city\": \"New York\"}", "{\"k\":1}",
                        "{1,NULL,3}", "{\"a,b\",\"say \\\"hi\\\"\",NULL,\"back\\\\slash\",\"\"}", "{{1,2},{3,4}}", "\\x6162", "null"));
    }

    /** Values longer than the writer's buffers, escapes on either side of a chunk's end, arrive byte for byte. */
    @Test
    void longValuesWithEscapesArriveIntact() throws Exception {
        String table = PostgresTestDatabase.uniqueTable("long");
        postgres.execute("CREATE TABLE " + table + " (n int, t text)");
        String value = "repeat(E'ab\\tc\\r\\n\\\\d', 40000 + n) || n::VARCHAR";
        ResultTable batch = result("SELECT n, " + value + " AS t FROM range(3) r(n)");
        List<String> expected = new java.util.ArrayList<>();
        try (Statement statement = duckDb.createStatement(); var md5 = statement.executeQuery("SELECT n, md5(t) FROM " + batch.name() + " ORDER BY n")) {
            while (md5.next()) {
                expected.add(md5.getInt(1) + "|" + md5.getString(2));
            }
        }
        try (PostgresSink sink = sink(block(table, "append", null))) {
            deliver(sink, batch);
        }
        assertThat(postgres.rows("SELECT n, md5(t) FROM " + table + " ORDER BY n")).hasSize(3).containsExactlyElementsOf(expected);
        assertThat(postgres.rows("SELECT length(t) FROM " + table + " ORDER BY n")).containsExactly("320001", "320009", "320017");
    }

    @Test
    void appendAddsEveryRowOfEveryBatch() throws Exception {
        String table = PostgresTestDatabase.uniqueTable("append");
        postgres.execute("CREATE TABLE " + table + " (n bigint, label text)");
        try (PostgresSink sink = sink(block(table, "append", null))) {
            deliver(sink, result("SELECT range AS n, 'row ' || range AS label FROM range(10000)"));
            deliver(sink, result("SELECT range AS n, 'row ' || range AS label FROM range(10000, 10005)"));
        }
        assertThat(postgres.rows("SELECT count(*), count(DISTINCT n), max(n) FROM " + table)).containsExactly("10005|10005|10004");
    }

    @Test
    void aReplayedBatchLeavesAnUpsertTableAsIfDeliveredOnce() throws Exception {
        String table = PostgresTestDatabase.uniqueTable("upsert");
        postgres.execute("CREATE TABLE " + table + " (city text PRIMARY KEY, total bigint, updated text)");
        try (PostgresSink sink = sink(block(table, "upsert", "[\"city\"]"))) {
            deliver(sink, result("SELECT * FROM (VALUES ('New York', 1, 'a'), ('Baltimore', 2, 'a')) v(city, total, updated)"));
            ResultTable second = result("SELECT * FROM (VALUES ('New York', 5, 'b'), ('Columbus', 1, 'b')) v(city, total, updated)");
            deliver(sink, second);
            List<String> once = postgres.rows("SELECT * FROM " + table + " ORDER BY city");
            deliver(sink, second);
            assertThat(postgres.rows("SELECT * FROM " + table + " ORDER BY city")).isEqualTo(once)
                    .containsExactly("Baltimore|2|a", "Columbus|1|b", "New York|5|b");
        }
    }

    @Test
    void aReplayedUpsertBatchRewritesNoRowEvenWithJsonColumns() throws Exception {
        String table = PostgresTestDatabase.uniqueTable("replay");
        postgres.execute("CREATE TABLE " + table + " (id int PRIMARY KEY, doc json, tags jsonb, total numeric)");
        try (PostgresSink sink = sink(block(table, "upsert", "[\"id\"]"))) {
            ResultTable batch = result("SELECT range::INTEGER AS id, {'n': range} AS doc, ['a', 'b'] AS tags, 1.5 AS total FROM range(3)");
            deliver(sink, batch);
            List<String> versions = postgres.rows("SELECT id, xmin FROM " + table + " ORDER BY id");
            deliver(sink, batch);
            assertThat(postgres.rows("SELECT id, xmin FROM " + table + " ORDER BY id")).as("row versions").isEqualTo(versions);
            deliver(sink, result("SELECT 1 AS id, {'n': 7} AS doc, ['a', 'b'] AS tags, 1.5 AS total"));
            assertThat(postgres.rows("SELECT id, doc::text FROM " + table + " ORDER BY id")).containsExactly("0|{\"n\":0}", "1|{\"n\":7}", "2|{\"n\":2}");
        }
    }

    @Test
    void aKeyRepeatedWithinOneBatchEndsAsItsLastRow() throws Exception {
        String table = PostgresTestDatabase.uniqueTable("repeat");
        postgres.execute("CREATE TABLE " + table + " (a int, b text, v int, PRIMARY KEY (a, b))");
        try (PostgresSink sink = sink(block(table, "upsert", "[\"a\", \"b\"]"))) {
            deliver(sink, result("SELECT * FROM (VALUES (1, 'x', 1), (2, 'x', 1), (1, 'x', 2), (1, 'x', 3)) v(a, b, v)"));
        }
        assertThat(postgres.rows("SELECT * FROM " + table + " ORDER BY a")).containsExactly("1|x|3", "2|x|1");
    }

    /** The staging table outlives a batch: a batch's columns may differ from the last one's, in either mode. */
    @Test
    void batchesWithDifferentColumnsLoadInOneSession() throws Exception {
        String table = PostgresTestDatabase.uniqueTable("columns");
        postgres.execute("CREATE TABLE " + table + " (id int PRIMARY KEY, city text, total int)");
        try (PostgresSink sink = sink(block(table, "upsert", "[\"id\"]"))) {
            deliver(sink, result("SELECT * FROM (VALUES (1, 'a', 10), (2, 'b', 20)) v(id, city, total)"));
            deliver(sink, result("SELECT * FROM (VALUES (2, 21), (3, 30)) v(id, total)"));
            deliver(sink, result("SELECT * FROM (VALUES (3, 'c', 31)) v(id, city, total)"));
        }
        assertThat(postgres.rows("SELECT * FROM " + table + " ORDER BY id")).containsExactly("1|a|10", "2|b|21", "3|c|31");
        String appended = PostgresTestDatabase.uniqueTable("columns_append");
        postgres.execute("CREATE TABLE " + appended + " (city text, total int)");
        try (PostgresSink sink = sink(block(appended, "append", null))) {
            deliver(sink, result("SELECT 'a' AS city, 1 AS total"));
            deliver(sink, result("SELECT 2 AS total"));
            deliver(sink, result("SELECT 'c' AS city"));
        }
        assertThat(postgres.rows("SELECT coalesce(city, '-'), coalesce(total, -1) FROM " + appended + " ORDER BY 1, 2"))
                .containsExactly("-|2", "a|1", "c|-1");
    }

    /** Two writes before one flush are one transaction: the second starts on an empty staging table. */
    @Test
    void twoWritesBeforeAFlushCommitTogetherAndTheLaterWins() throws Exception {
        String table = PostgresTestDatabase.uniqueTable("twowrites");
        postgres.execute("CREATE TABLE " + table + " (id int PRIMARY KEY, v int)");
        try (PostgresSink sink = sink(block(table, "upsert", "[\"id\"]"))) {
            sink.write(result("SELECT * FROM (VALUES (1, 1), (2, 1)) v(id, v)"));
            sink.write(result("SELECT * FROM (VALUES (2, 2), (2, 3)) v(id, v)"));
            assertThat(postgres.rows("SELECT count(*) FROM " + table)).as("nothing is visible before the flush").containsExactly("0");
            sink.flush();
        }
        assertThat(postgres.rows("SELECT * FROM " + table + " ORDER BY id")).containsExactly("1|1", "2|3");
    }

    /**
     * A load that fails after its COPY is rolled back, leaving the staging table's pages behind; the next batch
     * still starts on an empty table, so its repeated keys end as their last row.
     */
    @Test
    void afterAFailedUpsertTheNextBatchStillKeepsTheLastRowOfARepeatedKey() throws Exception {
        String table = PostgresTestDatabase.uniqueTable("afterfail");
        postgres.execute("CREATE TABLE " + table + " (id int PRIMARY KEY, v int NOT NULL)");
        try (PostgresSink sink = sink(block(table, "upsert", "[\"id\"]"))) {
            deliver(sink, result("SELECT 1 AS id, 1 AS v"));
            // The staging table has no NOT NULL: the COPY succeeds, the upsert fails.
            assertThatThrownBy(() -> deliver(sink, result("SELECT range::INT AS id, CASE WHEN range = 999 THEN NULL ELSE 5 END AS v FROM range(1000)")))
                    .isInstanceOfSatisfying(MallardException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.SYSTEM_SINK_WRITE_FAILED))
                    .hasMessageContaining("column v");
            deliver(sink, result("SELECT range::INT % 10 AS id, range::INT AS v FROM range(1000)"));
        }
        assertThat(postgres.rows("SELECT id, v FROM " + table + " ORDER BY id")).containsExactly(
                "0|990", "1|991", "2|992", "3|993", "4|994", "5|995", "6|996", "7|997", "8|998", "9|999");
    }

    /**
     * Append into a view goes through the staging table and INSERT (COPY cannot fill a view); two writes before
     * one flush insert each row once, as the second starts on an emptied staging table.
     */
    @Test
    void appendIntoAnUpdatableViewInsertsEachRowOnce() throws Exception {
        String table = PostgresTestDatabase.uniqueTable("viewbase");
        postgres.execute("CREATE TABLE " + table + " (city text, total int)");
        postgres.execute("CREATE VIEW " + table + "_v AS SELECT city, total FROM " + table);
        try (PostgresSink sink = sink(block(table + "_v", "append", null))) {
            deliver(sink, result("SELECT * FROM (VALUES ('a', 1), ('b', 2)) v(city, total)"));
            sink.write(result("SELECT 'c' AS city, 3 AS total"));
            sink.write(result("SELECT 'd' AS city, 4 AS total"));
            sink.flush();
        }
        assertThat(postgres.rows("SELECT * FROM " + table + " ORDER BY city")).containsExactly("a|1", "b|2", "c|3", "d|4");
    }

    @Test
    void aValuePostgresRefusesFailsTheWholeBatchNamingTheColumn() throws Exception {
        String table = PostgresTestDatabase.uniqueTable("refused");
        postgres.execute("CREATE TABLE " + table + " (city text, amount int)");
        try (PostgresSink sink = sink(block(table, "append", null))) {
            assertThatThrownBy(() -> deliver(sink, result("SELECT * FROM (VALUES ('a', '1'), ('b', 'twelve')) v(city, amount)")))
                    .isInstanceOfSatisfying(MallardException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.SYSTEM_SINK_WRITE_FAILED))
                    .hasMessageContaining("column amount")
                    .hasMessageContaining("twelve");
            assertThat(postgres.rows("SELECT count(*) FROM " + table)).containsExactly("0");
            // The connection is still good for the next batch.
            deliver(sink, result("SELECT 'c' AS city, 3 AS amount"));
        }
        assertThat(postgres.rows("SELECT * FROM " + table)).containsExactly("c|3");
    }

    @Test
    void aNotNullViolationNamesTheColumn() throws Exception {
        String table = PostgresTestDatabase.uniqueTable("notnull");
        postgres.execute("CREATE TABLE " + table + " (city text NOT NULL, amount int)");
        try (PostgresSink sink = sink(block(table, "append", null))) {
            assertThatThrownBy(() -> deliver(sink, result("SELECT NULL::VARCHAR AS city, 1 AS amount")))
                    .isInstanceOfSatisfying(MallardException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.SYSTEM_SINK_WRITE_FAILED))
                    .hasMessageContaining("column city");
        }
    }

    @Test
    void aResultColumnTheTableLacksIsNamed() throws Exception {
        String table = PostgresTestDatabase.uniqueTable("missing");
        postgres.execute("CREATE TABLE " + table + " (city text)");
        try (PostgresSink sink = sink(block(table, "append", null))) {
            assertThatThrownBy(() -> deliver(sink, result("SELECT 'a' AS city, 1 AS population")))
                    .isInstanceOfSatisfying(MallardException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.SYSTEM_SINK_WRITE_FAILED))
                    .hasMessageContaining("population");
        }
    }

    @Test
    void upsertWithoutAUniqueIndexOnTheKeySaysWhatToAdd() throws Exception {
        String table = PostgresTestDatabase.uniqueTable("nokey");
        postgres.execute("CREATE TABLE " + table + " (city text, total int)");
        try (PostgresSink sink = sink(block(table, "upsert", "[\"city\"]"))) {
            assertThatThrownBy(() -> deliver(sink, result("SELECT 'a' AS city, 1 AS total")))
                    .isInstanceOfSatisfying(MallardException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.SYSTEM_SINK_WRITE_FAILED))
                    .hasMessageContaining("unique index or primary key");
        }
    }

    @Test
    void anUnreachableServerIsRetriedAlongTheLadderThenExitsTwelveWithoutThePassword() throws Exception {
        JsonNode settings = JSON.readTree("{\"dsn\":\"postgres://app:hunter2@127.0.0.1:1/test\",\"table\":\"t\"}");
        AtomicInteger retries = new AtomicInteger();
        RetryingSink sink = new RetryingSink(new PostgresSink(PostgresSink.Settings.of(settings, JSON.readTree("{}")), allocator),
                new RetryingSink.Ladder(3, Duration.ofMillis(10), Duration.ofMillis(20), Duration.ofSeconds(10)), retries::incrementAndGet);
        ResultTable batch = result("SELECT 1 AS n");
        assertThatThrownBy(() -> {
            sink.write(batch);
            sink.flush();
        }).isInstanceOfSatisfying(MallardException.class, e -> {
            assertThat(e.errorCode()).isEqualTo(ErrorCode.SYSTEM_SINK_UNREACHABLE);
            assertThat(e.errorCode().exitCode()).isEqualTo(ExitCode.SINK_UNREACHABLE);
            assertThat(e.errorCode().exitCode().code()).isEqualTo(12);
        }).hasMessageContaining("gave up after 3 attempts").hasMessageContaining("127.0.0.1:1/test").hasMessageNotContaining("hunter2");
        assertThat(retries).hasValue(2);
    }

    @Test
    void theDefaultLadderRidesOutAnOutageThatEndsWithinItsTenSecondDeadline() throws Exception {
        // Eight refused connections: the default backoffs before the ninth attempt add up to 3.5-7 s (jittered), inside the
        // documented 10 s deadline (the old default of 4 attempts gave up after about 0.7 s).
        String table = PostgresTestDatabase.uniqueTable("outage");
        postgres.execute("CREATE TABLE " + table + " (n int)");
        int port = java.net.URI.create(postgres.dsn()).getPort();
        try (OutageProxy proxy = new OutageProxy(port, 8)) {
            String dsn = postgres.dsn().replace(":" + port + "/", ":" + proxy.port() + "/");
            JsonNode settings = JSON.readTree("{\"dsn\":\"" + dsn + "\",\"table\":\"" + table + "\"}");
            JsonNode retry = JSON.readTree("{}");
            AtomicInteger retries = new AtomicInteger();
            try (RetryingSink sink = new RetryingSink(new PostgresSink(PostgresSink.Settings.of(settings, retry), allocator),
                    RetryingSink.Ladder.of(retry), retries::incrementAndGet)) {
                sink.write(result("SELECT 7 AS n"));
                sink.flush();
            }
            assertThat(proxy.accepted()).isGreaterThanOrEqualTo(9);
            assertThat(retries.get()).isGreaterThanOrEqualTo(8);
        }
        assertThat(postgres.rows("SELECT n FROM " + table)).containsExactly("7");
    }

    @Test
    void upsertWithoutAKeyIsRefusedAtStartup() {
        assertThatThrownBy(() -> sink(block("t", "upsert", null)))
                .isInstanceOfSatisfying(MallardException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_CONFIG_INVALID))
                .hasMessageContaining("pipeline.sink.postgres.key");
    }
}
