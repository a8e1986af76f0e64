package dev.mallard.server.rls;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.server.config.AccessMode;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * A row filter never leaks a row: a generated query over four tables and three views (joins of every kind,
 * subqueries in FROM, WHERE and SELECT, EXISTS, CTEs, set operations, aggregates, window functions), run as a
 * RESTRICT_READ_ONLY user through the rewriter, answers exactly what the same query answers as an admin over copies
 * of the tables that hold only the rows the filters let through (and nothing for the table no grant names).
 */
class RowFilterLeakProperties {
    private static final String[] TABLES = {"t1", "t2", "t3", "t4"};
    private static final String[] FILTERS = {"tenant = 'a'", "v % 2 = 0", "tenant <> 'b' AND k < 4"};
    private static final String[] VIEWS = {
        "CREATE VIEW v1 AS SELECT k, v FROM t1 WHERE v > 2",
        "CREATE VIEW v2 (k, v) AS SELECT a.k, b.v FROM t2 a JOIN t3 b ON a.k = b.k",
        "CREATE VIEW v3 AS SELECT k, v FROM v1 UNION ALL SELECT k, v FROM t4"};
    private static Connection restricted;
    private static Connection reference;
    private static RowLevelSecurity rls;

    @BeforeContainer
    static void open() throws SQLException {
        restricted = DriverManager.getConnection("jdbc:duckdb:");
        reference = DriverManager.getConnection("jdbc:duckdb:");
        Random random = new Random(16);
        StringBuilder access = new StringBuilder("[");
        for (int t = 0; t < TABLES.length; t++) {
            String table = TABLES[t];
            run(restricted, "CREATE TABLE " + table + " (id INT, k INT, v INT, tenant VARCHAR)");
            List<String> rows = new ArrayList<>();
            for (int i = 0; i < 14; i++) {
                rows.add("(" + i + ", " + random.nextInt(6) + ", " + random.nextInt(10) + ", '" + "abc".charAt(random.nextInt(3)) + "')");
            }
            run(restricted, "INSERT INTO " + table + " VALUES " + String.join(", ", rows));
            run(reference, "CREATE TABLE " + table + " (id INT, k INT, v INT, tenant VARCHAR)");
            if (t < FILTERS.length) {
                run(reference, "INSERT INTO " + table + " VALUES " + String.join(", ", rows));
                run(reference, "DELETE FROM " + table + " WHERE NOT (" + FILTERS[t] + ")");
                access.append(access.length() > 1 ? "," : "").append("[\"table\",\"").append(table).append("\",\"*\",\"")
                        .append(FILTERS[t].replace("'", "'")).append("\"]");
            }
        }
        for (String view : VIEWS) {
            run(restricted, view);
            run(reference, view);
        }
        rls = RowLevelSecurity.of(AccessMode.RESTRICT_READ_ONLY, Map.of(RlsClaims.ACCESS, access.append("]").toString())).orElseThrow();
    }

    @AfterContainer
    static void close() throws SQLException {
        restricted.close();
        reference.close();
    }

    @Property
    void aRestrictedQueryAnswersWhatTheQueryAnswersOverPrefilteredTables(@ForAll("queries") String sql) throws SQLException {
        List<String> expected;
        try {
            expected = rows(reference, sql);
        } catch (SQLException e) {
            throw new AssertionError("the generator made a query DuckDB refuses: " + sql, e);
        }
        assertThat(rows(restricted, rls.admit(restricted, sql))).as(sql).isEqualTo(expected);
    }

    @Provide
    Arbitrary<String> queries() {
        return query(3);
    }

