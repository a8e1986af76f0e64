// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import dev.mallard.testkit.EventGenerator;
import dev.mallard.testkit.Progress;
import dev.mallard.testkit.Publisher;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Mallard pipelines against the limit a bare consumer sets and against Kafka Streams, on the same messages of one
 * fresh topic on a broker in its own process. Every contender runs in a JVM of its own with a fresh consumer group,
 * reads from the earliest offset, and is timed from its first message to its last.
 */
@Command(name = "pipeline", mixinStandardHelpOptions = true, description = {
    "Msgs/s of a bare Kafka consumer, of Mallard and of Kafka Streams counting by city, each in its own JVM.",
    "Publishes SQLFlow-shaped events to a fresh topic on a `mallard dev kafka` broker, then measures msgs/s from the first",
    "message to the last: a bare kafka-clients consumer (the limit); Mallard counting by city into a noop sink with",
    "StructuredBatch, InferredMemBatch, and StructuredBatch on a state file; Kafka Streams doing the same count. Also the",
    "pipelines' peak RSS. MALLARD_JAVA_OPTS applies to every measured JVM."})
final class PipelineBench implements Callable<Integer> {
    private static final Duration BROKER_START = Duration.ofSeconds(120);

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--messages", defaultValue = "300000", description = "Messages to publish and consume (default ${DEFAULT-VALUE}).")
    long messages;

    @Option(names = "--batch-size", defaultValue = "5000", description = "The pipelines' batch_size (default ${DEFAULT-VALUE}).")
    int batchSize;

    @Option(names = "--partitions", defaultValue = "1", description = "Partitions of the topic (default ${DEFAULT-VALUE}).")
    int partitions;

    @Option(names = "--rounds", defaultValue = "1",
            description = "Measure every contender this many times, in turn, and report the median (default ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--seed", defaultValue = "0", description = "The event generator's seed (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--streams-store", defaultValue = "rocksdb", paramLabel = "rocksdb|in_memory",
            description = "Kafka Streams' store for the counts: its default, RocksDB, or in memory (default ${DEFAULT-VALUE}).")
    String streamsStore;

    @Option(names = "--jar", description = "The CLI jar that runs the broker (default: mallard-cli/target/mallard.jar in the checkout).")
    Path jar = Path.of(System.getProperty("mallard.home", "."), "mallard-cli", "target", "mallard.jar");

    @Option(names = "--jfr", paramLabel = "DIR",
            description = "Record each measured JVM with JFR's profile settings into DIR/<contender>-<round>.jfr (slows them).")
    Path jfr;

    @Option(names = "--threads", description = "DuckDB threads of the Mallard pipelines' engines, a `SET threads` command "
            + "first (default: DuckDB's, one per core).")
    Integer threads;

    @Option(names = "--json", description = "Print one JSON object instead of a table.")
    boolean json;

    @Override
    public Integer call() throws IOException {
        StreamsWorker.Store store = parameters();
        Path benchJar = benchJar();
        Terminal terminal = Terminal.detect();
        Optional<Path> jfrDir = Optional.ofNullable(jfr).map(Path::toAbsolutePath);
        if (jfrDir.isPresent()) {
            Files.createDirectories(jfrDir.get());
        }
        Path work = Files.createTempDirectory("mallard-bench-pipeline-");
        PipelineResults results;
        try (ChildJvm jvm = new ChildJvm(benchJar, work, ChildJvm.mallardJavaOpts(), jfrDir)) {
            terminal.line("starting the broker (mallard dev kafka)...");
            try (BrokerProcess broker = BrokerProcess.start(jvm, jar, BROKER_START)) {
                String topic = "bench-pipeline-" + shortId();
                terminal.line(String.format(Locale.ROOT, "publishing %,d events to %s at %s...", messages, topic, broker.bootstrapServers()));
                double loadBefore = ProcessCpu.loadAverage();
                publish(broker.bootstrapServers(), topic);
                Map<Contender, Measurement> measurements = measure(jvm, terminal, broker, topic, work, store);
                PipelineResults.Setup setup = new PipelineResults.Setup(messages, batchSize, partitions, rounds,
                        Runtime.getRuntime().availableProcessors(), Runtime.version().toString(), store.name().toLowerCase(Locale.ROOT),
                        loadBefore, ProcessCpu.loadAverage());
                results = new PipelineResults(setup, measurements);
                terminal.line("stopping the broker...");
            }
        } catch (RuntimeException e) {
            // The children's logs are the evidence; they stay.
            throw new IllegalStateException(e.getMessage() + " (logs kept in " + work + ")", e);
        }
        deleteTree(work);
        if (json) {
            spec.commandLine().getOut().println(results.json());
            spec.commandLine().getOut().flush();
        } else {
            results.table(spec.commandLine().getOut());
        }
        return 0;
    }

