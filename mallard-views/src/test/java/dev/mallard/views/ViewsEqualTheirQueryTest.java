// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.duckdb.DuckDBConnection;

/**
 * Differential tests: random tables with NULLs and duplicate rows, random views from each maintained family
 * (projections, aggregates with DISTINCT and FILTER, inner joins and UNION, outer/semi/anti joins, CTEs and
 * EXCEPT/INTERSECT, IN/EXISTS subqueries, views over views, recursive CTEs, windows and top-k, scalar
 * subqueries, aggregating CTEs),
 * random batches of INSERT, UPDATE, DELETE and TRUNCATE (some in transactions that roll back); after every
 * sync (a full one or a writer's), {@code view EXCEPT ALL query} and {@code query EXCEPT ALL view} are both empty, and
 * for views merged on read also after every batch, before any sync.
 *
 * <p>AVG over DECIMAL is compared rounded to 10 places: DuckDB itself divides the sum by the count either in
 * double or in extended precision depending on the plan, so the last binary digit is not stable even for a
 * recompute (docs/views.md). AVG over integers is compared exactly.
 *
 * <p>The default run is bounded (see junit-platform.properties); {@code -Djqwik.tries.default=2000} runs
 * more tries per family.
 */
class ViewsEqualTheirQueryTest {
    private static final List<String> A_EXPRESSIONS = List.of("x", "k", "s", "y", "x + 1", "coalesce(x, -1)",
            "CASE WHEN x > 0 THEN s ELSE 'neg' END", "y * 2", "s || 'z'", "x % 3", "abs(x) + k", "k IS NULL",
            "CAST(y AS INTEGER)", "greatest(x, k)");
    private static final List<String> A_FILTERS = List.of("TRUE", "x > 0", "s IS NULL", "k IN (1, 2)",
            "x BETWEEN -2 AND 3 OR s = 'p'", "y > 0.5", "NOT (k = 1)", "coalesce(s, 'p') = 'p'");
    private static final List<String> KEYS = List.of("k", "s", "x % 2", "k IS NULL");
    private static final List<String> ARGUMENTS = List.of("x", "y", "x * 2 + k", "CASE WHEN s = 'p' THEN y END", "abs(x)", "k");
    private static final List<String> AGGREGATES = List.of("sum", "count", "avg", "min", "max");
    private static final List<String> HAVING = List.of("", " HAVING count(*) > 1", " HAVING sum(x) IS NOT NULL",
            " HAVING min(k) < 2 OR max(x) > 3");
    private static final List<String> JOIN_EXPRESSIONS = List.of("a.x", "b.z", "a.x + b.z", "b.t", "a.s", "a.k",
            "coalesce(b.t, a.s)", "a.y * b.z");
    private static final List<String> JOINS = List.of("a JOIN b ON a.k = b.k", "a JOIN b ON a.k = b.k AND a.x < b.z",
            "a JOIN b ON a.k + 1 = b.k", "a, b", "a JOIN b ON a.s = b.t OR a.k = b.z");
    private static final List<String> OUTER_JOINS = List.of("a LEFT JOIN b ON a.k = b.k",
            "a RIGHT JOIN b ON a.k = b.k AND a.x < b.z", "a FULL JOIN b ON a.k = b.k", "a LEFT JOIN b ON a.s = b.t OR a.k = b.z",
            "a FULL JOIN b ON a.k + 1 = b.k AND b.t IS NOT NULL", "b RIGHT JOIN a ON a.k = b.k",
            "a LEFT JOIN b ON a.k = b.k LEFT JOIN b b2 ON b.z = b2.z", "a JOIN b ON a.k = b.k LEFT JOIN a a2 ON a2.x = b.z",
            "a LEFT JOIN b ON a.k = b.k FULL JOIN b b2 ON a.x = b2.z", "a FULL JOIN (b JOIN b b2 ON b.k = b2.z) ON a.k = b.k",
            "a LEFT JOIN b ON a.x > 0", "(a LEFT JOIN b ON a.k = b.k) RIGHT JOIN b b2 ON b.t = b2.t");
    private static final List<String> SEMI_JOINS = List.of("a SEMI JOIN b ON a.k = b.k", "a ANTI JOIN b ON a.k = b.k AND b.z > 0",
            "a ANTI JOIN b ON a.s = b.t", "a LEFT JOIN a a2 ON a.k = a2.k AND a.x < a2.x SEMI JOIN b ON a.k = b.z");
    private static final List<String> JOIN_FILTERS = List.of("TRUE", "b.z > 0 OR a.x IS NULL", "a.s IS NOT NULL", "a.k < 3");

    @Property
    void projectionsAndFiltersEqualTheirQuery(@ForAll("projections") List<String> views,
            @ForAll("histories") List<Batch> history) {
        check(views, history);
    }

    @Property
    void aggregatesEqualTheirQuery(@ForAll("aggregations") List<String> views, @ForAll("histories") List<Batch> history) {
        check(views, history);
    }

    @Property
    void joinsEqualTheirQuery(@ForAll("joins") List<String> views, @ForAll("histories") List<Batch> history) {
        check(views, history);
    }

    @Property
    void outerJoinsEqualTheirQuery(@ForAll("outerJoins") List<String> views, @ForAll("histories") List<Batch> history) {
        check(views, history);
    }

    @Property
    void ctesAndSetOperationsEqualTheirQuery(@ForAll("ctesAndSetOperations") List<String> views,
            @ForAll("histories") List<Batch> history) {
        check(views, history);
    }

    @Property
    void inAndExistsSubqueriesEqualTheirQuery(@ForAll("subqueries") List<String> views, @ForAll("histories") List<Batch> history) {
        check(views, history);
    }

    @Property
    void viewsOverViewsEqualTheirQuery(@ForAll("cascades") List<String> views, @ForAll("histories") List<Batch> history) {
        check(views, history);
    }

    @Property
    void recursiveCtesEqualTheirQuery(@ForAll("recursions") List<String> views, @ForAll("histories") List<Batch> history) {
        check(views, history);
    }

    @Property
    void windowsAndTopKEqualTheirQuery(@ForAll("windows") List<String> views, @ForAll("histories") List<Batch> history) {
        check(views, history);
    }

    @Property
    void scalarSubqueriesEqualTheirQuery(@ForAll("scalarSubqueries") List<String> views, @ForAll("histories") List<Batch> history) {
        check(views, history);
    }

    @Property
    void aggregatingCtesEqualTheirQuery(@ForAll("aggregatingCtes") List<String> views, @ForAll("histories") List<Batch> history) {
        check(views, history);
    }

    @Property
    void holisticAggregatesGroupingSetsGroupBySpellingsAndDistinctOnEqualTheirQuery(@ForAll("holistic") List<String> views,
            @ForAll("histories") List<Batch> history) {
        check(views, history);
    }