    /** A query answering two INT columns, k and v. */
    private static Arbitrary<String> query(int depth) {
        if (depth == 0) {
            return relation(0).map(rel -> "SELECT a.k AS k, a.v AS v FROM " + rel + " a");
        }
        Arbitrary<String> relation = relation(depth - 1);
        Arbitrary<String> smaller = Arbitraries.lazy(() -> query(depth - 1));
        Arbitrary<String> condition = condition(depth - 1);
        return Arbitraries.oneOf(
                Arbitraries.lazy(() -> relation.flatMap(rel -> condition.map(where -> "SELECT a.k AS k, a.v AS v FROM " + rel + " a WHERE " + where))),
                Arbitraries.lazy(() -> join(relation)),
                Arbitraries.lazy(() -> smaller.map(q -> "SELECT k, sum(v)::INT AS v FROM (" + q + ") q GROUP BY k HAVING count(*) > 0")),
                Arbitraries.lazy(() -> smaller.map(q -> "SELECT k, (row_number() OVER (PARTITION BY k ORDER BY v, k))::INT AS v FROM (" + q + ") q")),
                Arbitraries.lazy(() -> smaller.flatMap(left -> smaller.flatMap(right -> Arbitraries.of("UNION", "UNION ALL", "EXCEPT", "INTERSECT")
                        .map(op -> "(" + left + ") " + op + " (" + right + ")")))),
                Arbitraries.lazy(() -> smaller.flatMap(cte -> condition.map(where -> "WITH c AS (" + cte + ") SELECT a.k AS k, a.v AS v FROM c a WHERE " + where))),
                Arbitraries.lazy(() -> relation.flatMap(outer -> relation.map(inner -> "SELECT a.k AS k, (SELECT count(*)::INT FROM " + inner
                        + " x WHERE x.k = a.k) AS v FROM " + outer + " a"))),
                Arbitraries.lazy(() -> relation.flatMap(outer -> relation.map(inner -> "SELECT a.k AS k, x.v AS v FROM " + outer
                        + " a, LATERAL (SELECT max(y.v) AS v FROM " + inner + " y WHERE y.k <= a.k) x"))));
    }

    private static Arbitrary<String> join(Arbitrary<String> relation) {
        return relation.flatMap(left -> relation.flatMap(right -> Arbitraries.of("JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "SEMI JOIN", "ANTI JOIN")
                .map(kind -> {
                    String select = kind.startsWith("SEMI") || kind.startsWith("ANTI") ? "a.k AS k, a.v AS v" : "coalesce(a.k, b.k) AS k, b.v AS v";
                    return "SELECT " + select + " FROM " + left + " a " + kind + " " + right + " b ON a.k = b.k";
                })));
    }

    /** A condition on relation alias {@code a}. */
    private static Arbitrary<String> condition(int depth) {
        Arbitrary<String> simple = Arbitraries.integers().between(0, 9).flatMap(n -> Arbitraries.of("a.v > " + n, "a.k <> " + (n % 6), "a.v IS NOT NULL"));
        if (depth < 0) {
            return simple;
        }
        Arbitrary<String> relation = relation(Math.max(0, depth - 1));
        return Arbitraries.oneOf(simple,
                relation.map(rel -> "a.k IN (SELECT y.k FROM " + rel + " y)"),
                relation.map(rel -> "EXISTS (SELECT 1 FROM " + rel + " y WHERE y.k = a.k AND y.v >= a.v)"),
                relation.map(rel -> "NOT EXISTS (SELECT 1 FROM " + rel + " y WHERE y.k = a.k)"),
                relation.map(rel -> "a.v < (SELECT coalesce(max(y.v), 0) FROM " + rel + " y)"));
    }

    /** A relation with columns k and v: a table, a view, or a query. */
    private static Arbitrary<String> relation(int depth) {
        Arbitrary<String> named = Arbitraries.of("t1", "t2", "t3", "t4", "v1", "v2", "v3", "main.t1", "memory.main.t2");
        if (depth == 0) {
            return named;
        }
        return Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(3, named), net.jqwik.api.Tuple.of(1, Arbitraries.lazy(() -> query(depth - 1).map(q -> "(" + q + ")"))));
    }

    private static List<String> rows(Connection connection, String sql) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery(sql)) {
            while (rs.next()) {
                out.add(rs.getString(1) + "|" + rs.getString(2));
            }
        }
        out.sort(null);
        return out;
    }

    private static void run(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }
}
