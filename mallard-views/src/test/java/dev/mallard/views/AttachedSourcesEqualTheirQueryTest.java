// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import org.duckdb.DuckDBConnection;

/**
 * Differential tests over a table of an ATTACHed database ({@code o.main.a}, in a second DuckDB file) and one of the
 * views' own database ({@code b}): random views joining or aggregating over both, then random steps through the front
 * door: writes to either table (auto-commit, or a transaction that commits or rolls back), {@code DETACH o} (through
 * the front door or behind it), writes to {@code b} and to the detached file opened on its own, {@code ATTACH} again
 * under the same alias (through the front door or behind it), {@code dbsp_sync()}, and a reopen of the views' file.
 *
 * <p>After every step, through the front door: while {@code o} is attached every view equals its query (as bags);
 * while it is detached the views that read only {@code b} do, and every view that reads {@code o} is broken as
 * docs/views.md says: a {@code SELECT} of it reads the rows it had when {@code o} was detached, and
 * {@code views.query} fails with {@code user.view.broken}. At the end {@code o} is attached and {@code dbsp_check()}
 * finds no row that differs.
 *
 * <p>The default run is bounded (junit-platform.properties); {@code -Djqwik.tries.default=2000} runs more tries.
 */
class AttachedSourcesEqualTheirQueryTest {
    /** Views over the attached table, alone or with b; each reads {@code o}. */
    private static final List<String> OVER_BOTH = List.of(
            "SELECT a.k, sum(a.x) AS sx, count(*) AS n, max(b.t) AS mt FROM o.main.a a JOIN b ON a.k = b.k GROUP BY a.k",
            "SELECT a.k, a.x, b.z FROM o.main.a a LEFT JOIN b ON a.k = b.k",
            "SELECT a.k AS ak, b.k AS bk, a.s, b.t FROM o.main.a a FULL JOIN b ON a.k = b.k AND a.x < b.z",
            "SELECT count(*) AS n, sum(a.x * b.z) AS p FROM o.main.a a JOIN b ON a.k = b.k",
            "SELECT k, z FROM b WHERE k IN (SELECT k FROM o.main.a WHERE x > 0)",
            "SELECT k, x AS v FROM o.main.a UNION ALL SELECT k, z FROM b",
            "SELECT b.t, count(a.x) AS n, min(a.s) AS ms FROM b LEFT JOIN o.main.a a ON a.k = b.k GROUP BY b.t",
            "SELECT k, count(*) AS n, sum(x) AS sx FROM o.a GROUP BY k",
            "SELECT DISTINCT a.s, b.t FROM o.main.a a, b WHERE a.k = b.k");
    /** Views over b alone, which stay maintained while o is detached. */
    private static final List<String> OVER_MAIN = List.of("SELECT k, sum(z) AS sz, count(*) AS n FROM b GROUP BY k",
            "SELECT k, z, t FROM b WHERE z > 0");

    /** The two files every try starts from (their tables and rows, the views' catalog), made once and copied. */
    private static Path template;