    /**
     * A walk that carries its length without a bound never ends over a cycle: under a small recursion limit, a CREATE or
     * a sync either succeeds with the view equal to its query or fails with user.view.recursion_unbounded, never
     * another error and never a wrong view.
     */
    @Property
    void unboundedRecursionsFailWithTheRecursionCodeOrEqualTheirQuery(@ForAll("unboundedRecursions") String query,
            @ForAll("histories") List<Batch> history) {
        try (DuckDBConnection connection = DuckDb.open("jdbc:duckdb:");
                MaterializedViews views = MaterializedViews.attach(connection).recursionLimit(25, java.time.Duration.ofMinutes(2))) {
            DuckDb.run(connection, "CREATE TABLE a (k INTEGER, x INTEGER, y DECIMAL(8,2), s VARCHAR)",
                    "CREATE TABLE b (k INTEGER, z INTEGER, t VARCHAR)");
            history.get(0).run(connection);
            if (!unboundedOrDone(() -> views.createView("v0", query))) {
                assertThat(views.names()).isEmpty();
                return;
            }
            assertEqual(connection, "v0", query, "after create");
            for (int step = 1; step < history.size(); step++) {
                history.get(step).run(connection);
                List<String> before = DuckDb.rows(connection, "SELECT * FROM v0 ORDER BY ALL");
                if (!unboundedOrDone(views::sync)) {
                    assertThat(DuckDb.rows(connection, "SELECT * FROM v0 ORDER BY ALL")).as("a failed sync changes nothing")
                            .isEqualTo(before);
                    return;
                }
                assertEqual(connection, "v0", query, "after step " + step);
            }
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Runs the work; false when it failed with the recursion limit's code (any other failure fails the property). */
    private static boolean unboundedOrDone(Runnable work) {
        try {
            work.run();
            return true;
        } catch (dev.mallard.core.error.MallardException e) {
            assertThat(e.errorCode()).as(e.getMessage()).isEqualTo(dev.mallard.core.error.ErrorCode.USER_VIEW_RECURSION_UNBOUNDED);
            return false;
        }
    }

    @Provide
    Arbitrary<String> unboundedRecursions() {
        return Arbitraries.of(
                "WITH RECURSIVE w(n, d) AS (SELECT k, 0 FROM b UNION SELECT b.z, w.d + 1 FROM w JOIN b ON b.k = w.n) SELECT * FROM w",
                "WITH RECURSIVE w(n, d) AS (SELECT k, 1 FROM a WHERE k IS NOT NULL UNION SELECT b.z, w.d * 2 FROM w JOIN b "
                        + "ON b.k = w.n) SELECT n FROM w",
                "WITH RECURSIVE w(n, d) AS (SELECT k, 0 FROM b UNION SELECT b.z, w.d + 1 FROM w JOIN b ON b.k = w.n WHERE w.d < 4) "
                        + "SELECT * FROM w");
    }

    /**
     * dbsp_save then dbsp_load into a second database with the same rows: every view is created again, equal to its
     * query there and to the first database's view, and both move alike with the next writes.
     */
    @Property
    void aViewSetSavedAndLoadedIntoAnotherDatabaseEqualsItsQueriesAndTheOriginal(@ForAll("aggregations") List<String> aggregations,
            @ForAll("joins") List<String> joins, @ForAll("histories") List<Batch> history) throws Exception {
        java.nio.file.Path file = java.nio.file.Files.createTempDirectory("mallard-view-set").resolve("views.json");
        List<String> queries = new ArrayList<>(aggregations);
        queries.addAll(joins);
        try (DuckDBConnection first = DuckDb.open("jdbc:duckdb:"); DuckDBConnection second = DuckDb.open("jdbc:duckdb:");
                MaterializedViews source = MaterializedViews.attach(first); MaterializedViews target = MaterializedViews.attach(second)) {
            for (DuckDBConnection connection : List.of(first, second)) {
                DuckDb.run(connection, "CREATE TABLE a (k INTEGER, x INTEGER, y DECIMAL(8,2), s VARCHAR)",
                        "CREATE TABLE b (k INTEGER, z INTEGER, t VARCHAR)");
                history.get(0).run(connection);
            }
            for (int i = 0; i < queries.size(); i++) {
                source.createView("v" + i, queries.get(i));
            }
            int last = history.size() - 1;
            for (int step = 1; step < last; step++) {
                history.get(step).run(first);
                history.get(step).run(second);
            }
            source.sync();
            assertThat(source.save(file)).isEqualTo(queries.size());
            assertThat(target.load(file)).isEqualTo(queries.size());
            assertThat(target.names()).isEqualTo(source.names());
            for (int round = 0; round < 2; round++) {
                for (int i = 0; i < queries.size(); i++) {
                    assertEqual(second, "v" + i, queries.get(i), "after load, round " + round);
                    assertEqual(first, "v" + i, queries.get(i), "the original, round " + round);
                }
                if (round == 0 && last > 0) {
                    // The last batch on both: the loaded views move like the saved ones.
                    history.get(last).run(first);
                    history.get(last).run(second);
                    source.sync();
                    target.sync();
                }
            }
        }
    }

    /** dbsp_parallel: the same writes synced on several DuckDB threads leave every view as a serial sync does. */
    @Property
    void parallelSyncsLeaveEveryViewAsASerialSyncDoes(@ForAll("joins") List<String> joins,
            @ForAll("aggregatingCtes") List<String> ctes, @ForAll("histories") List<Batch> history) throws Exception {
        List<String> queries = new ArrayList<>(joins);
        queries.addAll(ctes);
        try (DuckDBConnection serial = DuckDb.open("jdbc:duckdb:"); DuckDBConnection parallel = DuckDb.open("jdbc:duckdb:");
                MaterializedViews one = MaterializedViews.attach(serial);
                MaterializedViews many = MaterializedViews.attach(parallel).parallel(3)) {
            for (DuckDBConnection connection : List.of(serial, parallel)) {
                DuckDb.run(connection, "CREATE TABLE a (k INTEGER, x INTEGER, y DECIMAL(8,2), s VARCHAR)",
                        "CREATE TABLE b (k INTEGER, z INTEGER, t VARCHAR)");
                history.get(0).run(connection);
            }
            for (int i = 0; i < queries.size(); i++) {
                one.createView("v" + i, queries.get(i));
                many.createView("v" + i, queries.get(i));
            }
            for (int step = 1; step < history.size(); step++) {
                history.get(step).run(serial);
                history.get(step).run(parallel);
                one.sync();
                many.sync();
                for (int i = 0; i < queries.size(); i++) {
                    // Both equal the query over the same rows, so the parallel sync left what the serial one did.
                    assertEqual(parallel, "v" + i, queries.get(i), "parallel, after step " + step);
                    assertEqual(serial, "v" + i, queries.get(i), "serial, after step " + step);
                }
            }
        }
    }

    @Provide
    Arbitrary<List<String>> holistic() {
        // Orders that leave no freedom (ties hold equal values), so the query's answer is unique.
        Arbitrary<String> call = Arbitraries.of("median(x)", "quantile_disc(x, 0.25)", "string_agg(s, ',' ORDER BY s)",
                "list(x ORDER BY x NULLS FIRST)", "quantile_cont(k, 0.5)", "sum(x)", "count(*)", "max(s)", "mode(k % 1)");
        Arbitrary<String> view = Combinators.combine(Arbitraries.of(KEYS), call.list().ofMinSize(1).ofMaxSize(3),
                Arbitraries.of("ALL", "1", "key"), Arbitraries.of(A_FILTERS))
                .as((key, calls, by, filter) -> "SELECT " + key + " AS g, " + aliased(calls) + " FROM a WHERE " + filter
                        + " GROUP BY " + (by.equals("key") ? key : by));
        // DISTINCT ON whose ORDER BY covers every output column: ties are equal rows, so the answer is unique.
        Arbitrary<String> distinctOn = Combinators.combine(Arbitraries.of(KEYS), Arbitraries.of(A_FILTERS),
                Arbitraries.of("x DESC NULLS LAST, s, y", "y NULLS FIRST, x, s", "s DESC, x DESC, y"))
                .as((key, filter, order) -> "SELECT DISTINCT ON (" + key + ") " + key + " AS g, x, s FROM a WHERE " + filter
                        + " ORDER BY " + key + ", " + order);
        Arbitrary<String> sets = Combinators.combine(Arbitraries.of("ROLLUP (k, s)", "CUBE (k, s)", "GROUPING SETS ((k), (s), ())",
                "GROUPING SETS ((k, s), (k))"), call.list().ofMinSize(1).ofMaxSize(2), Arbitraries.of(A_FILTERS))
                .as((grouping, calls, filter) -> "SELECT k, s, " + aliased(calls) + " FROM a WHERE " + filter + " GROUP BY " + grouping);
        return Arbitraries.oneOf(view, distinctOn, sets).list().ofMinSize(1).ofMaxSize(2);
    }

    /**
     * 2-4 connections write one file at once, {@code jdbc:mallard:} ones and (with 3 or more) a raw DuckDB one (inserts,
     * RETURNING, transactions that commit or roll back; the first writer also updates and deletes) while another reads
     * the views: every write that committed
     * reports so, and afterwards every view equals its query.
     */
    @Property
    void concurrentWritersThroughMallardKeepEveryViewEqualToItsQuery(@ForAll("projections") List<String> projections,
            @ForAll("aggregations") List<String> aggregations, @ForAll @net.jqwik.api.constraints.IntRange(min = 2, max = 4) int writers,
            @ForAll("concurrentHistories") List<List<Batch>> histories) throws Exception {
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("mallard-concurrent");
        String url = "jdbc:mallard:" + dir.resolve("db.duckdb");
        List<String> queries = List.of(projections.get(0), aggregations.get(0));
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(writers + 1);
        try {
            try (java.sql.Connection setup = java.sql.DriverManager.getConnection(url)) {
                DuckDb.run(setup, "CREATE TABLE a (k INTEGER, x INTEGER, y DECIMAL(8,2), s VARCHAR)",
                        "CREATE TABLE b (k INTEGER, z INTEGER, t VARCHAR)", "INSERT INTO a VALUES (1, 1, 1.5, 'p'), (2, -1, NULL, 'q')");
                for (int i = 0; i < queries.size(); i++) {
                    DuckDb.run(setup, "CREATE MATERIALIZED VIEW v" + i + " AS " + queries.get(i));
                }
            }
            java.util.concurrent.atomic.AtomicBoolean writing = new java.util.concurrent.atomic.AtomicBoolean(true);
            java.util.concurrent.ConcurrentLinkedQueue<String> failures = new java.util.concurrent.ConcurrentLinkedQueue<>();
            List<java.util.concurrent.Future<?>> running = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                List<Batch> history = histories.get(w % histories.size());
                boolean changes = w == 0;
                // With 3 or more writers the last one is a raw DuckDB connection (a duplicate of a Mallard one: same
                // database), whose writes only the triggers see.
                boolean raw = w == writers - 1 && writers >= 3;
                running.add(pool.submit(() -> {
                    try (java.sql.Connection mallard = java.sql.DriverManager.getConnection(url);
                            java.sql.Connection duplicate = raw ? mallard.unwrap(DuckDBConnection.class).duplicate() : null) {
                        java.sql.Connection connection = raw ? duplicate : mallard;
                        for (Batch batch : history) {
                            if (!changes && batch.statements().stream().anyMatch(q -> !q.startsWith("INSERT"))) {
                                continue; // Concurrent UPDATE/DELETE writers drift DuckDB's own triggers (docs/views.md).
                            }
                            try {
                                batch.runThrough(connection);
                            } catch (java.sql.SQLException e) {
                                failures.add(batch + ": " + e.getMessage());
                            }
                        }
                    }
                    return null;
                }));
            }
            java.util.concurrent.Future<?> reader = pool.submit(() -> {
                try (java.sql.Connection connection = java.sql.DriverManager.getConnection(url)) {
                    while (writing.get()) {
                        for (int i = 0; i < queries.size(); i++) {
                            DuckDb.rows(connection, "SELECT * FROM v" + i);
                        }
                    }
                }
                return null;
            });
            for (java.util.concurrent.Future<?> writer : running) {
                writer.get(5, java.util.concurrent.TimeUnit.MINUTES);
            }
            writing.set(false);
            reader.get(5, java.util.concurrent.TimeUnit.MINUTES);
            assertThat(failures).as("writes that failed (each committed or rolled back as asked)").isEmpty();
            try (java.sql.Connection check = java.sql.DriverManager.getConnection(url)) {
                // A read through Mallard syncs first, so the raw writer's last rows are in it.
                for (int i = 0; i < queries.size(); i++) {
                    assertThat(DuckDb.difference(check, "v" + i, queries.get(i))).as("v%d = %s", i, queries.get(i)).isZero();
                }
            }
        } finally {
            pool.shutdownNow();
            try (var files = java.nio.file.Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            }
        }
    }

    @Provide
    Arbitrary<List<List<Batch>>> concurrentHistories() {
        Arbitrary<Batch> returning = Arbitraries.of("INSERT INTO a VALUES (3, 2, 0.5, 'r') RETURNING x",
                "INSERT INTO b VALUES (1, 2, 'p') RETURNING *", "UPDATE a SET x = x + 1 WHERE k = 2 RETURNING k",
                "DELETE FROM a WHERE x > 4 RETURNING x")
                .map(sql -> new Batch(List.of(sql), Batch.Mode.AUTO_COMMIT, true));
        return Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(4, histories().map(h -> h.subList(1, h.size()))
                        .flatMap(h -> returning.list().ofMaxSize(2).map(r -> {
                            List<Batch> all = new ArrayList<>(h);
                            all.addAll(r);
                            return all;
                        }))))
                .list().ofMinSize(2).ofMaxSize(4);
    }

