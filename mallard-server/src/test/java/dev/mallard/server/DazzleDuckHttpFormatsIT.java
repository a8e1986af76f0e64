// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import static dev.mallard.server.DazzleDuckHttpClient.JSONL;
import static dev.mallard.server.DazzleDuckHttpClient.TSV;
import static dev.mallard.server.DazzleDuckHttpClient.jsonLines;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mallard.server.config.AccessMode;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * DazzleDuck's HTTP API cases for JSON lines and TSV answers (its JSONL and TSV test suites), each written anew as
 * the behaviour a DazzleDuck client sees, against a Mallard server.
 */
class DazzleDuckHttpFormatsIT {
    @TempDir
    static Path warehouse;

    static MallardServer server;
    static DazzleDuckHttpClient client;

    @BeforeAll
    static void start() throws Exception {
        Path script = warehouse.resolve("startup.sql");
        Files.writeString(script, """
                CREATE TABLE dd_formats_people (id INTEGER, name VARCHAR, score INTEGER);
                INSERT INTO dd_formats_people VALUES (1, 'Alice', 10), (2, 'Bob', 20), (3, 'Carol', 30);
                """);
        server = MallardServer.start(TestServers.config(warehouse, AccessMode.COMPLETE, Optional.of(script)));
        client = new DazzleDuckHttpClient(server.httpPort());
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static HttpResponse<String> asked(String sql, String accept) throws Exception {
        HttpResponse<String> response = client.text(client.get(sql).header("Accept", accept));
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return response;
    }

    private static JsonNode firstJsonRow(String sql) throws Exception {
        return jsonLines(asked(sql, JSONL).body()).get(0);
    }

    private static String[] tsvLines(String sql) throws Exception {
        return asked(sql, TSV).body().split("\n");
    }

    // ---- JSON lines

    @Test
    void aGetAskingForJsonLinesAnswersOneObjectPerRow() throws Exception {
        List<JsonNode> rows = jsonLines(asked("SELECT * FROM dd_formats_people ORDER BY id", JSONL).body());
        assertThat(rows).hasSize(3);
        assertThat(rows.get(0).get("id").asInt()).isEqualTo(1);
        assertThat(rows.get(0).get("name").asText()).isEqualTo("Alice");
        assertThat(rows.get(0).get("score").asInt()).isEqualTo(10);
        assertThat(rows.get(2).get("name").asText()).isEqualTo("Carol");
    }

    @Test
    void aJsonBodyPostAskingForJsonLinesAnswersTheRows() throws Exception {
        HttpResponse<String> response = client.text(client.postJson("SELECT * FROM dd_formats_people ORDER BY id").header("Accept", JSONL));
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        List<JsonNode> rows = jsonLines(response.body());
        assertThat(rows).hasSize(3);
        assertThat(rows.get(1).get("name").asText()).isEqualTo("Bob");
    }

    @Test
    void jsonLinesAnswersCarryTheirContentTypeInUtf8() throws Exception {
        assertThat(asked("SELECT 1 AS id", JSONL).headers().firstValue("Content-Type")).contains("application/jsonl; charset=utf-8");
    }

    @Test
    void ndjsonIsAnAliasOfJsonLines() throws Exception {
        List<JsonNode> rows = jsonLines(asked("SELECT 42 AS answer", "application/x-ndjson").body());
        assertThat(rows).hasSize(1);
        assertThat(rows.get(0).get("answer").asInt()).isEqualTo(42);
    }

    @Test
    void everyJsonLineIsAStandaloneObjectAndTheBodyIsNoArray() throws Exception {
        String body = asked("SELECT * FROM dd_formats_people ORDER BY id", JSONL).body();
        assertThat(body.trim()).doesNotStartWith("[");
        for (JsonNode row : jsonLines(body)) {
            assertThat(row.isObject()).isTrue();
        }
    }

    @Test
    void anEmptyResultInJsonLinesIsAnEmptyBody() throws Exception {
        assertThat(asked("SELECT * FROM dd_formats_people WHERE id = -999", JSONL).body().trim()).isEmpty();
    }

    @Test
    void aMillionRowsArriveAsAMillionJsonLinesInOrder() throws Exception {
        List<JsonNode> rows = jsonLines(asked("SELECT generate_series FROM generate_series(1, 1000000)", JSONL).body());
        assertThat(rows).hasSize(1_000_000);
        assertThat(rows.get(0).get("generate_series").asInt()).isEqualTo(1);
        assertThat(rows.get(999_999).get("generate_series").asInt()).isEqualTo(1_000_000);
    }

    @Test
    void numbersAndBooleansAreJsonNumbersAndBooleans() throws Exception {
        JsonNode row = firstJsonRow("SELECT CAST(1 AS TINYINT) AS ti, CAST(2 AS SMALLINT) AS si, CAST(3 AS INTEGER) AS i,"
                + " CAST(4 AS BIGINT) AS bi, CAST(1.5 AS FLOAT) AS f, CAST(2.5 AS DOUBLE) AS d, true AS b");
        assertThat(row.get("ti").isNumber()).isTrue();
        assertThat(row.get("ti").asInt()).isEqualTo(1);
        assertThat(row.get("bi").asLong()).isEqualTo(4);
        assertThat(row.get("f").asDouble()).isEqualTo(1.5);
        assertThat(row.get("d").asDouble()).isEqualTo(2.5);
        assertThat(row.get("b").isBoolean()).isTrue();
        assertThat(row.get("b").asBoolean()).isTrue();
    }

    @Test
    void decimalAndHugeintAreJsonNumbersOfTheirExactDigits() throws Exception {
        String body = asked("SELECT CAST(3.14 AS DECIMAL(10,2)) AS dec, CAST('170141183460469231731687303715884105727' AS HUGEINT) AS huge,"
                + " CAST('-12345678901234567890.123456789' AS DECIMAL(38,9)) AS wide", JSONL).body();
        assertThat(body).isEqualTo("{\"dec\":3.14,\"huge\":170141183460469231731687303715884105727,\"wide\":-12345678901234567890.123456789}\n");
        JsonNode row = DazzleDuckHttpClient.JSON.readTree(body);
        assertThat(row.get("dec").isNumber()).isTrue();
        assertThat(row.get("huge").isNumber()).isTrue();
    }

    @Test
    void nullsAreJsonNull() throws Exception {
        JsonNode row = firstJsonRow("SELECT NULL::INTEGER AS i, NULL::VARCHAR AS s, NULL::DATE AS d");
        assertThat(row.get("i").isNull()).isTrue();
        assertThat(row.get("s").isNull()).isTrue();
        assertThat(row.get("d").isNull()).isTrue();
    }

    @Test
    void datesAndTimestampsAreIsoStrings() throws Exception {
        JsonNode row = firstJsonRow("SELECT CAST('2026-03-12' AS DATE) AS d, CAST('2026-03-12 10:30:00' AS TIMESTAMP) AS ts");
        assertThat(row.get("d").asText()).isEqualTo("2026-03-12");
        assertThat(row.get("ts").asText()).startsWith("2026-03-12");
    }

    @Test
    void listsAndStructsAreJsonArraysAndObjects() throws Exception {
        JsonNode row = firstJsonRow("SELECT [1, 2, 3] AS arr, {'name': 'Alice', 'age': 30} AS s");
        assertThat(row.get("arr").isArray()).isTrue();
        assertThat(row.get("arr")).hasSize(3);
        assertThat(row.get("arr").get(1).asInt()).isEqualTo(2);
        assertThat(row.get("s").get("name").asText()).isEqualTo("Alice");
        assertThat(row.get("s").get("age").asInt()).isEqualTo(30);
    }

    @Test
    void withoutAnAcceptHeaderTheAnswerIsArrowNotJsonLines() throws Exception {
        HttpResponse<String> response = client.text(client.get("SELECT 1 AS id"));
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type")).contains("application/vnd.apache.arrow.stream");
    }

    // ---- TSV

    @Test
    void aGetAskingForTsvAnswersAHeaderAndTheRows() throws Exception {
        assertThat(tsvLines("SELECT * FROM dd_formats_people ORDER BY id")).containsExactly("id\tname\tscore", "1\tAlice\t10", "2\tBob\t20", "3\tCarol\t30");
    }

    @Test
    void aJsonBodyPostAskingForTsvAnswersTheRows() throws Exception {
        HttpResponse<String> response = client.text(client.postJson("SELECT * FROM dd_formats_people ORDER BY id").header("Accept", TSV));
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        assertThat(response.body().split("\n")).hasSize(4).startsWith("id\tname\tscore", "1\tAlice\t10");
    }

    @Test
    void tsvAnswersCarryTheirContentTypeInUtf8() throws Exception {
        String type = asked("SELECT 1 AS id", TSV).headers().firstValue("Content-Type").orElseThrow();
        assertThat(type).contains("text/tab-separated-values").contains("utf-8");
    }

    @Test
    void aSingleColumnTsvIsItsNameAndValue() throws Exception {
        assertThat(tsvLines("SELECT 42 AS answer")).containsExactly("answer", "42");
    }

    @Test
    void anEmptyTsvResultStillHasItsHeader() throws Exception {
        assertThat(asked("SELECT * FROM dd_formats_people WHERE id = -999", TSV).body().trim()).isEqualTo("id\tname\tscore");
    }

    @Test
    void withoutAnAcceptHeaderTheAnswerIsNotTsv() throws Exception {
        HttpResponse<String> response = client.text(client.get("SELECT 1 AS id"));
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type").orElseThrow()).doesNotContain("tab-separated");
    }

    @Test
    void aMillionRowsArriveAsAMillionTsvLinesAfterTheHeader() throws Exception {
        String[] lines = tsvLines("SELECT generate_series FROM generate_series(1, 1000000)");
        assertThat(lines).hasSize(1_000_001);
        assertThat(lines[0]).isEqualTo("generate_series");
        assertThat(lines[1]).isEqualTo("1");
        assertThat(lines[1_000_000]).isEqualTo("1000000");
    }

    @Test
    void aTsvDateIsIso() throws Exception {
        assertThat(tsvLines("SELECT CAST('2026-03-12' AS DATE) AS d")).containsExactly("d", "2026-03-12");
    }

    @Test
    void aTsvTimeIsIso() throws Exception {
        String[] lines = tsvLines("SELECT CAST('12:30:45' AS TIME) AS t");
        assertThat(lines[0]).isEqualTo("t");
        assertThat(lines[1]).startsWith("12:30:45");
    }

    @Test
    void aTsvTimestampIsIso() throws Exception {
        String[] lines = tsvLines("SELECT CAST('2026-03-12 10:30:00' AS TIMESTAMP) AS ts");
        assertThat(lines[0]).isEqualTo("ts");
        assertThat(lines[1]).startsWith("2026-03-12");
    }

    @Test
    void aTsvTimestampWithTimeZoneNamesItsDay() throws Exception {
        String[] lines = tsvLines("SELECT CAST('2026-03-12 10:30:00+00' AS TIMESTAMPTZ) AS tstz");
        assertThat(lines[0]).isEqualTo("tstz");
        assertThat(lines[1]).contains("2026-03-12");
    }

    @Test
    void everyTemporalTypeFitsOneTsvRow() throws Exception {
        String[] lines = tsvLines("SELECT CAST('2026-03-12' AS DATE) AS d, CAST('14:00:00' AS TIME) AS t,"
                + " CAST('2026-03-12 14:00:00' AS TIMESTAMP) AS ts, CAST('2026-03-12 14:00:00+00' AS TIMESTAMPTZ) AS tstz");
        assertThat(lines[0]).isEqualTo("d\tt\tts\ttstz");
        String[] columns = lines[1].split("\t");
        assertThat(columns[0]).isEqualTo("2026-03-12");
        assertThat(columns[1]).startsWith("14:00");
        assertThat(columns[2]).startsWith("2026-03-12");
        assertThat(columns[3]).contains("2026-03-12");
    }

    @Test
    void tsvNullsAreEmptyFields() throws Exception {
        String body = asked("SELECT NULL::INTEGER AS i, NULL::VARCHAR AS s, NULL::DATE AS d, NULL::TIMESTAMP AS ts", TSV).body();
        assertThat(body).isEqualTo("i\ts\td\tts\n\t\t\t\n");
    }

    @Test
    void tsvNumbersKeepTheirDigits() throws Exception {
        String[] lines = tsvLines("SELECT CAST(1 AS TINYINT) AS ti, CAST(2 AS SMALLINT) AS si, CAST(3 AS INTEGER) AS i, CAST(4 AS BIGINT) AS bi,"
                + " CAST(1.5 AS FLOAT) AS f, CAST(2.5 AS DOUBLE) AS d, CAST(3.14 AS DECIMAL(10,2)) AS dec, true AS b");
        assertThat(lines[0]).isEqualTo("ti\tsi\ti\tbi\tf\td\tdec\tb");
        assertThat(lines[1].split("\t")).containsExactly("1", "2", "3", "4", "1.5", "2.5", "3.14", "true");
    }

    @Test
    void aTsvIntegerListShowsItsElements() throws Exception {
        String[] lines = tsvLines("SELECT [1, 2, 3] AS arr");
        assertThat(lines[0]).isEqualTo("arr");
        assertThat(lines[1]).contains("1").contains("2").contains("3");
    }

    @Test
    void aTsvTextListShowsItsElements() throws Exception {
        String[] lines = tsvLines("SELECT ['a', 'b', 'c'] AS arr");
        assertThat(lines[0]).isEqualTo("arr");
        assertThat(lines[1]).contains("a").contains("b").contains("c");
    }

    @Test
    void aTsvListWithANullIsOneField() throws Exception {
        String[] lines = tsvLines("SELECT [1, NULL, 3] AS arr");
        assertThat(lines).hasSize(2);
        assertThat(lines[1]).contains("1").contains("3");
    }

    @Test
    void aTsvStructShowsItsMembers() throws Exception {
        String[] lines = tsvLines("SELECT {'name': 'Alice', 'age': 30} AS s");
        assertThat(lines[0]).isEqualTo("s");
        assertThat(lines[1]).contains("Alice").contains("30");
    }

    @Test
    void aTsvNestedStructShowsItsInnerValue() throws Exception {
        String[] lines = tsvLines("SELECT {'outer': {'inner': 42}} AS nested");
        assertThat(lines[0]).isEqualTo("nested");
        assertThat(lines[1]).contains("42");
    }

    @Test
    void aTsvStructWithADateShowsBoth() throws Exception {
        String[] lines = tsvLines("SELECT {'d': CAST('2026-03-12' AS DATE), 'name': 'test'} AS s");
        assertThat(lines[0]).isEqualTo("s");
        assertThat(lines[1]).contains("2026-03-12").contains("test");
    }

    @Test
    void aTsvListOfStructsShowsTheirMembers() throws Exception {
        String[] lines = tsvLines("SELECT [{'a': 1, 'b': 'x'}, {'a': 2, 'b': 'y'}] AS arr");
        assertThat(lines[0]).isEqualTo("arr");
        assertThat(lines[1]).contains("1").contains("x").contains("y");
    }

    @Test
    void aTsvMapShowsItsKeys() throws Exception {
        String[] lines = tsvLines("SELECT MAP {'key1': 1, 'key2': 2} AS m");
        assertThat(lines[0]).isEqualTo("m");
        assertThat(lines[1]).contains("key1").contains("key2");
    }

    @Test
    void mixedTypesShareOneTsvRow() throws Exception {
        String[] lines = tsvLines("SELECT 42 AS i, 'hello' AS s, true AS b, CAST('2026-03-12' AS DATE) AS d, [1,2,3] AS arr, {'x': 10} AS st");
        assertThat(lines[0]).isEqualTo("i\ts\tb\td\tarr\tst");
        String[] columns = lines[1].split("\t");
        assertThat(columns[0]).isEqualTo("42");
        assertThat(columns[1]).isEqualTo("hello");
        assertThat(columns[2]).isEqualTo("true");
        assertThat(columns[3]).isEqualTo("2026-03-12");
    }
}
