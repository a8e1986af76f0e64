// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** What {@code bench pipeline} measured and the targets it is read against, as a table or as one JSON object. */
record PipelineResults(Setup setup, Map<Contender, Measurement> measurements) {
    static final int TARGET_BATCH_SIZE = 5000;
    /**
     * The targets, read on CPU per message: the bare consumer alone fills both cores here, so a contender's throughput
     * over the bare consumer's measures the machine more than the contender.
     */
    static final double STRUCTURED_CPU_VS_BARE = 2.0;
    static final double INFERRED_CPU_VS_BARE = 2.5;
    static final double STREAMS_CPU_VS_STRUCTURED = 3.0;
    static final double STATE_COST = 0.10;
    static final double PEAK_RSS_MIB = 300;
    private static final List<String> PHASES = List.of("source.read", "handler.write", "handler.invoke", "sink.write", "sink.flush",
            "state.commit", "source.commit");

    /**
     * What was run: for the report, so that figures never travel without their conditions. The load averages are
     * the machine's before publishing and after the last measurement; anything well above 1 is a neighbour.
     */
    record Setup(long messages, int batchSize, int partitions, int rounds, int cores, String java, String streamsStore,
            double loadBefore, double loadAfter) {
        Setup {
            requireNonNull(java, "java is null");
            requireNonNull(streamsStore, "streamsStore is null");
        }
    }

    PipelineResults {
        requireNonNull(setup, "setup is null");
        measurements = new EnumMap<>(requireNonNull(measurements, "measurements is null"));
        for (Contender contender : Contender.values()) {
            if (!measurements.containsKey(contender)) {
                throw new IllegalArgumentException("no measurement of " + contender.key());
            }
        }
    }

    double rate(Contender contender) {
        return measurements.get(contender).messagesPerSecond();
    }

    double vsBare(Contender contender) {
        return rate(contender) / rate(Contender.BARE_CONSUMER);
    }

    /** The largest peak RSS of the Mallard pipeline processes. */
    double pipelinePeakRssMib() {
        return measurements.entrySet().stream().filter(entry -> entry.getKey().isMallard())
                .mapToDouble(entry -> entry.getValue().peakRssMib()).max().orElseThrow();
    }

    /** CPU microseconds of the contender's own process per message, or -1 where the platform does not say. */
    double cpuMicrosPerMessage(Contender contender) {
        WorkerReport report = measurements.get(contender).report();
        return report.cpuSeconds() < 0 || report.messages() == 0 ? -1 : report.cpuSeconds() * 1e6 / report.messages();
    }

    /** The contender's CPU per message over the bare consumer's, or NaN where either is not known. */
    double cpuVsBare(Contender contender) {
        return cpuRatio(contender, Contender.BARE_CONSUMER);
    }

    private double cpuRatio(Contender contender, Contender base) {
        double own = cpuMicrosPerMessage(contender);
        double other = cpuMicrosPerMessage(base);
        return own < 0 || other <= 0 ? Double.NaN : own / other;
    }

    /** The share of the structured pipeline's CPU per message that durable state adds (negative when state cost less). */
    double stateCost() {
        return cpuRatio(Contender.STATEFUL, Contender.STRUCTURED) - 1;
    }

    /** How many times the CPU per message of Kafka Streams is the structured pipeline's. */
    double streamsVsStructured() {
        return cpuRatio(Contender.KAFKA_STREAMS, Contender.STRUCTURED);
    }

    boolean structuredMet() {
        return cpuVsBare(Contender.STRUCTURED) <= STRUCTURED_CPU_VS_BARE;
    }

    boolean inferredMet() {
        return cpuVsBare(Contender.INFERRED) <= INFERRED_CPU_VS_BARE;
    }

    boolean streamsMet() {
        return streamsVsStructured() >= STREAMS_CPU_VS_STRUCTURED;
    }

    boolean stateMet() {
        return stateCost() <= STATE_COST;
    }

    boolean rssMet() {
        return pipelinePeakRssMib() >= 0 && pipelinePeakRssMib() <= PEAK_RSS_MIB;
    }