    private void check(List<String> queries, List<Batch> history) {
        try (DuckDBConnection connection = DuckDb.open("jdbc:duckdb:");
                MaterializedViews views = MaterializedViews.attach(connection)) {
            DuckDb.run(connection, "CREATE TABLE a (k INTEGER, x INTEGER, y DECIMAL(8,2), s VARCHAR)",
                    "CREATE TABLE b (k INTEGER, z INTEGER, t VARCHAR)");
            history.get(0).run(connection);
            for (int i = 0; i < queries.size(); i++) {
                views.createView("v" + i, queries.get(i));
                assertEqual(connection, "v" + i, queries.get(i), "after create");
            }
            // Small, so that writers' syncs both leave merged views' changes pending and fold them in.
            views.compactAfter(4);
            long written = 0;
            for (int step = 1; step < history.size(); step++) {
                Batch batch = history.get(step);
                written += batch.run(connection);
                for (int i = 0; i < queries.size(); i++) {
                    if (mergedOnRead(connection, "v" + i)) {
                        assertEqual(connection, "v" + i, queries.get(i), "before a sync, after step " + step + " " + batch);
                    }
                }
                if (batch.sync() || step == history.size() - 1) {
                    // A writer's sync told its rows (it may skip its poll), one not told, and a full sync.
                    switch (step % 3) {
                        case 0 -> views.syncAfterWrite(written);
                        case 1 -> views.syncAfterWrite();
                        default -> views.sync();
                    }
                    written = 0;
                    for (int i = 0; i < queries.size(); i++) {
                        assertEqual(connection, "v" + i, queries.get(i), "after step " + step + " " + batch);
                    }
                }
            }
            // Every table's rows are what its applied and pending deltas explain: no sync lost or doubled a fingerprint.
            assertThat(views.reconcile()).as("tables whose fingerprint the syncs did not explain").isEmpty();
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A view merged on read is a DuckDB view over its state and pending changes; the others are tables. */
    private static boolean mergedOnRead(DuckDBConnection connection, String view) {
        return !DuckDb.rows(connection, "SELECT 1 FROM duckdb_views() WHERE view_name = '" + view + "'").isEmpty();
    }

    private static void assertEqual(DuckDBConnection connection, String view, String query, String when) {
        assertThat(DuckDb.difference(connection, view, query))
                .as("%s: view %s = %s differs from its query %s: view %s, query %s", when, view, query, query,
                        DuckDb.rows(connection, "SELECT * FROM " + view), DuckDb.rows(connection, query))
                .isZero();
    }

    /** One step: statements run in auto-commit, or in one transaction that commits or rolls back. */
    record Batch(List<String> statements, Mode mode, boolean sync) {
        enum Mode { AUTO_COMMIT, COMMIT, ROLLBACK }

        /** Runs the batch; returns its statements' update counts, summed. */
        long run(DuckDBConnection connection) {
            List<String> all = new ArrayList<>();
            if (mode != Mode.AUTO_COMMIT) {
                all.add("BEGIN TRANSACTION");
            }
            all.addAll(statements);
            if (mode != Mode.AUTO_COMMIT) {
                all.add(mode == Mode.COMMIT ? "COMMIT" : "ROLLBACK");
            }
            return DuckDb.runCounting(connection, all.toArray(String[]::new));
        }

        /** Runs the batch through a {@code jdbc:mallard:} connection, with JDBC's own transaction calls. */
        void runThrough(java.sql.Connection connection) throws java.sql.SQLException {
            connection.setAutoCommit(mode == Mode.AUTO_COMMIT);
            try (java.sql.Statement statement = connection.createStatement()) {
                for (String sql : statements) {
                    statement.execute(sql);
                }
                if (mode == Mode.COMMIT) {
                    connection.commit();
                } else if (mode == Mode.ROLLBACK) {
                    connection.rollback();
                }
            } catch (java.sql.SQLException e) {
                if (mode != Mode.AUTO_COMMIT) {
                    connection.rollback();
                }
                throw e;
            } finally {
                connection.setAutoCommit(true);
            }
        }
    }

    @Provide
    Arbitrary<List<String>> projections() {
        Arbitrary<String> view = Combinators.combine(Arbitraries.of(A_EXPRESSIONS).list().ofMinSize(1).ofMaxSize(4),
                Arbitraries.of(A_FILTERS)).as((expressions, filter) -> "SELECT " + aliased(expressions) + " FROM a WHERE " + filter);
        return view.list().ofMinSize(1).ofMaxSize(3);
    }

    @Provide
    Arbitrary<List<String>> aggregations() {
        Arbitrary<String> call = Combinators.combine(Arbitraries.of(AGGREGATES), Arbitraries.of(ARGUMENTS))
                .as((function, argument) -> function.equals("avg") && argument.contains("y")
                        // DuckDB's own AVG over DECIMAL rounds differently depending on the plan (see docs/views.md).
                        ? "round(avg(" + argument + "), 10)"
                        : function + "(" + argument + ")");
        Arbitrary<String> filtered = Combinators.combine(Arbitraries.of("sum(x)", "count(*)", "max(y)", "min(s)", "count(k)"),
                Arbitraries.of(A_FILTERS)).as((function, filter) -> function + " FILTER (WHERE " + filter + ")");
        Arbitrary<String> distinct = Combinators.combine(Arbitraries.of("sum", "count", "avg", "min"), Arbitraries.of(ARGUMENTS))
                .as((function, argument) -> function.equals("avg") && argument.contains("y")
                        ? "round(avg(DISTINCT " + argument + "), 10)"
                        : function + "(DISTINCT " + argument + ")");
        Arbitrary<String> distinctFixed = Arbitraries.of("count(DISTINCT s)", "count(DISTINCT k) FILTER (WHERE x > 0)",
                "sum(DISTINCT x) FILTER (WHERE s IS NOT NULL)", "count(DISTINCT x % 2)");
        Arbitrary<String> aggregate = Arbitraries.oneOf(call, Arbitraries.just("count(*)"), filtered, distinct, distinctFixed);
        Arbitrary<String> view = Combinators.combine(Arbitraries.of(KEYS).set().ofMaxSize(2),
                aggregate.list().ofMinSize(1).ofMaxSize(4), Arbitraries.of(A_FILTERS), Arbitraries.of(HAVING))
                .as((keys, aggregates, filter, having) -> {
                    List<String> select = new ArrayList<>(keys);
                    select.addAll(aggregates);
                    String sql = "SELECT " + aliased(select) + " FROM a WHERE " + filter;
                    return keys.isEmpty() ? sql + having : sql + " GROUP BY " + String.join(", ", keys) + having;
                });
        Arbitrary<String> expressionOverAggregates = Arbitraries.of(
                "SELECT k AS c0, sum(x) + count(*) AS c1, CASE WHEN max(x) > 2 THEN 'hi' END AS c2 FROM a GROUP BY k",
                "SELECT s AS c0, coalesce(min(y), 0) * 2 AS c1, count(x) - count(*) AS c2 FROM a GROUP BY s",
                "SELECT k + 1 AS c0, avg(x) AS c1 FROM a GROUP BY k + 1",
                // Calls of one argument share one sum and one count; a DISTINCT one keeps its own.
                "SELECT k AS c0, count(x) AS c1, sum(x) AS c2, avg(x) AS c3, sum(DISTINCT x) AS c4, count(*) AS c5 FROM a GROUP BY k "
                        + "HAVING sum(x) IS NOT NULL OR count(x) = 0",
                "SELECT sum(y) AS c0, count(y) AS c1, round(avg(y), 10) AS c2 FROM a",
                "SELECT s AS c0 FROM a GROUP BY s",
                "SELECT DISTINCT k AS c0, s AS c1 FROM a",
                "SELECT DISTINCT x % 2 AS c0 FROM a WHERE y > 0",
                "SELECT k AS c0, count(DISTINCT s) AS c1, sum(DISTINCT x) AS c2, count(DISTINCT x) + count(*) AS c3 FROM a GROUP BY k "
                        + "HAVING count(DISTINCT s) < 3",
                "SELECT count(DISTINCT k) AS c0, sum(DISTINCT y) AS c1, avg(DISTINCT x) AS c2 FROM a");
        return Arbitraries.oneOf(view, expressionOverAggregates).list().ofMinSize(1).ofMaxSize(3);
    }

    @Provide
    Arbitrary<List<String>> joins() {
        Arbitrary<String> projection = Combinators.combine(Arbitraries.of(JOIN_EXPRESSIONS).list().ofMinSize(1).ofMaxSize(3),
                Arbitraries.of(JOINS), Arbitraries.of(JOIN_FILTERS))
                .as((expressions, join, filter) -> "SELECT " + aliased(expressions) + " FROM " + join + " WHERE " + filter);
        Arbitrary<String> aggregate = Combinators.combine(Arbitraries.of("b.t", "a.k", "b.z % 2"), Arbitraries.of(JOINS),
                Arbitraries.of("sum(a.x)", "count(*)", "min(b.z)", "max(a.y)", "avg(a.x + b.z)", "count(b.t)",
                        "count(DISTINCT b.t)", "sum(DISTINCT a.x)"))
                .as((key, join, aggregate2) -> "SELECT " + key + " AS c0, " + aggregate2 + " AS c1, count(*) AS c2 FROM "
                        + join + " GROUP BY " + key);
        Arbitrary<String> fixed = Arbitraries.of(
                "SELECT a1.x AS c0, a2.s AS c1 FROM a a1 JOIN a a2 ON a1.k = a2.k WHERE a1.x < a2.x",
                "SELECT a.x AS c0, b.z AS c1, b2.t AS c2 FROM a JOIN b ON a.k = b.k JOIN b b2 ON b.z = b2.z",
                "SELECT * FROM a JOIN b ON a.k = b.k",
                "SELECT b2.t AS c0, sum(a.x) AS c1, max(b.z) AS c2 FROM a JOIN b ON a.k = b.k JOIN b b2 ON a.k = b2.z GROUP BY b2.t",
                "SELECT k AS c0, s AS c1 FROM a WHERE x > 0 UNION ALL SELECT k, t FROM b UNION ALL SELECT a.k, b.t FROM a JOIN b ON a.k = b.k",
                "SELECT k AS c0, s AS c1 FROM a UNION SELECT k, t FROM b WHERE z > 0",
                "SELECT x AS c0 FROM a UNION SELECT z FROM b UNION SELECT k FROM a");
        return Arbitraries.oneOf(projection, aggregate, fixed).list().ofMinSize(1).ofMaxSize(3);
    }

    @Provide
    Arbitrary<List<String>> outerJoins() {
        Arbitrary<String> projection = Combinators.combine(Arbitraries.of(JOIN_EXPRESSIONS).list().ofMinSize(1).ofMaxSize(3),
                Arbitraries.of(OUTER_JOINS), Arbitraries.of(JOIN_FILTERS))
                .as((expressions, join, filter) -> "SELECT " + aliased(expressions) + " FROM " + join + " WHERE " + filter);
        Arbitrary<String> semi = Combinators.combine(Arbitraries.of(A_EXPRESSIONS).list().ofMinSize(1).ofMaxSize(3)
                        .map(list -> list.stream().map(e -> e.replaceAll("\\b([xksy])\\b", "a.$1")).toList()),
                Arbitraries.of(SEMI_JOINS)).as((expressions, join) -> "SELECT " + aliased(expressions) + " FROM " + join);
        Arbitrary<String> aggregate = Combinators.combine(Arbitraries.of("b.t", "a.k", "b.z % 2", "a.s"),
                Arbitraries.of(OUTER_JOINS),
                Arbitraries.of("sum(a.x)", "count(*)", "min(b.z)", "max(a.y)", "avg(a.x + b.z)", "count(b.t)", "count(a.k)"))
                .as((key, join, aggregate2) -> "SELECT " + key + " AS c0, " + aggregate2 + " AS c1, count(*) AS c2 FROM "
                        + join + " GROUP BY " + key);
        Arbitrary<String> fixed = Arbitraries.of(
                "SELECT * FROM a FULL JOIN b ON a.k = b.k",
                "SELECT DISTINCT a.k AS c0, b.t AS c1 FROM a LEFT JOIN b ON a.k = b.k",
                "SELECT a.s AS c0, b.t AS c1 FROM a LEFT JOIN b ON a.k = b.k WHERE b.k IS NULL",
                "SELECT count(*) AS c0, count(b.k) AS c1 FROM a LEFT JOIN b ON a.k = b.k",
                "SELECT a.k AS c0 FROM a LEFT JOIN b ON a.k = b.k UNION ALL SELECT b.k FROM a RIGHT JOIN b ON a.x = b.z");
        return Arbitraries.oneOf(projection, semi, aggregate, fixed).list().ofMinSize(1).ofMaxSize(3);
    }

    @Provide
    Arbitrary<List<String>> ctesAndSetOperations() {
        Arbitrary<String> left = Arbitraries.of("SELECT k, s FROM a", "SELECT k, s FROM a WHERE x > 0",
                "SELECT a.k, b.t FROM a JOIN b ON a.k = b.k", "SELECT k, t FROM b WHERE z IS NOT NULL",
                "(SELECT k, s FROM a UNION ALL SELECT k, t FROM b)");
        Arbitrary<String> right = Arbitraries.of("SELECT k, t FROM b", "SELECT k, s FROM a WHERE x > 0",
                "SELECT k + 1, s FROM a WHERE y < 0", "SELECT b.z, a.s FROM a LEFT JOIN b ON a.x = b.z",
                "(SELECT k, 'p' FROM b UNION ALL SELECT k, t FROM b)");
        Arbitrary<String> setOperation = Combinators.combine(left, Arbitraries.of("EXCEPT", "INTERSECT", "EXCEPT ALL",
                "INTERSECT ALL"), right).as((l, op, r) -> l + " " + op + " " + r);
        Arbitrary<String> cte = Arbitraries.of(
                "WITH p AS (SELECT k, x FROM a WHERE x > 0) SELECT p.k AS c0, b.t AS c1 FROM p JOIN b ON p.k = b.k",
                "WITH p AS (SELECT k, x, s FROM a), q AS (SELECT k AS kk, s FROM p WHERE x IS NOT NULL) "
                        + "SELECT kk AS c0, count(*) AS c1, max(s) AS c2 FROM q GROUP BY kk",
                "SELECT c0, sum(c1) AS c1 FROM (SELECT k AS c0, x AS c1 FROM a UNION ALL SELECT k, z FROM b) AS u GROUP BY c0",
                "WITH p(m, n) AS (SELECT k, z FROM b) SELECT a.x AS c0, p.n AS c1 FROM a LEFT JOIN p ON a.k = p.m",
                "SELECT * FROM (SELECT a.k, b.z FROM a JOIN b ON a.k = b.k) AS j(c0, c1) WHERE c1 > 0",
                "WITH p AS (SELECT k, s FROM a) SELECT DISTINCT s AS c0 FROM p",
                "WITH p AS (SELECT k, x FROM a WHERE s IS NOT NULL) SELECT p1.x AS c0, p2.x AS c1 FROM p p1 JOIN p p2 ON p1.k = p2.k",
                "WITH p AS (SELECT k, s FROM a WHERE x > 0) SELECT k AS c0, s AS c1 FROM p EXCEPT SELECT k, t FROM b",
                "WITH b AS (SELECT k, x AS z FROM a) SELECT b.k AS c0, b.z AS c1 FROM b",
                "SELECT x AS c0 FROM a EXCEPT ALL SELECT z FROM b",
                "(SELECT k AS c0 FROM a UNION ALL SELECT z FROM b) INTERSECT ALL SELECT k FROM a WHERE x > 0");
        return Arbitraries.oneOf(setOperation, cte).list().ofMinSize(1).ofMaxSize(3);
    }

    @Provide
    Arbitrary<List<String>> subqueries() {
        Arbitrary<String> predicate = Arbitraries.of("k IN (SELECT k FROM b WHERE z > 0)", "k NOT IN (SELECT z FROM b)",
                "x IN (SELECT b.z FROM b)", "x NOT IN (SELECT z FROM b WHERE t = 'p')",
                "EXISTS (SELECT 1 FROM b WHERE b.t = 'p')", "NOT EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND b.z > a.x)",
                "EXISTS (SELECT * FROM b WHERE b.k = a.k)", "(k + 1) IN (SELECT b.k FROM b JOIN a a2 ON b.z = a2.x)",
                "k IN (SELECT a2.k FROM a AS a2 WHERE a2.x > 2)", "s NOT IN (SELECT DISTINCT t FROM b WHERE k IN (SELECT x FROM a a3))",
                "NOT EXISTS (SELECT 1 FROM b LEFT JOIN a a4 ON b.z = a4.x WHERE a4.k IS NULL AND b.k = a.k)");
        Arbitrary<String> projection = Combinators.combine(Arbitraries.of(A_EXPRESSIONS).list().ofMinSize(1).ofMaxSize(3),
                predicate, Arbitraries.of("", " AND x > 0", " OR s IS NULL"))
                .as((expressions, p, more) -> "SELECT " + aliased(expressions) + " FROM a WHERE " + p
                        + (more.startsWith(" OR") ? " AND (k IS NULL" + more + ")" : more));
        Arbitrary<String> grouped = Combinators.combine(Arbitraries.of("k", "s"), predicate)
                .as((key, p) -> "SELECT " + key + " AS c0, count(*) AS c1, sum(x) AS c2 FROM a WHERE " + p + " GROUP BY " + key);
        Arbitrary<String> fixed = Arbitraries.of(
                "SELECT b.t AS c0 FROM b WHERE b.k NOT IN (SELECT k FROM a WHERE s = 'p') AND EXISTS (SELECT 1 FROM a WHERE a.x = b.z)",
                "SELECT a.k AS c0, b.t AS c1 FROM a JOIN b ON a.k = b.k WHERE a.x IN (SELECT DISTINCT z FROM b b2 WHERE t IS NOT NULL)",
                "SELECT a.k AS c0, b.z AS c1 FROM a LEFT JOIN b ON a.k = b.k WHERE a.s IN (SELECT t FROM b b2)");
        return Arbitraries.oneOf(projection, grouped, fixed).list().ofMinSize(1).ofMaxSize(3);
    }

    /**
     * Transitive closures and bounded walks over b's edges (k -> z), some seeded from a or joining a in the
     * step; the values are small, so every recursion ends.
     */
    @Provide
    Arbitrary<List<String>> recursions() {
        Arbitrary<String> base = Arbitraries.of("SELECT k, z FROM b", "SELECT k, x FROM a WHERE x IS NOT NULL",
                "SELECT k, z FROM b WHERE t IS NOT NULL UNION SELECT x, k FROM a", "SELECT a.k, b.z FROM a JOIN b ON a.x = b.k");
        Arbitrary<String> step = Arbitraries.of("SELECT r.p, b.z FROM r JOIN b ON r.q = b.k",
                "SELECT r.p, b.z FROM b JOIN r ON r.q = b.k WHERE b.t IS DISTINCT FROM 'q'",
                "SELECT r.p, a.x FROM r JOIN b ON r.q = b.k JOIN a ON a.k = b.z",
                "SELECT r.p, b.z FROM r, b WHERE r.q = b.k AND b.z > r.p");
        Arbitrary<String> select = Arbitraries.of("SELECT * FROM r", "SELECT q AS c0, p + 1 AS c1 FROM r WHERE p IS NOT NULL",
                "SELECT p AS c0 FROM r AS w WHERE w.q > 0");
        Arbitrary<String> closure = Combinators.combine(base, step, select)
                .as((b, st, sel) -> "WITH RECURSIVE r(p, q) AS (" + b + " UNION " + st + ") " + sel);
        Arbitrary<String> fixed = Arbitraries.of(
                "WITH RECURSIVE w(n, d) AS (SELECT k, 0 FROM b UNION SELECT b.z, w.d + 1 FROM w JOIN b ON b.k = w.n WHERE w.d < 3) "
                        + "SELECT * FROM w",
                "WITH RECURSIVE r(p, q) AS (SELECT k, z FROM b UNION SELECT r.p, b.z FROM r JOIN b ON r.q = b.k) "
                        + "SELECT p AS c0, q AS c1 FROM r WHERE p = q");
        return Arbitraries.oneOf(closure, fixed).list().ofMinSize(1).ofMaxSize(2);
    }

    /**
     * Window functions (with and without PARTITION BY, QUALIFY, over a join) and ORDER BY ... LIMIT. Every
     * ORDER BY that decides which row gets a number or a place covers all the columns the view shows, so rows
     * that tie are equal and the query's answer is one bag (docs/views.md, "Ties").
     */
    @Provide
    Arbitrary<List<String>> windows() {
        Arbitrary<String> window = Arbitraries.of("rank() OVER (PARTITION BY k ORDER BY x)",
                "row_number() OVER (PARTITION BY k ORDER BY x, y, s)", "count(*) OVER (PARTITION BY k)",
                "sum(x) OVER (PARTITION BY k ORDER BY x)", "dense_rank() OVER (ORDER BY s)", "count(x) OVER ()",
                "min(y) OVER (PARTITION BY s, k)", "first_value(s) OVER (PARTITION BY k ORDER BY x DESC, y, s)",
                "avg(x) OVER (PARTITION BY x % 2)", "max(x) OVER (PARTITION BY k, s)",
                "lag(x) OVER (PARTITION BY k ORDER BY x, y, s)",
                "sum(x) OVER (PARTITION BY s ORDER BY x, y, k ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)");
        Arbitrary<String> projected = Combinators.combine(Arbitraries.of(KEYS).set().ofMinSize(1).ofMaxSize(2).map(List::copyOf),
                window.list().ofMinSize(1).ofMaxSize(2), Arbitraries.of("TRUE", "x > 0", "s IS NOT NULL"))
                .as((columns, calls, filter) -> {
                    List<String> select = new ArrayList<>(columns);
                    select.add("y");
                    select.addAll(calls);
                    return "SELECT " + aliased(select) + " FROM a WHERE " + filter;
                });
        Arbitrary<String> topK = Combinators.combine(
                Arbitraries.of("k, x, y, s", "x", "s, k", "x + k AS c0, s"),
                Arbitraries.of("x DESC, k, y, s", "x DESC NULLS FIRST, k, y, s", "coalesce(x, 0), k NULLS FIRST, y, s",
                        "s, x, k, y"),
                Arbitraries.of("LIMIT 1", "LIMIT 3", "LIMIT 2 OFFSET 1"),
                Arbitraries.of("", " WHERE k IS NOT NULL"))
                .as((columns, order, limit, where) -> "SELECT " + columns + " FROM a" + where + " ORDER BY " + order + " " + limit);
        Arbitrary<String> fixed = Arbitraries.of(
                "SELECT k, x FROM a QUALIFY rank() OVER (PARTITION BY k ORDER BY x DESC) <= 2",
                "SELECT a.k, b.z, rank() OVER (PARTITION BY a.k ORDER BY b.z) AS r FROM a JOIN b ON a.k = b.k",
                "SELECT k, s, rank() OVER (PARTITION BY k, s ORDER BY x) AS r, count(*) OVER (PARTITION BY k) AS n, x FROM a",
                "SELECT a.k, b.z FROM a JOIN b ON a.k = b.k ORDER BY b.z DESC, a.k LIMIT 2",
                "SELECT k, z FROM b WHERE k NOT IN (SELECT k FROM a WHERE x > 0) ORDER BY z, k LIMIT 2",
                "SELECT k, x, count(*) OVER (PARTITION BY k) AS n FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k)");
        return Arbitraries.oneOf(projected, topK, fixed).list().ofMinSize(1).ofMaxSize(2);
    }

    /** Uncorrelated and correlated scalar subqueries in the SELECT list and the WHERE clause, on either table. */
    @Provide
    Arbitrary<List<String>> scalarSubqueries() {
        Arbitrary<String> value = Arbitraries.of("(SELECT max(z) FROM b)", "(SELECT count(*) FROM b WHERE z > 0)",
                "(SELECT count(*) FROM b WHERE b.k = a.k)", "(SELECT sum(z) FROM b WHERE b.k = a.k AND z > 0)",
                "(SELECT min(a2.x) FROM a AS a2 WHERE a2.k = a.k)", "(SELECT avg(x) FROM a AS a3)",
                "(SELECT max(b.z) FROM b WHERE b.k = a.k AND b.t = a.s)");
        Arbitrary<String> selected = Combinators.combine(Arbitraries.of(A_EXPRESSIONS).list().ofMinSize(1).ofMaxSize(2), value)
                .as((expressions, subquery) -> {
                    List<String> select = new ArrayList<>(expressions);
                    select.add(subquery);
                    return "SELECT " + aliased(select) + " FROM a";
                });
        Arbitrary<String> filtered = Combinators.combine(Arbitraries.of("x", "k", "x + k"), Arbitraries.of(">", "<=", "="), value)
                .as((left, op, subquery) -> "SELECT k AS c0, x AS c1, s AS c2 FROM a WHERE " + left + " " + op + " " + subquery);
        Arbitrary<String> fixed = Arbitraries.of(
                "SELECT k, x FROM a WHERE x > (SELECT avg(a2.x) FROM a a2 WHERE a2.k = a.k)",
                "SELECT b.k, b.z, (SELECT max(a.y) FROM a WHERE a.k = b.k AND a.s = b.t) AS m FROM b",
                "SELECT a.k, b.t, (SELECT count(*) FROM a a2 WHERE a2.k = a.k) AS n FROM a JOIN b ON a.k = b.k",
                "SELECT k, x, (SELECT count(*) FROM b WHERE b.k = a.k) AS n, (SELECT max(z) FROM b) AS m FROM a "
                        + "WHERE s IS NULL OR x < (SELECT sum(z) FROM b WHERE b.k = a.k)",
                // No common key: one partition.
                "SELECT k, x, (SELECT count(*) FROM b WHERE b.k = a.k) AS n, (SELECT count(*) FROM b WHERE b.z = a.x) AS m FROM a",
                "SELECT k, x, dense_rank() OVER (ORDER BY x) AS r, (SELECT max(z) FROM b) AS m FROM a");
        return Arbitraries.oneOf(selected, filtered, fixed).list().ofMinSize(1).ofMaxSize(2);
    }

    /**
     * CTEs and subqueries in FROM with GROUP BY, global aggregates, HAVING and DISTINCT, joined, nested, read
     * twice, under IN, under a window and a top-k.
     */
    @Provide
    Arbitrary<List<String>> aggregatingCtes() {
        Arbitrary<String> grouped = Arbitraries.of("SELECT k, sum(x) AS sx, count(*) AS n FROM a GROUP BY k",
                "SELECT k, max(y) AS sx, count(s) AS n FROM a WHERE x > 0 GROUP BY k",
                "SELECT a.k, count(b.t) AS sx, min(b.z) AS n FROM a LEFT JOIN b ON a.k = b.k GROUP BY a.k",
                "SELECT k, count(DISTINCT s) AS sx, sum(x) AS n FROM a GROUP BY k HAVING count(*) > 1",
                "SELECT DISTINCT k, x % 2 AS sx, 0 AS n FROM a");
        Arbitrary<String> reader = Arbitraries.of("SELECT g.k, g.sx, b.z FROM g JOIN b ON g.k = b.k",
                "SELECT b.t, g.sx, g.n FROM b LEFT JOIN g ON g.k = b.k", "SELECT * FROM g WHERE n > 0",
                "SELECT g1.k, g2.k AS k2 FROM g g1 JOIN g g2 ON g1.n = g2.n", "SELECT n, count(*) AS c FROM g GROUP BY n");
        Arbitrary<String> withCte = Combinators.combine(grouped, reader).as((g, r) -> "WITH g AS (" + g + ") " + r);
        Arbitrary<String> fixed = Arbitraries.of(
                "WITH tot AS (SELECT count(*) AS n, sum(x) AS s FROM a) SELECT b.k, tot.n, tot.s FROM b, tot",
                "WITH g AS (SELECT k, sum(x) AS sx FROM a GROUP BY k), h AS (SELECT sx % 3 AS bucket, count(*) AS n FROM g "
                        + "GROUP BY sx % 3) SELECT * FROM h",
                "WITH g AS (SELECT k, avg(x) AS ax FROM a GROUP BY k), f AS (SELECT k, ax FROM g WHERE ax > 0) "
                        + "SELECT f.k, b.t FROM f JOIN b ON f.k = b.k",
                "SELECT k, z FROM b WHERE k IN (SELECT c.k FROM (SELECT k, count(*) AS n FROM a GROUP BY k) c WHERE c.n > 1)",
                "WITH g AS (SELECT k, sum(x) AS sx FROM a GROUP BY k) SELECT k, sx, rank() OVER (ORDER BY sx) AS r FROM g",
                "WITH g AS (SELECT k, sum(x) AS sx FROM a GROUP BY k) SELECT k, sx FROM g ORDER BY sx DESC NULLS LAST, k LIMIT 2",
                "SELECT a.k, a.x, m.top FROM a JOIN (SELECT k, max(z) AS top FROM b GROUP BY k) AS m(k, top) ON a.k = m.k");
        return Arbitraries.oneOf(withCte, fixed).list().ofMinSize(1).ofMaxSize(2);
    }

    /** A first view over the tables (of any family), then views that read it (v0) and each other (v1). */
    @Provide
    Arbitrary<List<String>> cascades() {
        Arbitrary<String> upstream = Arbitraries.of(
                "SELECT k AS c0, sum(x) AS c1, count(*) AS c2 FROM a GROUP BY k",
                "SELECT a.k AS c0, a.x AS c1, b.t AS c2 FROM a JOIN b ON a.k = b.k",
                "SELECT DISTINCT k AS c0, s AS c1, x AS c2 FROM a",
                "SELECT k AS c0, x AS c1, rank() OVER (PARTITION BY k ORDER BY x) AS c2 FROM a",
                "WITH g AS (SELECT k, sum(x) AS sx, count(*) AS n FROM a GROUP BY k) SELECT k AS c0, sx AS c1, n AS c2 FROM g",
                "WITH RECURSIVE r(p, q) AS (SELECT k, z FROM b UNION SELECT r.p, b.z FROM r JOIN b ON r.q = b.k) "
                        + "SELECT p AS c0, q AS c1, p + q AS c2 FROM r");
        Arbitrary<String> middle = Arbitraries.of(
                "SELECT c2 AS d0, count(*) AS d1, min(c0) AS d2 FROM v0 GROUP BY c2",
                "SELECT v0.c0 AS d0, v0.c1 AS d1, b.z AS d2 FROM v0 JOIN b ON v0.c0 = b.k",
                "SELECT c0 AS d0, c1 AS d1, c2 AS d2 FROM v0 WHERE c1 IS NOT NULL");
        Arbitrary<String> last = Arbitraries.of(
                "SELECT d0, count(*) AS e1 FROM v1 GROUP BY d0",
                "SELECT * FROM v1 UNION ALL SELECT c0, c1, c2 FROM v0");
        return Combinators.combine(upstream, middle, last).as(List::of);
    }

    @Provide
    Arbitrary<List<Batch>> histories() {
        Arbitrary<Integer> key = Arbitraries.integers().between(0, 3).injectNull(0.2);
        Arbitrary<Integer> number = Arbitraries.integers().between(-4, 5).injectNull(0.2);
        Arbitrary<String> decimal = Arbitraries.integers().between(-300, 300).map(i -> i / 100 + "." + Math.abs(i % 100))
                .injectNull(0.2).map(d -> d == null ? "NULL" : d);
        Arbitrary<String> text = Arbitraries.of("'p'", "'q'", "'r'", "NULL");
        Arbitrary<String> rowA = Combinators.combine(key, number, decimal, text)
                .as((k, x, y, s) -> "(" + k + ", " + x + ", " + y + ", " + s + ")");
        Arbitrary<String> rowB = Combinators.combine(key, number, text).as((k, z, t) -> "(" + k + ", " + z + ", " + t + ")");
        // Duplicate rows come from repeating a generated row.
        Arbitrary<String> insertA = rowA.list().ofMinSize(1).ofMaxSize(4)
                .map(rows -> "INSERT INTO a VALUES " + String.join(", ", rows) + ", " + rows.get(0));
        Arbitrary<String> insertB = rowB.list().ofMinSize(1).ofMaxSize(3)
                .map(rows -> "INSERT INTO b VALUES " + String.join(", ", rows));
        Arbitrary<String> change = Arbitraries.of(
                "UPDATE a SET x = x + 1 WHERE k = 1", "UPDATE a SET s = 'q' WHERE x < 0", "UPDATE b SET k = k + 1 WHERE z > 2",
                "UPDATE a SET k = NULL WHERE s = 'p'", "UPDATE a SET y = y * -1", "UPDATE b SET t = NULL WHERE k = 0",
                "DELETE FROM a WHERE x > 2", "DELETE FROM a WHERE k IS NULL", "DELETE FROM b WHERE k = 2",
                "DELETE FROM a WHERE rowid = (SELECT min(rowid) FROM a)", "DELETE FROM b WHERE rowid = (SELECT max(rowid) FROM b)",
                "TRUNCATE b");
        Arbitrary<String> statement = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(3, insertA), net.jqwik.api.Tuple.of(2, insertB), net.jqwik.api.Tuple.of(4, change));
        Arbitrary<Batch> batch = Combinators.combine(statement.list().ofMinSize(1).ofMaxSize(4),
                Arbitraries.frequency(net.jqwik.api.Tuple.of(6, Batch.Mode.AUTO_COMMIT), net.jqwik.api.Tuple.of(2, Batch.Mode.COMMIT),
                        net.jqwik.api.Tuple.of(1, Batch.Mode.ROLLBACK)),
                Arbitraries.of(true, true, false)).as(Batch::new);
        Arbitrary<Batch> initial = Combinators.combine(insertA.list().ofMaxSize(2), insertB.list().ofMaxSize(2))
                .as((as, bs) -> {
                    List<String> statements = new ArrayList<>(as);
                    statements.addAll(bs);
                    return new Batch(statements, Batch.Mode.AUTO_COMMIT, true);
                });
        return Combinators.combine(initial, batch.list().ofMinSize(1).ofMaxSize(6)).as((first, rest) -> {
            List<Batch> all = new ArrayList<>();
            all.add(first);
            all.addAll(rest);
            return all;
        });
    }

    private static String aliased(List<String> expressions) {
        List<String> items = new ArrayList<>();
        for (int i = 0; i < expressions.size(); i++) {
            items.add(expressions.get(i) + " AS c" + i);
        }
        return String.join(", ", items);
    }
}