    private StreamsWorker.Store parameters() {
        if (messages < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--messages must be at least 1, was " + messages);
        }
        if (batchSize < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--batch-size must be at least 1, was " + batchSize);
        }
        if (partitions < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--partitions must be at least 1, was " + partitions);
        }
        if (rounds < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--rounds must be at least 1, was " + rounds);
        }
        try {
            return StreamsWorker.Store.valueOf(streamsStore.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--streams-store takes rocksdb or in_memory, not " + streamsStore);
        }
    }

    private Path benchJar() {
        if (!Files.isRegularFile(jar)) {
            throw new CommandLine.ParameterException(spec.commandLine(), jar + " is missing; build it with ./mallard version");
        }
        try {
            Path self = Path.of(PipelineBench.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            if (!Files.isRegularFile(self)) {
                throw new IllegalStateException("bench pipeline starts its workers from mallard-bench.jar; run it as ./mallard bench pipeline");
            }
            return self;
        } catch (URISyntaxException e) {
            throw new IllegalStateException("cannot locate mallard-bench.jar", e);
        }
    }

    private void publish(String bootstrapServers, String topic) {
        try (Publisher publisher = Publisher.connect(bootstrapServers, Progress.onTerminal())) {
            publisher.ensureTopic(topic, Optional.of(partitions));
            long acknowledged = publisher.publish(topic, EventGenerator.userActions(seed), messages);
            if (acknowledged != messages) {
                throw new IllegalStateException("the broker acknowledged " + acknowledged + " of " + messages + " messages");
            }
        }
    }

    /** Every contender in turn, {@code rounds} times; each run checks what it counted where it can tell. */
    private Map<Contender, Measurement> measure(ChildJvm jvm, Terminal terminal, BrokerProcess broker, String topic, Path work,
            StreamsWorker.Store store) throws IOException {
        // A worker that keeps receiving messages is never cut short by this; it is for one that hangs on its way out.
        Duration timeout = Duration.ofSeconds(300 + messages / 1_000);
        Map<String, Long> expected = expectedCounts();
        Map<Contender, List<Measurement.Round>> results = new EnumMap<>(Contender.class);
        Step step = new Step(terminal, rounds * Contender.values().length, broker);
        for (int round = 1; round <= rounds; round++) {
            for (Contender contender : Contender.values()) {
                String name = contender.key() + "-" + round;
                List<String> arguments = arguments(contender, broker.bootstrapServers(), topic, work, name, store);
                step.start(contender.title() + (rounds > 1 ? ", round " + round : ""));
                Measurement.Round result = step.done(jvm.measure(name, arguments, timeout));
                WorkerReport report = result.report();
                if (report.messages() != messages) {
                    throw new IllegalStateException(contender.key() + " handled " + report.messages() + " of " + messages + " messages");
                }
                if ((contender == Contender.STATEFUL || contender == Contender.KAFKA_STREAMS) && !report.counts().equals(expected)) {
                    throw new IllegalStateException(contender.key() + " counted " + report.counts() + ", expected " + expected);
                }
                results.computeIfAbsent(contender, ignored -> new ArrayList<>()).add(result);
            }
        }
        Map<Contender, Measurement> measurements = new EnumMap<>(Contender.class);
        results.forEach((contender, list) -> measurements.put(contender, new Measurement(list)));
        return measurements;
    }

    /** The worker's command line; each run gets a consumer group (and file) of its own. */
    private List<String> arguments(Contender contender, String bootstrapServers, String topic, Path work, String name,
            StreamsWorker.Store store) throws IOException {
        String count = Long.toString(messages);
        String group = "bench-" + name + "-" + shortId();
        PipelineConfigs.Kafka kafka = new PipelineConfigs.Kafka(bootstrapServers, topic, group);
        return switch (contender) {
            case BARE_CONSUMER -> List.of("bare", bootstrapServers, topic, group, count);
            case STRUCTURED -> List.of("pipeline", write(work, name + ".yml", PipelineConfigs.withThreads(PipelineConfigs.structured(kafka, batchSize), threads)).toString(), count);
            case INFERRED -> List.of("pipeline", write(work, name + ".yml", PipelineConfigs.withThreads(PipelineConfigs.inferred(kafka, batchSize), threads)).toString(), count);
            case STATEFUL -> List.of("pipeline",
                    write(work, name + ".yml", PipelineConfigs.withThreads(PipelineConfigs.stateful(kafka, batchSize, work.resolve(name + ".duckdb")), threads)).toString(), count,
                    PipelineConfigs.STATE_TOTALS_QUERY);
            case KAFKA_STREAMS -> List.of("streams", bootstrapServers, topic, group, count,
                    Files.createDirectories(work.resolve(name + "-state")).toString(), store.name());
        };
    }

    /** What the generator sends: it cycles through its cities, the first of them first. */
    private Map<String, Long> expectedCounts() {
        List<EventGenerator.City> cities = EventGenerator.DEFAULT_CITIES;
        Map<String, Long> counts = new HashMap<>();
        for (int i = 0; i < cities.size(); i++) {
            long count = messages / cities.size() + (i < messages % cities.size() ? 1 : 0);
            if (count > 0) {
                counts.put(cities.get(i).name(), count);
            }
        }
        return counts;
    }

    private static Path write(Path dir, String name, String text) throws IOException {
        return Files.writeString(dir.resolve(name), text);
    }

    private static String shortId() {
        return UUID.randomUUID().toString().substring(0, 8);
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /**
     * Numbered progress lines with each run's result, and what else used the CPU while each worker lived: the
     * broker, and everything but the broker, the worker and this process.
     */
    private static final class Step {
        private final Terminal terminal;
        private final int total;
        private final BrokerProcess broker;
        private int current;
        private long brokerBefore;
        private long machineBefore;
        private long selfBefore;

        Step(Terminal terminal, int total, BrokerProcess broker) {
            this.terminal = terminal;
            this.total = total;
            this.broker = broker;
        }

        void start(String what) {
            current++;
            brokerBefore = broker.cpuNanos();
            machineBefore = ProcessCpu.machineBusyNanos();
            selfBefore = ProcessCpu.selfNanos();
            terminal.line(String.format(Locale.ROOT, "[%d/%d] %s...", current, total, what));
        }

        Measurement.Round done(WorkerReport report) {
            long brokerCpu = ProcessCpu.between(brokerBefore, broker.cpuNanos());
            long machine = ProcessCpu.between(machineBefore, ProcessCpu.machineBusyNanos());
            long self = ProcessCpu.between(selfBefore, ProcessCpu.selfNanos());
            long others = brokerCpu < 0 || machine < 0 || self < 0 || report.lifetimeCpuNanos() < 0
                    ? -1 : Math.max(0, machine - brokerCpu - self - report.lifetimeCpuNanos());
            terminal.line(String.format(Locale.ROOT, "      %,.0f msgs/s over %.2f s, peak RSS %.0f MiB", report.messagesPerSecond(),
                    report.seconds(), report.peakRssMib()));
            return new Measurement.Round(report, brokerCpu < 0 ? -1 : brokerCpu / 1e9, others < 0 ? -1 : others / 1e9);
        }
    }
}
