// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.core.engine.Engine;
import dev.mallard.flow.sink.ResultTable;
import dev.mallard.flow.sink.postgres.PostgresDsn;
import dev.mallard.flow.sink.postgres.PostgresSink;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The Postgres sink's rows per second: batches of a five-column result (bigint, text, bigint, numeric, timestamptz)
 * made in DuckDB, then written and flushed into a fresh table, append and upsert. Only write + flush is timed.
 */
@Command(name = "postgres", mixinStandardHelpOptions = true, description = {
    "Postgres sink rows/s: append, upsert of new keys, upsert of existing keys.",
    "Write + flush are timed, the batch made in DuckDB beforehand. Needs a reachable Postgres: --dsn or",
    "MALLARD_TEST_POSTGRES_DSN."})
final class PostgresSinkBench implements Callable<Integer> {
    static final double TARGET_ROWS_PER_SECOND = 100_000;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--rows", description = "Rows per measured pass (default ${DEFAULT-VALUE}).", defaultValue = "1000000")
    int rows;

    @Option(names = "--batch-size", description = "Rows per batch (default ${DEFAULT-VALUE}).", defaultValue = "50000")
    int batchSize;

    @Option(names = "--dsn", description = "Postgres DSN (default: MALLARD_TEST_POSTGRES_DSN or postgres://postgres@127.0.0.1:5432/test).")
    String dsn = System.getenv().getOrDefault("MALLARD_TEST_POSTGRES_DSN", "postgres://postgres@127.0.0.1:5432/test");

    @Option(names = "--json", description = "Print one JSON object instead of a table.")
    boolean json;

    @Override
    public Integer call() throws Exception {
        String table = "mallard_bench_" + ProcessHandle.current().pid();
        execute("DROP TABLE IF EXISTS " + table);
        execute("CREATE TABLE " + table + " (id bigint PRIMARY KEY, city text, n bigint, amount numeric(12,2), at timestamptz)");
        try (Engine engine = Engine.inMemory()) {
            // A warm-up pass, not counted, so the JIT has compiled the copy loop.
            pass(engine, table, "append", Math.min(rows, 100_000), true, 0);
            double append = pass(engine, table, "append", rows, false, 0);
            execute("TRUNCATE " + table);
            double upsertNew = pass(engine, table, "upsert", rows, false, 0);
            // Every row changes: a replay of equal rows would write nothing and measure less.
            double upsertExisting = pass(engine, table, "upsert", rows, false, 1);
            PrintWriter out = spec.commandLine().getOut();
            if (json) {
                ObjectNode result = new ObjectMapper().createObjectNode()
                        .put("append_rows_per_s", Math.round(append))
                        .put("upsert_new_rows_per_s", Math.round(upsertNew))
                        .put("upsert_existing_rows_per_s", Math.round(upsertExisting))
                        .put("rows", rows).put("batch_size", batchSize);
                out.println(result);
            } else {
                out.printf("%-44s %14s %14s %8s%n", "measure (" + rows + " rows, batch " + batchSize + ")", "rows/s", "target", "ratio");
                out.printf("%-44s %14.0f %14.0f %8.2f%n", "append", append, TARGET_ROWS_PER_SECOND, append / TARGET_ROWS_PER_SECOND);
                out.printf("%-44s %14.0f %14.0f %8.2f%n", "upsert, new keys", upsertNew, TARGET_ROWS_PER_SECOND, upsertNew / TARGET_ROWS_PER_SECOND);
                out.printf("%-44s %14.0f %14.0f %8.2f%n", "upsert, existing keys", upsertExisting, TARGET_ROWS_PER_SECOND,
                        upsertExisting / TARGET_ROWS_PER_SECOND);
                out.println("ratio >= 1.00 meets the target");
            }
        } finally {
            execute("DROP TABLE IF EXISTS " + table);
        }
        return 0;
    }

    /** Rows per second of write + flush over {@code count} rows. */
    private double pass(Engine engine, String table, String mode, int count, boolean warmUp, int generation) throws Exception {
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode block = mapper.createObjectNode().put("dsn", dsn).put("table", table).put("mode", mode);
        if (mode.equals("upsert")) {
            block.putArray("key").add("id");
        }
        long nanos = 0;
        try (PostgresSink sink = new PostgresSink(PostgresSink.Settings.of(block, mapper.createObjectNode()), engine.allocator());
                Statement statement = engine.connection().createStatement()) {
            for (int start = 0; start < count; start += batchSize) {
                int size = Math.min(batchSize, count - start);
                statement.execute("CREATE OR REPLACE TEMP TABLE bench_batch AS SELECT range AS id, 'city ' || (range % 100) AS city,"
                        + " range * 7 + " + generation + " AS n, (range % 100000) / 100.0 :: DECIMAL(12,2) AS amount,"
                        + " TIMESTAMPTZ '2026-01-01 00:00:00+00' + to_seconds(range) AS at FROM range(" + start + ", " + (start + size) + ")");
                ResultTable batch = new ResultTable(engine.connection(), "bench_batch", size);
                long started = System.nanoTime();
                sink.write(batch);
                sink.flush();
                nanos += System.nanoTime() - started;
            }
        }
        if (warmUp) {
            execute("TRUNCATE " + table);
        }
        return count / (nanos / 1e9);
    }

    private void execute(String sql) throws SQLException {
        PostgresDsn parsed = PostgresDsn.parse(dsn, "--dsn");
        try (Connection connection = new org.postgresql.Driver().connect(parsed.jdbcUrl(), parsed.properties());
                Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }
}
