// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.core.engine.Engine;
import dev.mallard.flow.config.PipelineConfig.HandlerConfig;
import dev.mallard.flow.config.PipelineConfig.HandlerType;
import dev.mallard.flow.handler.Handler;
import dev.mallard.flow.handler.Handlers;
import dev.mallard.flow.pipeline.BatchProcessor;
import dev.mallard.flow.sink.NoopSink;
import dev.mallard.flow.source.Message;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Handler throughput from in-memory messages (count by city into a noop sink) and the wall time of
 * {@code mallard dev invoke} over a 57,344-line fixture, JVM start included.
 */
@Command(name = "handlers", mixinStandardHelpOptions = true, description = {
    "Handler throughput at a batch size (StructuredBatch, InferredMemBatch; count by city, noop sink).",
    "Also the wall time of `mallard dev invoke` over a 57,344-line fixture, JVM start included."})
final class HandlerBench implements Callable<Integer> {
    static final int FIXTURE_LINES = 57_344;
    static final double STRUCTURED_TARGET = 400_000;
    static final double INFERRED_TARGET = 200_000;
    static final double INVOKE_TARGET_SECONDS = 2.0;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--messages", description = "Messages per measured run (default ${DEFAULT-VALUE}).", defaultValue = "500000")
    int messages;

    @Option(names = "--batch-size", description = "Messages per batch (default ${DEFAULT-VALUE}).", defaultValue = "5000")
    int batchSize;

    @Option(names = "--jar", description = "The CLI jar for the dev invoke timing (default: mallard-cli/target/mallard.jar in the checkout).")
    Path jar = Path.of(System.getProperty("mallard.home", "."), "mallard-cli", "target", "mallard.jar");

    @Option(names = "--threads", description = "DuckDB threads for the handler engine (default: DuckDB's, one per core).")
    Integer threads;

    @Option(names = "--skip-invoke", description = "Skip the dev invoke timing.")
    boolean skipInvoke;

    @Option(names = "--json", description = "Print one JSON object instead of a table.")
    boolean json;

    @Override
    public Integer call() throws Exception {
        List<Message> all = new ArrayList<>(messages);
        List<byte[]> events = SqlflowEvents.events(messages);
        for (int i = 0; i < events.size(); i++) {
            all.add(new Message("bench", 0, i, null, events.get(i)));
        }
        double loadBefore = ProcessCpu.loadAverage();
        Rate structured = throughput(HandlerType.STRUCTURED_BATCH, all);
        Rate inferred = throughput(HandlerType.INFERRED_MEM_BATCH, all);
        double loadAfter = ProcessCpu.loadAverage();
        Optional<double[]> invoke = !skipInvoke && Files.isRegularFile(jar) ? Optional.of(devInvokeSeconds()) : Optional.empty();

        ObjectNode result = new ObjectMapper().createObjectNode();
        result.put("batch_size", batchSize);
        result.put("messages", messages);
        result.put("structured_msgs_per_s", Math.round(structured.perSecond()));
        result.put("inferred_msgs_per_s", Math.round(inferred.perSecond()));
        result.put("structured_cpu_us_per_msg", round(structured.cpuMicrosPerMessage()));
        result.put("inferred_cpu_us_per_msg", round(inferred.cpuMicrosPerMessage()));
        result.put("load_average_before", loadBefore);
        result.put("load_average_after", loadAfter);
        invoke.ifPresent(seconds -> {
            result.put("dev_invoke_wall_s_best", round(seconds[0]));
            result.put("dev_invoke_wall_s_median", round(seconds[1]));
        });
        result.put("cores", Runtime.getRuntime().availableProcessors());
        if (json) {
            spec.commandLine().getOut().println(result.toString());
            return 0;
        }
        var out = spec.commandLine().getOut();
        out.printf("load average %.2f before, %.2f after%n", loadBefore, loadAfter);
        out.printf("%-44s %14s %14s %8s%n", "measure", "value", "target", "ratio");
        out.printf("%-44s %14.0f %14.0f %8.2f%n", "StructuredBatch msgs/s (batch " + batchSize + ")", structured.perSecond(), STRUCTURED_TARGET, structured.perSecond() / STRUCTURED_TARGET);
        out.printf("%-44s %14.2f %14s %8s%n", "StructuredBatch CPU us/msg (whole process)", structured.cpuMicrosPerMessage(), "", "");
        out.printf("%-44s %14.0f %14.0f %8.2f%n", "InferredMemBatch msgs/s (batch " + batchSize + ")", inferred.perSecond(), INFERRED_TARGET, inferred.perSecond() / INFERRED_TARGET);
        out.printf("%-44s %14.2f %14s %8s%n", "InferredMemBatch CPU us/msg (whole process)", inferred.cpuMicrosPerMessage(), "", "");
        if (invoke.isPresent()) {
            out.printf("%-44s %14.2f %14.2f %8.2f%n", "dev invoke 57,344 lines, wall s (best)", invoke.get()[0], INVOKE_TARGET_SECONDS, INVOKE_TARGET_SECONDS / invoke.get()[0]);
            out.printf("%-44s %14.2f %14.2f %8.2f%n", "dev invoke 57,344 lines, wall s (median)", invoke.get()[1], INVOKE_TARGET_SECONDS, INVOKE_TARGET_SECONDS / invoke.get()[1]);
        } else if (skipInvoke) {
            out.println("dev invoke timing skipped (--skip-invoke)");
        } else {
            out.println("dev invoke timing skipped: " + jar + " is missing (build it with ./mallard version)");
        }
        out.println("ratio >= 1.00 meets the target");
        return 0;
    }

