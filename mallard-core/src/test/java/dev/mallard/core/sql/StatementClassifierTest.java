// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class StatementClassifierTest {
    static Connection connection;
    static final StatementClassifier CLASSIFIER = new StatementClassifier();

    @BeforeAll
    static void open() throws Exception {
        connection = DriverManager.getConnection("jdbc:duckdb:");
        try (Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE t (x INTEGER, y VARCHAR)");
            statement.execute("CREATE TABLE u (x INTEGER)");
        }
    }

    @AfterAll
    static void close() throws Exception {
        connection.close();
    }

    static Classification classify(String sql) {
        try {
            return CLASSIFIER.classify(connection, sql);
        } catch (java.sql.SQLException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aSelectIsAQueryThatReadsItsTables() {
        ClassifiedStatement statement = classify("SELECT * FROM t JOIN main.u USING (x) WHERE x IN (SELECT x FROM u)").statement();
        assertThat(statement.kind()).isEqualTo(StatementKind.QUERY);
        assertThat(statement.writes()).isFalse();
        assertThat(statement.tables()).containsExactlyInAnyOrder(new TableReference("", "", "t"), new TableReference("", "main", "u"),
                new TableReference("", "", "u"));
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "WITH x AS (DELETE FROM t RETURNING *) SELECT count(*) FROM x",
        "WITH x AS (INSERT INTO t VALUES (1, 'a') RETURNING *) SELECT count(*) FROM x",
        "WITH x AS (UPDATE t SET x = 1 RETURNING *) SELECT count(*) FROM x",
        "SELECT * FROM (WITH x AS (DELETE FROM t RETURNING x) SELECT * FROM x)",
        "SELECT 1 WHERE 1 IN (WITH x AS (DELETE FROM t RETURNING x) SELECT * FROM x)",
        "WITH x AS (COPY t TO '/tmp/mallard-classifier.csv') SELECT 1"
    })
    void aWriteInsideACteIsAWritingQuery(String sql) {
        ClassifiedStatement statement = classify(sql).statement();
        assertThat(statement.kind()).isEqualTo(StatementKind.QUERY);
        assertThat(statement.writes()).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "INSERT INTO t VALUES (1, 'a')", "DELETE FROM t", "CREATE TABLE v (a INT)", "COPY t TO '/tmp/x.csv'", "EXPORT DATABASE '/tmp/x'",
        "ATTACH ':memory:' AS other", "INSTALL httpfs", "LOAD httpfs", "SET threads = 1", "RESET threads", "PRAGMA version", "CALL pragma_version()",
        "CHECKPOINT", "SELECT 1; DELETE FROM t", "EXPLAIN DELETE FROM t", "EXPLAIN ANALYZE DELETE FROM t", "EXPLAIN SELECT 1; SELECT 2",
        "PIVOT t ON y USING sum(x)"
    })
    void aStatementDuckDbDoesNotSerialiseIsOtherAndWrites(String sql) {
        ClassifiedStatement statement = classify(sql).statement();
        assertThat(statement.kind()).isEqualTo(StatementKind.OTHER);
        assertThat(statement.writes()).isTrue();
    }

    @Test
    void explainAndExplainAnalyzeOfAQueryCarryTheQuery() {
        ClassifiedStatement explain = classify("  /* why */ explain SELECT * FROM t").statement();
        assertThat(explain.kind()).isEqualTo(StatementKind.EXPLAIN);
        assertThat(explain.explained().orElseThrow().statement().kind()).isEqualTo(StatementKind.QUERY);
        assertThat(explain.tables()).containsExactly(new TableReference("", "", "t"));
        ClassifiedStatement analyze = classify("EXPLAIN ANALYZE WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x").statement();
        assertThat(analyze.kind()).isEqualTo(StatementKind.EXPLAIN_ANALYZE);
        assertThat(analyze.writes()).isTrue();
    }

    @Test
    void aTextOfSeveralQueriesHasOneStatementEach() {
        Classification classification = classify("SELECT 1; SELECT * FROM t");
        assertThat(classification.single()).isFalse();
        assertThat(classification.statements()).extracting(ClassifiedStatement::kind).containsExactly(StatementKind.QUERY, StatementKind.QUERY);
    }

    @Test
    void aSyntaxErrorIsUnparsedWithDuckDbsMessage() {
        ClassifiedStatement statement = classify("SELEKT 1").statement();
        assertThat(statement.kind()).isEqualTo(StatementKind.UNPARSED);
        assertThat(statement.problem()).get().asString().contains("syntax error");
    }

    @Test
    void theTextGivenToQueryIsClassifiedInTurn() {
        Classification classification = classify("SELECT * FROM query('SELECT * FROM query(''WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d'')')");
        assertThat(classification.reached()).hasSize(3);
        assertThat(classification.reached().getLast().writes()).isTrue();
        assertThat(classification.tables()).contains(new TableReference("", "", "t"));
        assertThat(classify("SELECT * FROM query_table('u')").tables()).containsExactly(new TableReference("", "", "u"));
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "SELECT * FROM query('SELECT dbs' || 'p_create_view(''v3'', ''SELECT x FROM t'')')",
        "SELECT * FROM query(?)",
        "SELECT * FROM query_table(concat('t', ''))",
        "SELECT * FROM json_execute_serialized_sql('{}')"
    })
    void queryWithAnythingButALiteralIsRefused(String sql) {
        assertThatThrownBy(() -> classify(sql))
                .isInstanceOfSatisfying(MallardException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_SQL_UNSUPPORTED));
    }

    @Test
    void everyFunctionIsFoundWhereverItIsCalled() {
        List<FunctionCall> calls = classify("SELECT dbsp_sync() AS s, (SELECT max(x) FROM u) FROM t WHERE x = abs(x) AND EXISTS "
                + "(SELECT * FROM dbsp_stats() WHERE metric = 'views')").functions();
        assertThat(calls).extracting(FunctionCall::name).contains("dbsp_sync", "max", "abs", "dbsp_stats");
        assertThat(calls).filteredOn(FunctionCall::tableFunction).extracting(FunctionCall::name).containsExactly("dbsp_stats");
        assertThat(classify("SELECT * FROM checkpoint()").statement().tableFunctions()).extracting(FunctionCall::name).containsExactly("checkpoint");
    }

    @Test
    void aStatementThatIsOneCallWithConstantsIsATopLevelCall() {
        assertThat(classify("SELECT dbsp_create_view('v', 'SELECT x FROM t')").statement().topLevelCall()).get()
                .satisfies(call -> {
                    assertThat(call.name()).isEqualTo("dbsp_create_view");
                    assertThat(call.stringArgument(1)).contains("SELECT x FROM t");
                });
        assertThat(classify("select * from DBSP_STATS()").statement().topLevelCall()).get().extracting(FunctionCall::tableFunction).isEqualTo(true);
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "SELECT dbsp_sync() AS s", "SELECT dbsp_sync() FROM range(2)", "SELECT dbsp_create_view('v' || range, 'SELECT 1') FROM range(2, 4)",
        "SELECT * FROM dbsp_stats() WHERE metric = 'views'", "SELECT * FROM dbsp_stats() s", "SELECT metric FROM dbsp_stats()",
        "WITH c AS (SELECT 1) SELECT dbsp_sync()", "SELECT dbsp_sync() LIMIT 1", "SELECT DISTINCT dbsp_sync()", "SELECT dbsp_track(?)"
    })
    void aCallInsideALargerStatementIsNotATopLevelCall(String sql) {
        Classification classification = classify(sql);
        assertThat(classification.statements()).allSatisfy(statement -> assertThat(statement.topLevelCall()).isEmpty());
    }

    @Test
    void preparedParametersAreCounted() {
        assertThat(classify("SELECT * FROM t WHERE x = ? AND y = ?").statement().parameters()).isEqualTo(2);
    }

    @Test
    void nestingDeeperThanTheBoundIsRefusedBeforeDuckDbParsesIt() {
        String sql = "SELECT 1";
        for (int i = 0; i < 3_000; i++) {
            sql = "SELECT * FROM (" + sql + ")";
        }
        String deep = sql;
        assertThatThrownBy(() -> classify(deep))
                .isInstanceOfSatisfying(MallardException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_SQL_TOO_DEEP))
                .hasMessageContaining("3000 deep");
        String fine = "SELECT 1";
        for (int i = 0; i < 50; i++) {
            fine = "SELECT * FROM (" + fine + ")";
        }
        assertThat(classify(fine).statement().kind()).isEqualTo(StatementKind.QUERY);
    }

    @Test
    void bracketsInsideQuotesAndCommentsDoNotCount() {
        String noise = "'" + "(".repeat(500) + "'";
        assertThat(SqlLexer.nestingDepth("SELECT " + noise + ", E'\\'" + "(".repeat(300) + "', $x$" + "(".repeat(300) + "$x$ /* /* "
                + "(".repeat(300) + " */ */ -- " + "(".repeat(300) + "\n")).isZero();
        assertThat(SqlLexer.nestingDepth("SELECT ((1)), [[2]]")).isEqualTo(2);
        // A closing bracket inside a string cannot hide real nesting.
        assertThat(SqlLexer.nestingDepth("SELECT (((')))', ((1)))")).isEqualTo(5);
    }

    @Test
    void expressionsTooDeepForDuckDbsParserAreASyntaxErrorNotACrash() {
        ClassifiedStatement statement = classify("SELECT 1" + "+1".repeat(5_000)).statement();
        assertThat(statement.kind()).isEqualTo(StatementKind.UNPARSED);
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "SELECT x, y FROM t WHERE x > 1 AND y LIKE 'a%' OR NOT x IS NULL ORDER BY x DESC NULLS LAST LIMIT 10 OFFSET 2",
        "SELECT DISTINCT ON (x) x FROM t",
        "SELECT x, count(*) FILTER (WHERE x > 1), sum(x) OVER (PARTITION BY y ORDER BY x ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t GROUP BY ALL HAVING count(*) > 1 QUALIFY row_number() OVER () = 1",
        "SELECT * FROM t JOIN u USING (x) LEFT JOIN u u2 ON t.x = u2.x SEMI JOIN u u3 ON true ANTI JOIN u u4 ON u4.x = t.x, LATERAL (SELECT t.x) l",
        "SELECT x FROM t UNION SELECT x FROM u EXCEPT SELECT x FROM u INTERSECT ALL SELECT 1",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r",
        "SELECT CASE WHEN x = 1 THEN 'a' ELSE 'b' END, x::DECIMAL(10, 2), TRY_CAST(y AS INT[]), x BETWEEN 1 AND 2, [1, 2][1], {'a': 1}.a, y COLLATE nocase, list_transform([1], lambda v: v + 1), interval 1 day, DATE '2020-01-01', #1 FROM t",
        "SELECT * FROM (VALUES (1), (2)) v(a)",
        "SELECT * FROM range(10) r TABLESAMPLE 10%",
        "FROM t SELECT x",
        "SELECT t.* FROM t LIMIT 10%",
        "DESCRIBE t", "SHOW TABLES", "SUMMARIZE t",
        "SELECT CAST(x AS STRUCT(a INT, b VARCHAR)), CAST(y AS MAP(VARCHAR, INT)), 'a'::ENUM('a', 'b') FROM t",
        "SELECT * FROM t AT (VERSION => 1)",
        "SELECT x FROM t WINDOW w AS (PARTITION BY x) ORDER BY ALL",
        "FROM t PIVOT (sum(x) FOR y IN ('a', 'b'))",
        "FROM t UNPIVOT (v FOR k IN (x))",
        "SELECT * FROM t, LATERAL unnest([1, 2]) u(a)",
        "SELECT struct_pack(a := 1), list_filter([1, 2], v -> v > 1), [v * 2 FOR v IN [1, 2]], MAP {'a': 1}",
        "SELECT * FROM read_csv('/tmp/none.csv', header := true)",
        "SELECT * EXCLUDE (x) FROM t", "SELECT * REPLACE (x + 1 AS x) FROM t", "SELECT COLUMNS(*) FROM t", "SELECT COLUMNS('x') + 1 FROM t",
        "SELECT x FROM t UNION BY NAME SELECT x FROM u",
        "SELECT y, count(*) FROM t GROUP BY CUBE (y)", "SELECT y, count(*) FROM t GROUP BY GROUPING SETS ((y), ())",
        "SELECT y, count(*) FROM t GROUP BY ROLLUP (y)",
        "SELECT * FROM t ASOF JOIN u ON t.x >= u.x", "SELECT * FROM t POSITIONAL JOIN u",
        "SELECT * FROM t LIMIT (SELECT 1)", "SELECT * FROM t WHERE x = ANY(SELECT x FROM u)", "VALUES (1), (2)",
        "SELECT x::JSON, TRY(1 / 0), $1, ?::INT FROM t", "SELECT * FROM t USING SAMPLE 10% (bernoulli)",
        "SELECT COALESCE(x, 0), NULLIF(x, 1), x IS NOT DISTINCT FROM 1, y ILIKE 'a%', y NOT LIKE 'b' FROM t",
        "SELECT * FROM (SELECT * FROM t) AS s(a, b)", "SELECT * FROM range(3) WITH ORDINALITY", "SELECT * FROM t NATURAL LEFT JOIN u",
        "SELECT 1 AS a ORDER BY a DESC NULLS FIRST", "SELECT first(x ORDER BY y) FROM t", "SELECT x FROM t ORDER BY random()",
        "WITH RECURSIVE r(n) USING KEY (n) AS (SELECT 1 UNION SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r"
    })
    void everyDayQueriesAreKnown(String sql) {
        ClassifiedStatement statement = classify(sql).statement();
        assertThat(statement.kind()).isEqualTo(StatementKind.QUERY);
        assertThat(statement.writes()).isFalse();
    }

    @Test
    void toSqlWritesAStatementBackInDuckDbsSpelling() throws Exception {
        Classification classification = classify("select   dbsp_create_view('v''1', 'SELECT 1')");
        assertThat(CLASSIFIER.toSql(connection, classification.statement())).isEqualTo("SELECT dbsp_create_view('v''1', 'SELECT 1')");
    }
}