    String json() {
        ObjectNode node = new ObjectMapper().createObjectNode();
        node.put("bare_consumer_msgs_per_s", Math.round(rate(Contender.BARE_CONSUMER)));
        node.put("structured_msgs_per_s", Math.round(rate(Contender.STRUCTURED)));
        node.put("inferred_msgs_per_s", Math.round(rate(Contender.INFERRED)));
        node.put("stateful_msgs_per_s", Math.round(rate(Contender.STATEFUL)));
        node.put("kafka_streams_msgs_per_s", Math.round(rate(Contender.KAFKA_STREAMS)));
        node.put("pipeline_peak_rss_mib", round(pipelinePeakRssMib(), 1));
        node.put("messages", setup.messages());
        node.put("batch_size", setup.batchSize());
        node.put("partitions", setup.partitions());
        node.put("rounds", setup.rounds());
        node.put("cores", setup.cores());
        node.put("java", setup.java());
        node.put("kafka_streams_store", setup.streamsStore());
        node.put("load_average_before", setup.loadBefore());
        node.put("load_average_after", setup.loadAfter());
        ObjectNode ratios = node.putObject("ratios");
        ratios.put("structured_vs_bare", round(vsBare(Contender.STRUCTURED), 3));
        ratios.put("inferred_vs_bare", round(vsBare(Contender.INFERRED), 3));
        ratios.put("stateful_vs_bare", round(vsBare(Contender.STATEFUL), 3));
        ratios.put("kafka_streams_vs_bare", round(vsBare(Contender.KAFKA_STREAMS), 3));
        ratios.put("structured_cpu_vs_bare", round(cpuVsBare(Contender.STRUCTURED), 3));
        ratios.put("inferred_cpu_vs_bare", round(cpuVsBare(Contender.INFERRED), 3));
        ratios.put("stateful_cpu_vs_bare", round(cpuVsBare(Contender.STATEFUL), 3));
        ratios.put("kafka_streams_cpu_vs_structured", round(streamsVsStructured(), 3));
        ratios.put("state_cpu_cost", round(stateCost(), 3));
        ObjectNode targets = node.putObject("targets_met");
        targets.put("structured_cpu_vs_bare", structuredMet());
        targets.put("inferred_cpu_vs_bare", inferredMet());
        targets.put("kafka_streams_cpu_vs_structured", streamsMet());
        targets.put("state_cpu_cost", stateMet());
        targets.put("pipeline_peak_rss", rssMet());
        ObjectNode cpuPerMessage = node.putObject("cpu_us_per_msg");
        measurements.keySet().forEach(contender -> cpuPerMessage.put(contender.key(), round(cpuMicrosPerMessage(contender), 2)));
        ObjectNode range = node.putObject("msgs_per_s_range");
        ObjectNode rss = node.putObject("peak_rss_mib");
        ObjectNode seconds = node.putObject("seconds");
        ObjectNode cpu = node.putObject("cpu_s");
        ObjectNode broker = node.putObject("broker_cpu_s");
        ObjectNode others = node.putObject("other_processes_cpu_s");
        ObjectNode phases = node.putObject("phases_s");
        measurements.forEach((contender, measurement) -> {
            String key = contender.key();
            WorkerReport report = measurement.report();
            ArrayNode span = range.putArray(key);
            span.add(Math.round(measurement.slowest()));
            span.add(Math.round(measurement.fastest()));
            rss.put(key, round(measurement.peakRssMib(), 1));
            seconds.put(key, round(report.seconds(), 3));
            cpu.put(key, round(report.cpuSeconds(), 3));
            broker.put(key, round(measurement.median().brokerCpuSeconds(), 2));
            others.put(key, round(measurement.median().otherCpuSeconds(), 2));
            if (contender.isMallard()) {
                ObjectNode phase = phases.putObject(key);
                PHASES.forEach(name -> phase.put(name, round(report.phaseSeconds().getOrDefault(name, 0.0), 3)));
            }
        });
        return node.toString();
    }