    @BeforeContainer
    static void makeTheFiles() throws IOException {
        template = Files.createTempDirectory("mallard-detach-template");
        try (DuckDBConnection connection = DuckDb.open("jdbc:duckdb:" + template.resolve("main.duckdb"))) {
            DuckDb.run(connection, "ATTACH '" + template.resolve("o.duckdb") + "' AS o",
                    "CREATE TABLE o.main.a (k INTEGER, x INTEGER, s VARCHAR)",
                    "INSERT INTO o.main.a VALUES (1, 1, 'p'), (2, -1, NULL), (1, 3, 'q')",
                    "CREATE TABLE b (k INTEGER, z INTEGER, t VARCHAR)", "INSERT INTO b VALUES (1, 2, 'p'), (3, -2, 'q')");
            MaterializedViews.attach(connection).close();
            DuckDb.run(connection, "DETACH o");
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @AfterContainer
    static void removeTheFiles() throws IOException {
        delete(template);
    }

    private static void delete(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
    }

    @Property
    void viewsOverAnAttachedDatabaseDetachedAndAttachedAgainEqualTheirQuery(@ForAll("shapes") List<String> queries,
            @ForAll("steps") List<Step> steps) throws Exception {
        Path dir = Files.createTempDirectory("mallard-detach");
        try (World world = new World(dir)) {
            for (int i = 0; i < queries.size(); i++) {
                world.front("CREATE MATERIALIZED VIEW v" + i + " AS " + queries.get(i));
            }
            world.check(queries, "after create");
            for (int i = 0; i < steps.size(); i++) {
                Step step = steps.get(i);
                world.run(step, queries);
                world.check(queries, "after step " + i + " " + step);
            }
            if (!world.attached) {
                world.run(new Step(Step.Kind.ATTACH, List.of(), Step.Mode.AUTO_COMMIT), queries);
            }
            world.front("SELECT * FROM dbsp_sync()");
            world.check(queries, "at the end");
            assertThat(world.frontRows("SELECT view, differing_rows FROM dbsp_check() WHERE differing_rows <> 0"))
                    .as("views dbsp_check() found differing").isEmpty();
        } finally {
            delete(dir);
        }
    }

    @Provide
    Arbitrary<List<String>> shapes() {
        return Combinators.combine(Arbitraries.of(OVER_BOTH).list().ofMinSize(1).ofMaxSize(2),
                Arbitraries.of(OVER_MAIN).list().ofMaxSize(1)).as((both, main) -> {
                    List<String> all = new ArrayList<>(both);
                    all.addAll(main);
                    return all;
                });
    }

    @Provide
    Arbitrary<List<Step>> steps() {
        Arbitrary<Integer> key = Arbitraries.integers().between(0, 3).injectNull(0.2);
        Arbitrary<Integer> number = Arbitraries.integers().between(-3, 4).injectNull(0.2);
        Arbitrary<String> text = Arbitraries.of("'p'", "'q'", "NULL");
        Arbitrary<String> row = Combinators.combine(key, number, text).as((k, x, s) -> "(" + k + ", " + x + ", " + s + ")");
        // {t} is the table's name as the step reaches it: o.main.a or, in the detached file opened on its own, a.
        Arbitrary<String> insert = row.list().ofMinSize(1).ofMaxSize(3)
                .map(rows -> "INSERT INTO {t} VALUES " + String.join(", ", rows) + ", " + rows.get(0));
        Arbitrary<String> changeA = Arbitraries.of("UPDATE {t} SET x = x + 1 WHERE k = 1", "UPDATE {t} SET k = NULL WHERE s = 'p'",
                "UPDATE {t} SET k = k + 1 WHERE x < 0", "DELETE FROM {t} WHERE x > 2",
                "DELETE FROM {t} WHERE rowid = (SELECT min(rowid) FROM {t})");
        Arbitrary<String> changeB = Arbitraries.of("UPDATE {t} SET z = z - 1 WHERE k = 2", "UPDATE {t} SET t = NULL WHERE z > 1",
                "UPDATE {t} SET k = 3 - k", "DELETE FROM {t} WHERE z < 0", "DELETE FROM {t} WHERE rowid = (SELECT max(rowid) FROM {t})");
        Arbitrary<Step.Mode> mode = Arbitraries.frequency(Tuple.of(5, Step.Mode.AUTO_COMMIT), Tuple.of(2, Step.Mode.COMMIT),
                Tuple.of(1, Step.Mode.ROLLBACK));
        Arbitrary<Step> writeA = Combinators.combine(Arbitraries.frequencyOf(Tuple.of(3, insert), Tuple.of(2, changeA))
                .list().ofMinSize(1).ofMaxSize(2), mode).as((sql, m) -> new Step(Step.Kind.WRITE_A, sql, m));
        Arbitrary<Step> writeB = Combinators.combine(Arbitraries.frequencyOf(Tuple.of(3, insert), Tuple.of(2, changeB))
                .list().ofMinSize(1).ofMaxSize(2), mode).as((sql, m) -> new Step(Step.Kind.WRITE_B, sql, m));
        Arbitrary<Step> other = Arbitraries.frequency(Tuple.of(2, Step.Kind.DETACH), Tuple.of(2, Step.Kind.DETACH_BEHIND),
                Tuple.of(2, Step.Kind.ATTACH), Tuple.of(2, Step.Kind.ATTACH_BEHIND), Tuple.of(1, Step.Kind.SYNC),
                Tuple.of(1, Step.Kind.REOPEN)).map(kind -> new Step(kind, List.of(), Step.Mode.AUTO_COMMIT));
        return Arbitraries.frequencyOf(Tuple.of(3, writeA), Tuple.of(4, writeB), Tuple.of(4, other)).list().ofMinSize(3).ofMaxSize(12);
    }

    /** One step; the writes' {@code {t}} is the table's name where the step runs. */
    record Step(Kind kind, List<String> statements, Mode mode) {
        enum Kind { WRITE_A, WRITE_B, DETACH, DETACH_BEHIND, ATTACH, ATTACH_BEHIND, SYNC, REOPEN }

        enum Mode { AUTO_COMMIT, COMMIT, ROLLBACK }

        List<String> sql(String table) {
            List<String> all = new ArrayList<>();
            if (mode != Mode.AUTO_COMMIT) {
                all.add("BEGIN TRANSACTION");
            }
            statements.forEach(s -> all.add(s.replace("{t}", table)));
            if (mode != Mode.AUTO_COMMIT) {
                all.add(mode == Mode.COMMIT ? "COMMIT" : "ROLLBACK");
            }
            return all;
        }

        @Override
        public String toString() {
            return kind + (statements.isEmpty() ? "" : " " + sql(kind == Kind.WRITE_A ? "a" : "b"));
        }
    }

    /** The views' database (a file), its connection, views and front door, and whether o is attached. */
    private static final class World implements AutoCloseable {
        private final String url;
        private final String other;
        private DuckDBConnection connection;
        private MaterializedViews views;
        private ViewSql front;
        boolean attached = true;
        /** The rows of each view that reads o, as they were when o was detached. */
        private final Map<String, List<String>> atDetach = new HashMap<>();

        World(Path dir) throws IOException {
            for (String file : List.of("main.duckdb", "o.duckdb")) {
                Files.copy(template.resolve(file), dir.resolve(file));
            }
            url = "jdbc:duckdb:" + dir.resolve("main.duckdb");
            other = dir.resolve("o.duckdb").toString();
            connection = DuckDb.open(url);
            DuckDb.run(connection, "ATTACH '" + other + "' AS o");
            views = MaterializedViews.attach(connection);
            front = new ViewSql(views);
        }

        void run(Step step, List<String> queries) throws SQLException {
            switch (step.kind()) {
                case WRITE_A -> {
                    if (attached) {
                        step.sql("o.main.a").forEach(this::front);
                    } else {
                        // The detached file on its own: its capture triggers log the writes in it.
                        try (DuckDBConnection alone = DuckDb.open("jdbc:duckdb:" + other)) {
                            DuckDb.run(alone, step.sql("a").toArray(String[]::new));
                        }
                    }
                }
                case WRITE_B -> step.sql("b").forEach(this::front);
                case DETACH, DETACH_BEHIND -> {
                    if (attached) {
                        remember(queries);
                        if (step.kind() == Step.Kind.DETACH) {
                            front("DETACH o");
                        } else {
                            DuckDb.run(connection, "DETACH o");
                        }
                        attached = false;
                    }
                }
                case ATTACH, ATTACH_BEHIND -> {
                    if (!attached) {
                        String attach = "ATTACH '" + other + "' AS o";
                        if (step.kind() == Step.Kind.ATTACH) {
                            front(attach);
                        } else {
                            DuckDb.run(connection, attach);
                        }
                        attached = true;
                    }
                }
                case SYNC -> front("SELECT * FROM dbsp_sync()");
                case REOPEN -> {
                    if (attached) {
                        remember(queries); // ATTACH does not outlive the connection.
                    }
                    views.close();
                    connection.close();
                    connection = DuckDb.open(url);
                    views = MaterializedViews.attach(connection);
                    front = new ViewSql(views);
                    attached = false;
                }
            }
        }

        private void remember(List<String> queries) {
            for (int i = 0; i < queries.size(); i++) {
                if (readsAttached(queries.get(i))) {
                    atDetach.put("v" + i, DuckDb.rows(connection, "SELECT * FROM v" + i));
                }
            }
        }

        void check(List<String> queries, String when) throws SQLException {
            for (int i = 0; i < queries.size(); i++) {
                String view = "v" + i;
                String query = queries.get(i);
                List<String> read = frontRows("SELECT * FROM " + view);
                if (attached || !readsAttached(query)) {
                    assertThat(read).as("%s: %s = %s read through the front door", when, view, query)
                            .isEqualTo(DuckDb.rows(connection, query));
                    try (ResultSet rows = views.query(view)) {
                        assertThat(DuckDb.rows(rows)).as("%s: views.query(%s)", when, view).isEqualTo(read);
                    }
                } else {
                    assertThat(read).as("%s: %s = %s read while o is detached: its rows at the detach", when, view, query)
                            .isEqualTo(atDetach.get(view));
                    assertThatThrownBy(() -> views.query(view).close()).as("%s: views.query(%s) while o is detached", when, view)
                            .isInstanceOfSatisfying(MallardException.class,
                                    e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_VIEW_BROKEN));
                }
            }
        }

        private static boolean readsAttached(String query) {
            return OVER_BOTH.contains(query);
        }

        void front(String sql) {
            front.execute(sql).close();
        }

        List<String> frontRows(String sql) throws SQLException {
            try (ViewSql.Result result = front.execute(sql)) {
                return DuckDb.rows(result.rows().orElseThrow());
            }
        }

        @Override
        public void close() throws SQLException {
            views.close();
            connection.close();
        }
    }
}