    private static double round(double value) {
        return Math.round(value * 1000) / 1000.0;
    }

    /** Messages per second of wall time, and CPU microseconds per message of the whole process (all threads). */
    private record Rate(double perSecond, double cpuMicrosPerMessage) {}

    private Rate throughput(HandlerType type, List<Message> all) throws Exception {
        try (Engine engine = Engine.inMemory()) {
            String sql;
            Optional<String> table = Optional.empty();
            if (threads != null) {
                try (Statement statement = engine.connection().createStatement()) {
                    statement.execute("SET threads = " + threads);
                }
            }
            if (type == HandlerType.STRUCTURED_BATCH) {
                try (Statement statement = engine.connection().createStatement()) {
                    statement.execute("CREATE TABLE events (ip VARCHAR, event VARCHAR, properties STRUCT(city VARCHAR, country VARCHAR), "
                            + "timestamp TIMESTAMPTZ, type VARCHAR, userId VARCHAR)");
                }
                table = Optional.of("events");
                sql = "SELECT properties.city AS city, count(*) AS city_count FROM events GROUP BY 1";
            } else {
                sql = "SELECT properties.city AS city, count(*) AS city_count FROM batch GROUP BY 1";
            }
            HandlerConfig config = new HandlerConfig(type, sql, table, Optional.empty());
            try (Handler handler = Handlers.create(config, dev.mallard.flow.handler.RecordColumns.NONE, engine.connection(), ConfigEnvironment.from(java.util.Map.of()))) {
                BatchProcessor processor = new BatchProcessor(handler, new NoopSink());
                // Warm up the JIT and DuckDB's caches on a tenth of the messages before measuring.
                runBatches(processor, all.subList(0, Math.max(batchSize, all.size() / 10)));
                long started = System.nanoTime();
                long cpuStarted = ProcessCpu.selfNanos();
                runBatches(processor, all);
                long cpu = ProcessCpu.between(cpuStarted, ProcessCpu.selfNanos());
                double seconds = (System.nanoTime() - started) / 1e9;
                return new Rate(all.size() / seconds, cpu < 0 ? -1 : cpu / 1e3 / all.size());
            }
        }
    }

    private void runBatches(BatchProcessor processor, List<Message> messages) {
        for (int start = 0; start < messages.size(); start += batchSize) {
            processor.process(messages.subList(start, Math.min(messages.size(), start + batchSize)));
        }
    }

    /** Best and median wall seconds of five runs of the CLI, each a fresh JVM. */
    private double[] devInvokeSeconds() throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("mallard-bench-invoke");
        Path fixture = dir.resolve("simple.jsonl");
        try (OutputStream out = Files.newOutputStream(fixture)) {
            for (int i = 0; i < FIXTURE_LINES; i++) {
                out.write(SqlflowEvents.event(i));
                out.write('\n');
            }
        }
        Path config = dir.resolve("count.yml");
        Files.writeString(config, """
                pipeline:
                  batch_size: 1000
                  source:
                    type: kafka
                    kafka: {brokers: [localhost:9092], group_id: bench, auto_offset_reset: earliest, topics: [bench]}
                  handler:
                    type: handlers.InferredMemBatch
                    sql: SELECT properties.city AS city, count(*) AS city_count FROM batch GROUP BY 1 ORDER BY city DESC
                  sink:
                    type: console
                """);
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = List.of(java, "--add-opens=java.base/java.nio=ALL-UNNAMED", "--enable-native-access=ALL-UNNAMED",
                "-XX:+AutoCreateSharedArchive", "-XX:SharedArchiveFile=" + jar.toAbsolutePath().toString().replace(".jar", ".jsa"),
                "-Xlog:cds=off", "-Xlog:cds+dynamic=off",
                "-jar", jar.toString(), "dev", "invoke", config.toString(), fixture.toString());
        double[] seconds = new double[5];
        for (int run = -1; run < seconds.length; run++) {
            long started = System.nanoTime();
            Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            String output;
            try (InputStream in = process.getInputStream()) {
                ByteArrayOutputStream buffer = new ByteArrayOutputStream();
                in.transferTo(buffer);
                output = buffer.toString(StandardCharsets.UTF_8);
            }
            int exit = process.waitFor();
            double elapsed = (System.nanoTime() - started) / 1e9;
            String expected = "{\"city\":\"New York\",\"city_count\":28672}\n{\"city\":\"Baltimore\",\"city_count\":28672}\n";
            if (exit != 0 || !output.equals(expected)) {
                throw new IllegalStateException("dev invoke exited " + exit + " with output " + output);
            }
            if (run >= 0) {
                seconds[run] = elapsed;
            }
        }
        Arrays.sort(seconds);
        return new double[] {seconds[0], seconds[seconds.length / 2]};
    }
}
