// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.rls;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Tuple;

/**
 * The tables, views, grants and generated queries of the row filter leak properties: four tables t1..t4 (id, k, v,
 * tenant) with fixed pseudo-random rows, three views over them, filters on t1..t3 and none on t4, and the same
 * database with only the rows the filters let through (t4 empty) as the admin's reference.
 */
public final class LeakFixture {
    private static final String[] TABLES = {"t1", "t2", "t3", "t4"};
    private static final String[] FILTERS = {"tenant = 'a'", "v % 2 = 0", "tenant <> 'b' AND k < 4"};
    private static final String[] VIEWS = {
        "CREATE VIEW v1 AS SELECT k, v FROM t1 WHERE v > 2",
        "CREATE VIEW v2 (k, v) AS SELECT a.k, b.v FROM t2 a JOIN t3 b ON a.k = b.k",
        "CREATE VIEW v3 AS SELECT k, v FROM v1 UNION ALL SELECT k, v FROM t4"};

    private LeakFixture() {}

    /** The statements that make the restricted user's database. */
    public static List<String> restrictedSetup() {
        return setup(false);
    }

    /** The statements that make the admin's reference: the same, with only the rows the filters let through. */
    public static List<String> referenceSetup() {
        return setup(true);
    }

    private static List<String> setup(boolean filtered) {
        Random random = new Random(16);
        List<String> statements = new ArrayList<>();
        for (int t = 0; t < TABLES.length; t++) {
            List<String> rows = new ArrayList<>();
            for (int i = 0; i < 14; i++) {
                rows.add("(" + i + ", " + random.nextInt(6) + ", " + random.nextInt(10) + ", '" + "abc".charAt(random.nextInt(3)) + "')");
            }
            statements.add("CREATE TABLE " + TABLES[t] + " (id INT, k INT, v INT, tenant VARCHAR)");
            statements.add("INSERT INTO " + TABLES[t] + " VALUES " + String.join(", ", rows));
            if (filtered) {
                statements.add("DELETE FROM " + TABLES[t] + (t < FILTERS.length ? " WHERE NOT (" + FILTERS[t] + ")" : ""));
            }
        }
        statements.addAll(List.of(VIEWS));
        return statements;
    }

    /** The {@code x-dd-access} claim: a filter for t1..t3, nothing for t4. */
    public static String access() {
        return access("*");
    }

    /** As {@link #access()}, each grant exposing only {@code projection} (the filters read the columns it hides). */
    public static String access(String projection) {
        StringBuilder access = new StringBuilder("[");
        for (int t = 0; t < FILTERS.length; t++) {
            access.append(t > 0 ? "," : "").append("[\"table\",\"").append(TABLES[t]).append("\",\"").append(projection).append("\",\"")
                    .append(FILTERS[t]).append("\"]");
        }
        return access.append("]").toString();
    }

    /** Columns of t1..t3 that {@code access("k, v")} hides. */
    public static Arbitrary<String> hiddenColumns() {
        return Arbitraries.of("id", "tenant", "ID", "\"tenant\"");
    }

    /** The granted tables t1..t3, as a query may name them. */
    public static Arbitrary<String> grantedTables() {
        return Arbitraries.of("t1", "t2", "t3", "main.t1", "memory.main.t2");
    }

    /** Queries answering two INT columns, k and v. */
    public static Arbitrary<String> queries() {
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
        return Arbitraries.frequencyOf(Tuple.of(3, named), Tuple.of(1, Arbitraries.lazy(() -> query(depth - 1).map(q -> "(" + q + ")"))));
    }

    /** A query's rows as sorted {@code k|v} texts: results compared as multisets. */
    public static List<String> rows(Connection connection, String sql) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery(sql)) {
            while (rs.next()) {
                out.add(rs.getString(1) + "|" + rs.getString(2));
            }
        }
        out.sort(null);
        return out;
    }

}
