// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.sql;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.Set;
import java.util.TreeSet;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * For any query built of subqueries, set operations, joins, IN-subqueries and CTEs over three tables, with or
 * without a writing CTE body somewhere inside, the classifier says it writes exactly when one is there, and finds
 * every table the query names.
 */
class StatementClassifierPropertyTest {
    static Connection connection;
    static final StatementClassifier CLASSIFIER = new StatementClassifier();

    @BeforeContainer
    static void open() throws Exception {
        connection = DriverManager.getConnection("jdbc:duckdb:");
        try (Statement statement = connection.createStatement()) {
            for (String table : new String[] {"t1", "t2", "t3"}) {
                statement.execute("CREATE TABLE " + table + " (x INTEGER)");
            }
        }
    }

    @AfterContainer
    static void close() throws Exception {
        connection.close();
    }

    /** A generated query: its SQL, whether it holds a write, the tables it names. */
    record Query(String sql, boolean writes, Set<String> tables) {
        static Query of(String sql, boolean writes, Set<String> tables) {
            return new Query(sql, writes, tables);
        }

        static Set<String> union(Set<String> a, Set<String> b) {
            Set<String> all = new TreeSet<>(a);
            all.addAll(b);
            return all;
        }
    }

    @Provide
    Arbitrary<Query> queries() {
        return query(4);
    }

    private Arbitrary<Query> query(int depth) {
        Arbitrary<String> table = Arbitraries.of("t1", "t2", "t3");
        Arbitrary<Query> leaf = table.map(t -> Query.of("SELECT x FROM " + t, false, Set.of(t)));
        if (depth == 0) {
            return leaf;
        }
        Arbitrary<Query> inner = Arbitraries.lazy(() -> query(depth - 1));
        Arbitrary<Query> write = table.flatMap(t -> Arbitraries.of(
                Query.of("DELETE FROM " + t + " RETURNING x", true, Set.of(t)),
                Query.of("UPDATE " + t + " SET x = x + 1 RETURNING x", true, Set.of(t)),
                Query.of("INSERT INTO " + t + " VALUES (1) RETURNING x", true, Set.of(t))));
        Arbitrary<Integer> names = Arbitraries.integers().between(0, 1_000_000);
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(2, leaf),
                net.jqwik.api.Tuple.of(2, inner.map(q -> Query.of("SELECT x FROM (" + q.sql() + ") s", q.writes(), q.tables()))),
                net.jqwik.api.Tuple.of(2, net.jqwik.api.Combinators.combine(inner, inner).as((a, b) -> Query.of(
                        "SELECT x FROM ((" + a.sql() + ") UNION ALL (" + b.sql() + ")) u", a.writes() || b.writes(), Query.union(a.tables(), b.tables()))))
                ,
                net.jqwik.api.Tuple.of(2, net.jqwik.api.Combinators.combine(inner, inner).as((a, b) -> Query.of(
                        "SELECT l.x FROM (" + a.sql() + ") l LEFT JOIN (" + b.sql() + ") r ON l.x = r.x", a.writes() || b.writes(),
                        Query.union(a.tables(), b.tables())))),
                net.jqwik.api.Tuple.of(2, net.jqwik.api.Combinators.combine(inner, inner).as((a, b) -> Query.of(
                        "SELECT x FROM (" + a.sql() + ") w WHERE x IN (" + b.sql() + ") OR EXISTS (SELECT 1)", a.writes() || b.writes(),
                        Query.union(a.tables(), b.tables())))),
                net.jqwik.api.Tuple.of(2, net.jqwik.api.Combinators.combine(Arbitraries.oneOf(inner, write), inner, names).as((body, main, n) -> Query.of(
                        "WITH c" + n + " AS (" + body.sql() + ") SELECT x FROM c" + n + " WHERE x IN (" + main.sql() + ")",
                        body.writes() || main.writes(), Query.union(Query.union(body.tables(), main.tables()), Set.of("c" + n))))));
    }

    @Property(tries = 300)
    void aQueryWritesExactlyWhenAWritingCteIsInItAndEveryTableIsFound(@ForAll("queries") Query query) throws Exception {
        Classification classification = CLASSIFIER.classify(connection, query.sql());
        assertThat(classification.single()).isTrue();
        ClassifiedStatement statement = classification.statement();
        assertThat(statement.kind()).as(query.sql()).isEqualTo(StatementKind.QUERY);
        assertThat(statement.writes()).as(query.sql()).isEqualTo(query.writes());
        assertThat(statement.tables()).extracting(TableReference::name).as(query.sql()).containsExactlyInAnyOrderElementsOf(query.tables());
    }

    @Property(tries = 100)
    void theSameQueryThroughQueryIsClassifiedTheSame(@ForAll("queries") Query query) throws Exception {
        Classification through = CLASSIFIER.classify(connection, "SELECT * FROM query('" + query.sql().replace("'", "''") + "')");
        assertThat(through.reached().stream().anyMatch(ClassifiedStatement::writes)).as(query.sql()).isEqualTo(query.writes());
        assertThat(through.tables()).extracting(TableReference::name).containsExactlyInAnyOrderElementsOf(query.tables());
    }
}
