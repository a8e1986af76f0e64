// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.flow.config.PipelineConfig;
import dev.mallard.flow.config.PipelineConfigReader;
import dev.mallard.flow.pipeline.PipelineRunner;
import java.io.OutputStream;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Mallard pipeline, run as {@code mallard run <config> --max-msgs N} runs it (the same reader and runner) in a
 * process that does nothing else, so its peak RSS is the pipeline's. Only the source is wrapped, to time it.
 */
final class PipelineWorker {
    private static final Pattern PHASE_SUM = Pattern.compile("^phase_duration_seconds_sum\\{.*phase=\"([^\"]+)\".*}\\s+(\\S+)$");

    private PipelineWorker() {}

    /**
     * @param stateQuery with a state path, a query over the state file returning (city, count) rows, run after the
     *     pipeline stopped to check that the state holds every message exactly once
     */
    static WorkerReport run(Path configFile, long messages, Optional<String> stateQuery) {
        requireNonNull(configFile, "configFile is null");
        requireNonNull(stateQuery, "stateQuery is null");
        ConfigEnvironment environment = ConfigEnvironment.from(Map.of());
        PipelineConfig config = new PipelineConfigReader(environment).read(configFile).orThrow();
        AtomicReference<PipelineRunner> runner = new AtomicReference<>();
        AtomicReference<TimedSource> source = new AtomicReference<>();
        runner.set(new PipelineRunner(config, environment, new PipelineRunner.Options(messages, OutputStream.nullOutputStream()),
                (pipeline, storedOffsets) -> {
                    TimedSource timed = new TimedSource(PipelineRunner.openSource(pipeline, storedOffsets), messages, () -> runner.get().scrape());
                    source.set(timed);
                    return timed;
                }));
        PipelineRunner.Outcome outcome;
        try (Watchdog watchdog = Watchdog.start("the pipeline in " + configFile.getFileName(),
                () -> source.get() == null ? 0 : source.get().polled(), messages, BenchWorker.IDLE_LIMIT)) {
            outcome = runner.get().run();
        }
        // Before anything else runs in this process: the state check below opens DuckDB a second time.
        long peak = PeakRss.selfKib();
        TimedSource timed = source.get();
        if (outcome.messagesConsumed() != messages || outcome.numErrors() != 0 || timed == null || !timed.finished()) {
            throw new IllegalStateException("the pipeline stopped after " + outcome.messagesConsumed() + " of " + messages
                    + " messages with " + outcome.numErrors() + " errors");
        }
        Map<String, Long> counts = stateQuery.isPresent()
                ? stateCounts(Path.of(config.pipeline().statePath().orElseThrow()), stateQuery.get())
                : Map.of();
        return new WorkerReport(outcome.messagesConsumed(), timed.elapsedNanos(), timed.cpuNanos(), ProcessCpu.selfNanos(), peak, counts, phases(timed));
    }

    /**
     * The runner's own phase timings at the last commit, less what falls outside the measured interval: the wait
     * for the first message counts as source.read there. The final batch's source.commit is still running when the
     * metrics are taken, so the source's own timing replaces it.
     */
    private static Map<String, Double> phases(TimedSource timed) {
        Map<String, Double> phases = new HashMap<>();
        for (String line : timed.finalMetrics().split("\n")) {
            Matcher matcher = PHASE_SUM.matcher(line.strip());
            if (matcher.matches()) {
                phases.merge(matcher.group(1), Double.parseDouble(matcher.group(2)), Double::sum);
            }
        }
        phases.computeIfPresent("source.read", (phase, seconds) -> Math.max(0, seconds - timed.waitBeforeFirstNanos() / 1e9));
        phases.put("source.commit", timed.commitNanos() / 1e9);
        return phases;
    }

    private static Map<String, Long> stateCounts(Path state, String query) {
        Properties readOnly = new Properties();
        readOnly.setProperty("duckdb.read_only", "true");
        Map<String, Long> counts = new HashMap<>();
        try (Connection connection = DriverManager.getConnection("jdbc:duckdb:" + state.toAbsolutePath(), readOnly);
                Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery(query)) {
            while (rows.next()) {
                counts.put(rows.getString(1), rows.getLong(2));
            }
        } catch (SQLException e) {
            throw new IllegalStateException("cannot read the pipeline's state in " + state + ": " + e.getMessage(), e);
        }
        return counts;
    }
}
