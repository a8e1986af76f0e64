// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.core.engine.Engine;
import dev.mallard.views.MaterializedViews;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Incremental maintenance against recompute, per view shape and table size: a fact table {@code facts(id, g, x)}
 * of --rows rows (1,000 groups), a 1,000-row dimension {@code dims} and a 10-row {@code labels}; one view at a
 * time. Single-row commits (each followed by the sync a writer runs, {@code syncAfterWrite}, timed together), reads of
 * the whole view after them, 10k-row batches (the write timed with its sync, since session 9), and {@code refresh()} (REFRESH MATERIALIZED VIEW)
 * on the same data, timed the same way.
 */
@Command(name = "views", mixinStandardHelpOptions = true, description = {
    "Materialized view maintenance: single-row commit + sync latency, batch throughput and REFRESH.",
    "Commit + sync latency (p50, p99) of single-row INSERT, UPDATE and DELETE, 10k-row batch throughput in changed rows/s,",
    "and REFRESH (full recompute) of the same view, per shape and size."})
final class ViewsBench implements Callable<Integer> {
    /** A view of the benchmark; {@code issue} is its letter in the issue's list, or empty for an extra shape. */
    private record Shape(String issue, String name, String sql) {}

    /**
     * A single-row write; {@code sql} has {@code ?} where the id goes: written in as text, or bound as a parameter of
     * a statement prepared once ({@code prepared}), as an application's JDBC code would.
     */
    private record Commit(String name, String sql, boolean prepared) {
        Commit(String name, String sql) {
            this(name, sql, false);
        }
    }

    /** Wall times of each operation, and the process's CPU time per operation over all of them (all threads). */
    private record Timings(double[] millis, double cpuMillis) {}

    private static final List<Shape> SHAPES = List.of(
            new Shape("a", "sum_count_avg_by_group", "SELECT g, sum(x) AS total, count(*) AS n, avg(x) AS mean FROM facts GROUP BY g"),
            new Shape("b", "min_max_by_group", "SELECT g, min(x) AS lo, max(x) AS hi FROM facts GROUP BY g"),
            new Shape("c", "join_then_aggregate", "SELECT d.region, sum(f.x) AS total, count(*) AS n FROM facts f JOIN dims d ON f.g = d.g "
                    + "GROUP BY d.region"),
            new Shape("d", "three_way_join", "SELECT f.id, f.x, d.region, l.label FROM facts f JOIN dims d ON f.g = d.g "
                    + "JOIN labels l ON d.region = l.region"),
            new Shape("", "three_way_join_aggregate", "SELECT l.label, count(*) AS n, sum(f.x) AS total FROM facts f "
                    + "JOIN dims d ON f.g = d.g JOIN labels l ON d.region = l.region GROUP BY l.label"),
            new Shape("", "filtered_projection", "SELECT id, g, x * 2 AS doubled FROM facts WHERE x % 10 = 0"),
            new Shape("", "many_groups", "SELECT id // 10 AS k, sum(x) AS total, count(*) AS n FROM facts GROUP BY id // 10"),
            // Costs that grew with the table (issue 21): a change on the padded side of an outer join, count(DISTINCT).
            new Shape("", "left_join", "SELECT f.id, f.x, d.region FROM facts f LEFT JOIN dims d ON f.g = d.g"),
            new Shape("", "count_distinct_by_group", "SELECT g, count(DISTINCT x) AS xs FROM facts GROUP BY g"));