    void table(PrintWriter out) {
        out.printf(Locale.ROOT, "bench pipeline: %,d messages, batch %,d, %d partition%s, %d round%s, %d cores, Java %s%n",
                setup.messages(), setup.batchSize(), setup.partitions(), plural(setup.partitions()), setup.rounds(), plural(setup.rounds()),
                setup.cores(), setup.java());
        out.printf(Locale.ROOT, "load average %.2f before, %.2f after%n%n", setup.loadBefore(), setup.loadAfter());
        String row = "%-40s %11s %7s %7s %7s %10s %8s %8s  %-36s %s%n";
        out.printf(Locale.ROOT, row, "contender", "msgs/s", "x bare", "wall s", "CPU s", "CPU us/msg", "x bare", "RSS MiB", "target (CPU per message)", "");
        row(out, row, Contender.BARE_CONSUMER, "", "");
        row(out, row, Contender.STRUCTURED, String.format(Locale.ROOT, "<= %.1f x bare", STRUCTURED_CPU_VS_BARE), mark(structuredMet()));
        row(out, row, Contender.INFERRED, String.format(Locale.ROOT, "<= %.1f x bare", INFERRED_CPU_VS_BARE), mark(inferredMet()));
        row(out, row, Contender.STATEFUL, String.format(Locale.ROOT, "state adds <= %.0f%% (adds %.1f%%)", STATE_COST * 100, stateCost() * 100),
                mark(stateMet()));
        row(out, row, Contender.KAFKA_STREAMS,
                String.format(Locale.ROOT, ">= %.1f x structured (%.2f x)", STREAMS_CPU_VS_STRUCTURED, streamsVsStructured()), mark(streamsMet()));
        out.printf(Locale.ROOT, "%npipeline peak RSS (largest of the Mallard processes): %.1f MiB, target <= %.0f MiB  %s%n",
                pipelinePeakRssMib(), PEAK_RSS_MIB, mark(rssMet()));
        if (setup.rounds() > 1) {
            out.printf(Locale.ROOT, "%nfigures are the median round's; msgs/s of the slowest and fastest rounds:%n");
            measurements.forEach((contender, measurement) -> out.printf(Locale.ROOT, "  %-40s %,11d %,11d%n", contender.title(),
                    Math.round(measurement.slowest()), Math.round(measurement.fastest())));
        }
        out.printf(Locale.ROOT, "%nwall s and CPU s run from a contender's first message to its last; CPU s is its own process's.%n");
        out.printf(Locale.ROOT, "CPU s used while it lived by the broker / by other processes (near 0 on a quiet machine):%n");
        measurements.forEach((contender, measurement) -> out.printf(Locale.ROOT, "  %-40s %6.1f / %.1f%n", contender.title(),
                measurement.median().brokerCpuSeconds(), measurement.median().otherCpuSeconds()));
        out.printf(Locale.ROOT, "%nwhere the Mallard pipelines spend the measured time (share of first message to last commit):%n");
        out.printf(Locale.ROOT, "%-12s %8s", "", "seconds");
        PHASES.forEach(phase -> out.printf(Locale.ROOT, " %14s", phase));
        out.printf(Locale.ROOT, " %8s%n", "other");
        measurements.forEach((contender, measurement) -> {
            if (contender.isMallard()) {
                phaseRow(out, contender.key(), measurement.report());
            }
        });
        if (setup.batchSize() != TARGET_BATCH_SIZE) {
            out.printf(Locale.ROOT, "%nnote: the targets are set for batch %,d; this run used %,d%n", TARGET_BATCH_SIZE, setup.batchSize());
        }
        out.flush();
    }

    private void row(PrintWriter out, String format, Contender contender, String target, String mark) {
        Measurement measurement = measurements.get(contender);
        WorkerReport report = measurement.report();
        String title = contender == Contender.KAFKA_STREAMS ? contender.title() + ", " + setup.streamsStore() + " store" : contender.title();
        out.printf(Locale.ROOT, format, title, String.format(Locale.ROOT, "%,d", Math.round(measurement.messagesPerSecond())),
                String.format(Locale.ROOT, "%.2f", vsBare(contender)), String.format(Locale.ROOT, "%.2f", report.seconds()),
                report.cpuSeconds() < 0 ? "n/a" : String.format(Locale.ROOT, "%.2f", report.cpuSeconds()),
                cpuMicrosPerMessage(contender) < 0 ? "n/a" : String.format(Locale.ROOT, "%.2f", cpuMicrosPerMessage(contender)),
                Double.isNaN(cpuVsBare(contender)) ? "n/a" : String.format(Locale.ROOT, "%.2f", cpuVsBare(contender)),
                measurement.peakRssMib() < 0 ? "n/a" : String.format(Locale.ROOT, "%.1f", measurement.peakRssMib()), target, mark);
    }

    private static void phaseRow(PrintWriter out, String name, WorkerReport report) {
        Map<String, Double> phases = report.phaseSeconds();
        out.printf(Locale.ROOT, "%-12s %8.3f", name, report.seconds());
        double accounted = 0;
        for (String phase : PHASES) {
            double seconds = phases.getOrDefault(phase, 0.0);
            accounted += seconds;
            out.printf(Locale.ROOT, " %13.1f%%", 100 * seconds / report.seconds());
        }
        out.printf(Locale.ROOT, " %7.1f%%%n", 100 * Math.max(0, report.seconds() - accounted) / report.seconds());
    }

    private static String plural(int count) {
        return count == 1 ? "" : "s";
    }

    private static String mark(boolean met) {
        return met ? "met" : "MISSED";
    }

    private static double round(double value, int decimals) {
        double scale = Math.pow(10, decimals);
        return Math.round(value * scale) / scale;
    }
}
