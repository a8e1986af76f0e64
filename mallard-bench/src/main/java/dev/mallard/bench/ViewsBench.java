package dev.mallard.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.core.engine.Engine;
import dev.mallard.views.MaterializedViews;
import java.io.PrintWriter;
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
 * Incremental maintenance against recompute: a fact table of --rows rows (1,000 groups), a 1,000-row dimension and
 * a 10-row label table,
 * one view at a time, single-row INSERT, UPDATE and DELETE commits each followed by a sync, and 10k-row batches.
 */
@Command(name = "views", mixinStandardHelpOptions = true, description = {
    "Materialized view maintenance: commit + sync latency of single-row INSERT, UPDATE and DELETE, batch",
    "throughput in changed rows/s, and the time to recompute the same view's query, per view shape."})
final class ViewsBench implements Callable<Integer> {
    private static final List<String[]> VIEWS = List.of(
            new String[] {"sum_count_avg_by_group", "SELECT g, sum(x) AS total, count(*) AS n, avg(x) AS mean FROM facts GROUP BY g"},
            new String[] {"min_max_by_group", "SELECT g, min(x) AS lo, max(x) AS hi FROM facts GROUP BY g"},
            new String[] {"join_then_aggregate", "SELECT d.region, sum(f.x) AS total, count(*) AS n FROM facts f JOIN dims d ON f.g = d.g GROUP BY d.region"},
            new String[] {"filtered_projection", "SELECT id, g, x * 2 AS doubled FROM facts WHERE x % 10 = 0"},
            new String[] {"three_way_join_aggregate", "SELECT l.label, count(*) AS n, sum(f.x) AS total FROM facts f "
                    + "JOIN dims d ON f.g = d.g JOIN labels l ON d.region = l.region GROUP BY l.label"});

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--rows", description = "Rows in the fact table (default ${DEFAULT-VALUE}).", defaultValue = "1000000")
    int rows;

    @Option(names = "--commits", description = "Single-row commits per workload (default ${DEFAULT-VALUE}).", defaultValue = "200")
    int commits;

    @Option(names = "--batch-rows", description = "Rows per batch (default ${DEFAULT-VALUE}).", defaultValue = "10000")
    int batchRows;

    @Option(names = "--batches", description = "Batches per view (default ${DEFAULT-VALUE}).", defaultValue = "5")
    int batches;

    @Option(names = "--view", description = "Run only the views whose name contains this text.")
    String only;

    @Option(names = "--json", description = "Print one JSON object per (view, workload) instead of a table.")
    boolean json;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        ObjectMapper mapper = new ObjectMapper();
        if (!json) {
            out.printf("%-24s %-14s %10s %10s %14s %12s %9s%n", "view", "workload", "p50 ms", "p99 ms", "rows/s", "recompute ms", "ratio");
        }
        for (String[] view : VIEWS) {
            if (only != null && !view[0].contains(only)) {
                continue;
            }
            try (Engine engine = Engine.inMemory(); MaterializedViews views = MaterializedViews.attach(engine.connection())) {
                Statement sql = engine.connection().createStatement();
                load(sql);
                views.createView(view[0], view[1]);
                double recompute = recomputeMillis(sql, view[1]);
                Random random = new Random(42);
                long nextId = rows;
                for (String workload : List.of("insert", "update", "delete")) {
                    double[] millis = new double[commits];
                    for (int i = 0; i < commits; i++) {
                        String statement = switch (workload) {
                            case "insert" -> "INSERT INTO facts VALUES (" + (nextId++) + ", " + random.nextInt(1000) + ", " + random.nextInt(1000) + ")";
                            case "update" -> "UPDATE facts SET x = x + 1 WHERE id = " + random.nextInt(rows);
                            default -> "DELETE FROM facts WHERE id = " + random.nextInt(rows);
                        };
                        long start = System.nanoTime();
                        sql.execute(statement);
                        views.sync();
                        millis[i] = (System.nanoTime() - start) / 1e6;
                    }
                    Arrays.sort(millis);
                    double p50 = millis[millis.length / 2];
                    double p99 = millis[Math.min(millis.length - 1, (int) Math.ceil(millis.length * 0.99) - 1)];
                    report(out, mapper, view[0], workload + "_1row", p50, p99, 1000.0 / p50, recompute);
                }
                List<Double> syncMillis = new ArrayList<>();
                for (int b = 0; b < batches; b++) {
                    sql.execute("INSERT INTO facts SELECT " + nextId + " + range, (range * 7919) % 1000, (range * 104729) % 1000 FROM range(" + batchRows + ")");
                    nextId += batchRows;
                    long start = System.nanoTime();
                    views.sync();
                    syncMillis.add((System.nanoTime() - start) / 1e6);
                }
                syncMillis.sort(null);
                double median = syncMillis.get(syncMillis.size() / 2);
                report(out, mapper, view[0], "insert_" + batchRows + "_sync", median, syncMillis.get(syncMillis.size() - 1),
                        batchRows / (median / 1000), recompute);
            }
        }
        out.flush();
        return 0;
    }

    private void load(Statement sql) throws SQLException {
        sql.execute("CREATE TABLE facts AS SELECT range AS id, (range * 7919) % 1000 AS g, (range * 104729) % 1000 AS x FROM range(" + rows + ")");
        sql.execute("CREATE TABLE dims AS SELECT range AS g, 'region' || (range % 10) AS region FROM range(1000)");
        sql.execute("CREATE TABLE labels AS SELECT 'region' || range AS region, 'label' || (range % 3) AS label FROM range(10)");
    }

    private static double recomputeMillis(Statement sql, String query) throws SQLException {
        double best = Double.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            long start = System.nanoTime();
            sql.execute("CREATE OR REPLACE TEMP TABLE recomputed AS " + query);
            best = Math.min(best, (System.nanoTime() - start) / 1e6);
        }
        sql.execute("DROP TABLE recomputed");
        return best;
    }

    private void report(PrintWriter out, ObjectMapper mapper, String view, String workload, double p50, double p99, double rowsPerSecond,
            double recompute) throws Exception {
        if (json) {
            ObjectNode row = mapper.createObjectNode();
            row.put("view", view);
            row.put("workload", workload);
            row.put("rows", rows);
            row.put("p50_ms", p50);
            row.put("p99_ms", p99);
            row.put("changed_rows_per_s", Math.round(rowsPerSecond));
            row.put("recompute_ms", recompute);
            row.put("recompute_over_p50", recompute / p50);
            out.println(mapper.writeValueAsString(row));
        } else {
            out.printf("%-24s %-14s %10.2f %10.2f %14.0f %12.1f %9.2f%n", view, workload, p50, p99, rowsPerSecond, recompute, recompute / p50);
        }
        out.flush();
    }
}