    /** One figure of the run, kept for the summary by size. */
    private record Figure(String view, String workload, int rows, double p50, double writeMs, double rowsPerSecond) {}

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--rows", split = ",", description = "Rows in the fact table, one run per size (default ${DEFAULT-VALUE}).",
            defaultValue = "1000000,10000000")
    List<Integer> sizes;

    @Option(names = "--commits", description = "Single-row commits per workload (default ${DEFAULT-VALUE}).", defaultValue = "200")
    int commits;

    @Option(names = "--batch-rows", description = "Rows per batch (default ${DEFAULT-VALUE}).", defaultValue = "10000")
    int batchRows;

    @Option(names = "--batches", description = "Batches per workload (default ${DEFAULT-VALUE}).", defaultValue = "15")
    int batches;

    @Option(names = "--warmup-batches", description = "Batches per workload run first and not timed, so the sync's code is compiled "
            + "as in a long-running process (default ${DEFAULT-VALUE}).", defaultValue = "5")
    int warmupBatches;

    @Option(names = "--refreshes", description = "REFRESH runs per view (default ${DEFAULT-VALUE}).", defaultValue = "3")
    int refreshes;

    @Option(names = "--view", description = "Run only the views whose name contains this text.")
    String only;

    @Option(names = "--json", description = "Print one JSON object per (view, workload, rows), then one with the memory figures.")
    boolean json;

    @Option(names = "--nexmark", negatable = true, description = "Also run the Nexmark-style views (q3, q5, q7, q8) over a "
            + "generated bid/auction/person stream of --rows bids (default ${DEFAULT-VALUE}).", defaultValue = "true")
    boolean nexmark;

    @Option(names = "--nexmark-commits", description = "Single-row commits per Nexmark view (default ${DEFAULT-VALUE}): q5 and q7 "
            + "recompute from the stream, seconds per commit at 10M bids.", defaultValue = "20")
    int nexmarkCommits;

    private final List<Figure> figures = new ArrayList<>();
    /** Dimension rows the padded-side inserts added, which its deletes then remove (oldest first). */
    private final java.util.ArrayDeque<Long> paddedIds = new java.util.ArrayDeque<>();
    private long nextPaddedId;

    private PrintWriter out;
    private final ObjectMapper mapper = new ObjectMapper();
    private long duckDbPeakBytes;
    /** The current view's query run into a table, for the report beside REFRESH. */
    private double queryMs;
    /** The next id a single-row insert takes: above the loaded rows and the batches' ids. */
    private long nextId;

    @Override
    public Integer call() throws Exception {
        out = spec.commandLine().getOut();
        if (!json) {
            out.printf("%-26s %-21s %9s %8s %8s %8s %8s %12s %11s %8s %9s %8s%n", "view", "workload", "rows", "p50 ms", "p99 ms",
                    "cpu ms", "write ms", "rows/s", "refresh ms", "ratio", "query ms", "ratio");
        }
        for (int rows : sizes) {
            for (Shape shape : SHAPES) {
                if (only == null || shape.name().contains(only)) {
                    run(shape, rows);
                }
            }
            if (nexmark) {
                for (Nexmark.View view : Nexmark.views(rows)) {
                    if (only == null || view.name().contains(only)) {
                        runNexmark(view, rows);
                    }
                }
            }
        }
        reportMemory();
        reportBySize();
        return 0;
    }

    private void run(Shape shape, int rows) throws Exception {
        try (Engine engine = Engine.inMemory(); Statement sql = engine.connection().createStatement()) {
            load(sql, rows);
            nextId = 4L * rows;
            Random random = new Random(42);
            List<Commit> workloads = workloads(shape, rows);
            // The same writes on the same table without a view: what the commit costs without maintenance.
            double[] writeOnly = new double[workloads.size()];
            for (int w = 0; w < workloads.size(); w++) {
                writeOnly[w] = percentile(commits(sql, null, workloads.get(w), rows, random).millis(), 0.5);
            }
            try (MaterializedViews views = MaterializedViews.attach(engine.connection())) {
                views.createView(shape.name(), shape.sql());
                double[] refresh = new double[refreshes];
                for (int i = 0; i < refreshes; i++) {
                    long start = System.nanoTime();
                    views.refresh(shape.name());
                    refresh[i] = millisSince(start);
                }
                double refreshMs = percentile(refresh, 0.5);
                queryMs = queryMillis(sql, shape.sql());
                // The floor of every sync: one that finds nothing captured (begin, read the counts, commit).
                report(shape, "sync_nothing_captured", rows, idleSyncs(views), Double.NaN, Double.NaN, refreshMs);
                for (int w = 0; w < workloads.size(); w++) {
                    Timings timings = commits(sql, views, workloads.get(w), rows, random);
                    double p50 = percentile(timings.millis(), 0.5);
                    report(shape, workloads.get(w).name(), rows, timings, writeOnly[w], 1000 / p50, refreshMs);
                }
                // What a reader pays, with the single-row commits' changes as a writer leaves them, and the same rows read
                // from a table (what a view kept as a table costs to read).
                report(shape, "read_view", rows, reads(sql, shape.name()), Double.NaN, Double.NaN, refreshMs);
                sql.execute("CREATE TEMP TABLE view_rows AS SELECT * FROM " + shape.name());
                report(shape, "read_rows_as_table", rows, reads(sql, "view_rows"), Double.NaN, Double.NaN, refreshMs);
                sql.execute("DROP TABLE view_rows");
                long firstId = 2L * rows;
                batch(sql, views, shape, rows, "insert_" + batchRows, refreshMs, b -> "INSERT INTO facts SELECT " + (firstId + (long) b * batchRows)
                        + " + range, (range * 7919) % 1000, hash(range) % 1000 FROM range(" + batchRows + ")");
                batch(sql, views, shape, rows, "delete_" + batchRows, refreshMs, b -> "DELETE FROM facts WHERE id >= "
                        + ((long) b * batchRows) + " AND id < " + ((long) (b + 1) * batchRows));
                duckDbPeakBytes = Math.max(duckDbPeakBytes, duckDbBytes(sql));
            }
        }
    }

    /**
     * One Nexmark view over a stream of {@code rows} bids: single-row appends to the stream it reads (each with its
     * sync), against the same appends without the view, and 10k-row appended batches (the write timed with its sync).
     */
    private void runNexmark(Nexmark.View view, int rows) throws Exception {
        Shape shape = new Shape("", view.name(), view.sql());
        try (Engine engine = Engine.inMemory(); Statement sql = engine.connection().createStatement()) {
            Nexmark.load(sql, rows);
            nextId = 4L * rows;
            Random random = new Random(42);
            Commit append = new Commit("insert_1row", view.insertOne());
            int perView = commits;
            commits = Math.min(commits, nexmarkCommits);
            try {
                timeNexmark(view, rows, sql, engine, append, random, shape);
            } finally {
                commits = perView;
            }
        }
    }

    /** The timed part of {@link #runNexmark(Nexmark.View, int)}, on the loaded stream. */
    private void timeNexmark(Nexmark.View view, int rows, Statement sql, Engine engine, Commit append, Random random, Shape shape)
            throws Exception {
        double writeOnly = percentile(commits(sql, null, append, rows, random).millis(), 0.5);
        try (MaterializedViews views = MaterializedViews.attach(engine.connection())) {
            try {
                views.createView(view.name(), view.sql());
            } catch (dev.mallard.core.error.MallardException e) {
                out.printf("%-26s refused: %s%n", view.name(), e.getMessage());
                return;
            }
            double[] refresh = new double[refreshes];
            for (int i = 0; i < refreshes; i++) {
                long start = System.nanoTime();
                views.refresh(view.name());
                refresh[i] = millisSince(start);
            }
            double refreshMs = percentile(refresh, 0.5);
            queryMs = queryMillis(sql, view.sql());
            Timings timings = commits(sql, views, append, rows, random);
            report(shape, append.name(), rows, timings, writeOnly, 1000 / percentile(timings.millis(), 0.5), refreshMs);
            long first = 5L * rows;
            batch(sql, views, shape, rows, "insert_" + batchRows, refreshMs, b -> Nexmark.batch(view, first + (long) b * batchRows, batchRows));
            duckDbPeakBytes = Math.max(duckDbPeakBytes, duckDbBytes(sql));
        }
    }

    /**
     * With more than one --rows: each view's single-row p50 (and its multiple of the bare write) and batch rate per
     * size side by side, and how much the largest size costs over the smallest (flat: 1.00).
     */
    private void reportBySize() {
        if (json || sizes.size() < 2) {
            return;
        }
        int smallest = sizes.stream().mapToInt(Integer::intValue).min().orElseThrow();
        int largest = sizes.stream().mapToInt(Integer::intValue).max().orElseThrow();
        out.printf("%nby size: p50 ms (x the bare write) for single-row commits, changed rows/s for batches; growth = %d rows over %d%n",
                largest, smallest);
        java.util.Map<String, java.util.Map<Integer, Figure>> byWorkload = new java.util.LinkedHashMap<>();
        for (Figure figure : figures) {
            if (figure.workload().startsWith("read_") || figure.workload().equals("sync_nothing_captured")) {
                continue;
            }
            byWorkload.computeIfAbsent(figure.view() + "\u0000" + figure.workload(), k -> new java.util.TreeMap<>()).put(figure.rows(), figure);
        }
        for (java.util.Map.Entry<String, java.util.Map<Integer, Figure>> entry : byWorkload.entrySet()) {
            String[] parts = entry.getKey().split("\u0000");
            StringBuilder line = new StringBuilder(String.format("%-26s %-24s", parts[0], parts[1]));
            for (Figure figure : entry.getValue().values()) {
                boolean batch = !Double.isNaN(figure.rowsPerSecond()) && Double.isNaN(figure.writeMs());
                line.append(batch ? String.format(" %9d: %9.0f/s       ", figure.rows(), figure.rowsPerSecond())
                        : String.format(" %9d: %7.2f (%5.1fx)", figure.rows(), figure.p50(), figure.p50() / figure.writeMs()));
            }
            Figure small = entry.getValue().get(smallest);
            Figure large = entry.getValue().get(largest);
            if (small != null && large != null) {
                line.append(String.format("  growth %.2f", large.p50() / small.p50()));
            }
            out.println(line);
        }
        out.flush();
    }

    /**
     * INSERT, UPDATE and DELETE of one row by id; for MIN/MAX also the delete-heavy case that hurts it: deleting
     * the row that holds a group's minimum, which makes the group's MIN move down to the next row.
     */
    private static List<Commit> workloads(Shape shape, int rows) {
        List<Commit> workloads = new ArrayList<>(List.of(
                new Commit("insert_1row", "INSERT INTO facts VALUES (?, (CAST(? AS BIGINT) * 7919) % 1000, hash(?) % 1000)"),
                new Commit("insert_1row_prepared", "INSERT INTO facts VALUES (?, (CAST(? AS BIGINT) * 7919) % 1000, hash(?) % 1000)", true),
                new Commit("update_1row", "UPDATE facts SET x = x + 1 WHERE id = ?"),
                new Commit("delete_1row", "DELETE FROM facts WHERE id = ?")));
        if (shape.sql().contains("min(")) {
            workloads.add(new Commit("delete_group_min_1row", "DELETE FROM facts WHERE id = ?"));
        }
        if (shape.sql().contains("LEFT JOIN")) {
            // A dimension row no fact matches, in and out: the view does not move, the padded rows are re-examined.
            workloads.add(new Commit("insert_padded_side_1row", "INSERT INTO dims VALUES (?, 'region0')"));
            workloads.add(new Commit("delete_padded_side_1row", "DELETE FROM dims WHERE g = ?"));
        }
        return workloads;
    }

    /** Runs the commits of one workload, each followed by a sync when there are views; returns their times. */
    private Timings commits(Statement sql, MaterializedViews views, Commit commit, int rows, Random random) throws SQLException {
        long[] ids = new long[commits];
        List<Long> groupMinima = commit.name().equals("delete_group_min_1row") ? groupMinima(sql) : List.of();
        for (int i = 0; i < commits; i++) {
            ids[i] = switch (commit.name()) {
                case "insert_1row", "insert_1row_prepared" -> nextId++;
                case "delete_group_min_1row" -> groupMinima.get(i % groupMinima.size());
                case "insert_padded_side_1row" -> {
                    long id = 1_000_000_000L + nextPaddedId++;
                    paddedIds.add(id);
                    yield id;
                }
                case "delete_padded_side_1row" -> paddedIds.isEmpty() ? -1 : paddedIds.poll();
                default -> random.nextInt(rows);
            };
        }
        double[] millis = new double[commits];
        int parameters = (int) commit.sql().chars().filter(c -> c == '?').count();
        try (PreparedStatement prepared = commit.prepared() ? sql.getConnection().prepareStatement(commit.sql()) : null) {
            long cpuStart = ProcessCpu.selfNanos();
            for (int i = 0; i < commits; i++) {
                long start = System.nanoTime();
                long changed;
                if (prepared != null) {
                    for (int p = 1; p <= parameters; p++) {
                        prepared.setLong(p, ids[i]);
                    }
                    changed = prepared.executeUpdate();
                } else {
                    sql.execute(commit.sql().replace("?", Long.toString(ids[i])));
                    changed = sql.getUpdateCount();
                }
                if (views != null) {
                    // As the front door and jdbc:mallard: run it, told the statement's update count.
                    views.syncAfterWrite(changed);
                }
                millis[i] = millisSince(start);
            }
            return new Timings(millis, ProcessCpu.between(cpuStart, ProcessCpu.selfNanos()) / 1e6 / commits);
        }
    }

    /**
     * {@code --commits} reads of the whole view, each row's columns fetched; fewer (at least 5) once they took 5 s, so a
     * view of millions of rows does not read for minutes.
     */
    private Timings reads(Statement sql, String view) throws SQLException {
        double[] millis = new double[commits];
        long cpuStart = ProcessCpu.selfNanos();
        long deadline = System.nanoTime() + 5_000_000_000L;
        int done = 0;
        while (done < commits && (done < 5 || System.nanoTime() < deadline)) {
            long start = System.nanoTime();
            try (ResultSet rows = sql.executeQuery("SELECT * FROM " + view)) {
                int width = rows.getMetaData().getColumnCount();
                while (rows.next()) {
                    for (int c = 1; c <= width; c++) {
                        rows.getObject(c);
                    }
                }
            }
            millis[done++] = millisSince(start);
        }
        return new Timings(Arrays.copyOf(millis, done), ProcessCpu.between(cpuStart, ProcessCpu.selfNanos()) / 1e6 / done);
    }

    /** {@code --commits} syncs with nothing captured since the last one. */
    private Timings idleSyncs(MaterializedViews views) {
        double[] millis = new double[commits];
        long cpuStart = ProcessCpu.selfNanos();
        for (int i = 0; i < commits; i++) {
            long start = System.nanoTime();
            views.syncAfterWrite();
            millis[i] = millisSince(start);
        }
        return new Timings(millis, ProcessCpu.between(cpuStart, ProcessCpu.selfNanos()) / 1e6 / commits);
    }

    /** Per group, the id of a row holding its smallest x (read before the timed commits). */
    private static List<Long> groupMinima(Statement sql) throws SQLException {
        List<Long> ids = new ArrayList<>();
        try (ResultSet rows = sql.executeQuery("SELECT arg_min(id, x) FROM facts GROUP BY g ORDER BY g")) {
            while (rows.next()) {
                ids.add(rows.getLong(1));
            }
        }
        return ids;
    }

    private interface BatchSql {
        String statement(int batch);
    }

    /**
     * Batches of writes, each committed and then synced; the write is timed with its sync (changed rows/s), after
     * {@code --warmup-batches} untimed ones.
     */
    private void batch(Statement sql, MaterializedViews views, Shape shape, int rows, String workload, double refreshMs, BatchSql write)
            throws Exception {
        double[] millis = new double[batches];
        long cpu = 0;
        for (int b = 0; b < warmupBatches + batches; b++) {
            // The write is timed with its sync: a view kept in the writer's statement does its work in the write.
            long cpuStart = ProcessCpu.selfNanos();
            long start = System.nanoTime();
            sql.execute(write.statement(b));
            long changed = sql.getUpdateCount();
            views.syncAfterWrite(changed);
            if (b >= warmupBatches) {
                millis[b - warmupBatches] = millisSince(start);
                cpu += ProcessCpu.between(cpuStart, ProcessCpu.selfNanos());
            }
        }
        double p50 = percentile(millis, 0.5);
        report(shape, workload, rows, new Timings(millis, cpu / 1e6 / batches), Double.NaN, batchRows / (p50 / 1000), refreshMs);
    }

    private static void load(Statement sql, int rows) throws SQLException {
        sql.execute("CREATE TABLE facts AS SELECT range AS id, (range * 7919) % 1000 AS g, CAST(hash(range) % 1000 AS BIGINT) AS x "
                + "FROM range(" + rows + ")");
        sql.execute("CREATE TABLE dims AS SELECT range AS g, 'region' || (range % 10) AS region FROM range(1000)");
        sql.execute("CREATE TABLE labels AS SELECT 'region' || range AS region, 'label' || (range % 3) AS label FROM range(10)");
    }

    /** The view's query into a table, best of --refreshes runs: the least a recompute from scratch costs. */
    private double queryMillis(Statement sql, String query) throws SQLException {
        double best = Double.MAX_VALUE;
        for (int i = 0; i < refreshes; i++) {
            long start = System.nanoTime();
            sql.execute("CREATE OR REPLACE TEMP TABLE recomputed AS " + query);
            best = Math.min(best, millisSince(start));
        }
        sql.execute("DROP TABLE recomputed");
        return best;
    }

    private static long duckDbBytes(Statement sql) throws SQLException {
        try (ResultSet row = sql.executeQuery("SELECT sum(memory_usage_bytes) FROM duckdb_memory()")) {
            row.next();
            return row.getLong(1);
        }
    }

    private static double percentile(double[] millis, double p) {
        double[] sorted = millis.clone();
        Arrays.sort(sorted);
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(sorted.length * p) - 1)];
    }

    private static double millisSince(long start) {
        return (System.nanoTime() - start) / 1e6;
    }

    private void report(Shape shape, String workload, int rows, Timings timings, double writeMs, double rowsPerSecond,
            double refreshMs) throws Exception {
        double p50 = percentile(timings.millis(), 0.5);
        double p99 = percentile(timings.millis(), 0.99);
        figures.add(new Figure(shape.issue().isEmpty() ? shape.name() : "(" + shape.issue() + ") " + shape.name(), workload, rows, p50,
                writeMs, rowsPerSecond));
        if (json) {
            ObjectNode row = mapper.createObjectNode();
            row.put("view", shape.name());
            row.put("issue_view", shape.issue());
            row.put("workload", workload);
            row.put("rows", rows);
            row.put("p50_ms", round(p50));
            row.put("p99_ms", round(p99));
            row.put("cpu_ms_mean", round(timings.cpuMillis()));
            if (!Double.isNaN(writeMs)) {
                row.put("write_only_p50_ms", round(writeMs));
            }
            if (!Double.isNaN(rowsPerSecond)) {
                row.put("changed_rows_per_s", Math.round(rowsPerSecond));
            }
            row.put("refresh_ms", round(refreshMs));
            row.put("refresh_over_p50", round(refreshMs / p50));
            row.put("query_ms", round(queryMs));
            row.put("query_over_p50", round(queryMs / p50));
            out.println(mapper.writeValueAsString(row));
        } else {
            String name = shape.issue().isEmpty() ? shape.name() : "(" + shape.issue() + ") " + shape.name();
            out.printf("%-26s %-21s %9d %8.2f %8.2f %8.2f %8s %12s %11.1f %8.2f %9.1f %8.2f%n", name, workload, rows, p50, p99,
                    timings.cpuMillis(), Double.isNaN(writeMs) ? "" : String.format("%.2f", writeMs),
                    Double.isNaN(rowsPerSecond) ? "" : String.format("%.0f", rowsPerSecond), refreshMs,
                    refreshMs / p50, queryMs, queryMs / p50);
        }
        out.flush();
    }

    /** Peak RSS of the process, peak Java heap in use, the heap's limit, and DuckDB's largest use seen after a view's run. */
    private void reportMemory() throws Exception {
        long heapPeak = 0;
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP) {
                heapPeak += pool.getPeakUsage().getUsed();
            }
        }
        double mib = 1024.0 * 1024.0;
        double rss = PeakRss.selfKib() / 1024.0;
        double heap = heapPeak / mib;
        double heapMax = Runtime.getRuntime().maxMemory() / mib;
        double duckDb = duckDbPeakBytes / mib;
        if (json) {
            ObjectNode row = mapper.createObjectNode();
            row.put("peak_rss_mib", round(rss));
            row.put("peak_heap_used_mib", round(heap));
            row.put("max_heap_mib", round(heapMax));
            row.put("duckdb_memory_mib", round(duckDb));
            out.println(mapper.writeValueAsString(row));
        } else {
            out.printf("memory: peak RSS %.0f MiB, peak Java heap in use %.0f MiB (limit %.0f MiB), DuckDB after a run up to %.0f MiB%n",
                    rss, heap, heapMax, duckDb);
        }
        out.flush();
    }

    private static double round(double value) {
        return Math.round(value * 100) / 100.0;
    }
}
