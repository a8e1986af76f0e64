// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.pipeline;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.core.engine.Engine;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.metrics.MetricsRegistry;
import dev.mallard.flow.config.PipelineConfig;
import dev.mallard.flow.handler.Handler;
import dev.mallard.flow.handler.Handlers;
import dev.mallard.flow.handler.RecordColumns;
import dev.mallard.flow.metrics.Phase;
import dev.mallard.flow.metrics.PipelineEndpoints;
import dev.mallard.flow.metrics.PipelineMetrics;
import dev.mallard.flow.sink.CountedSink;
import dev.mallard.flow.sink.RetryingSink;
import dev.mallard.flow.sink.Sink;
import dev.mallard.flow.sink.Sinks;
import dev.mallard.flow.source.KafkaSource;
import dev.mallard.flow.source.Message;
import dev.mallard.flow.source.MeteredSource;
import dev.mallard.flow.source.Source.Partition;
import dev.mallard.flow.source.Source;
import dev.mallard.flow.source.webhook.WebhookSource;
import dev.mallard.flow.source.websocket.WebSocketSource;
import dev.mallard.flow.state.OffsetStore;
import dev.mallard.flow.state.PipelineIdentity;
import dev.mallard.flow.window.WindowHandOver;
import dev.mallard.flow.window.Windows;
import dev.mallard.views.MaterializedViews;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code mallard run}: consume, batch, handle, write and flush, commit. One thread owns the pipeline and its
 * DuckDB connection. With a state path, each batch's handler writes and the offsets that produced them
 * commit in one DuckDB transaction after the sink flushed; the source's own offsets are committed after that,
 * and only up to what was processed.
 */
public final class PipelineRunner implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PipelineRunner.class);
    private static final Duration POLL_SLICE = Duration.ofMillis(200);

    /**
     * Options from the command line. {@code maxMessages} 0 means no limit; with {@code metricsPort} the
     * pipeline serves /metrics, /healthz and (with a state path) /stats on that port (0 picks one).
     */
    public record Options(long maxMessages, OutputStream console, Optional<Integer> metricsPort, Optional<Host> host) {
        public Options {
            requireNonNull(console, "console is null");
            requireNonNull(metricsPort, "metricsPort is null");
            requireNonNull(host, "host is null");
        }

        public Options(long maxMessages, OutputStream console, Optional<Integer> metricsPort) {
            this(maxMessages, console, metricsPort, Optional.empty());
        }

        public Options(long maxMessages, OutputStream console) {
            this(maxMessages, console, Optional.empty());
        }
    }

    /**
     * A pipeline hosted in a server's process: it runs on a connection of its own to the server's database instead of
     * opening its state path, its meters go to the server's registry, and with a state path its offsets are kept in
     * that database under {@code offsetsSchema} (usually {@link #offsetsSchema}; empty: where {@code mallard run} keeps
     * them, for a server whose database is the pipeline's own state file).
     */
    public record Host(Engine database, MetricsRegistry registry, Optional<String> offsetsSchema) {
        public Host {
            requireNonNull(database, "database is null");
            requireNonNull(registry, "registry is null");
            requireNonNull(offsetsSchema, "offsetsSchema is null");
        }
    }

    /** Where a hosted pipeline of that name keeps its offsets and its identity: one schema per pipeline. */
    public static String offsetsSchema(String pipeline) {
        return "mallard_pipeline_" + pipeline;
    }

    /**
     * How far a run got, readable from any thread while it runs: whether it consumes (its setup is done), the batches
     * and messages it processed, the errors it counted, when its last batch committed and the Kafka lag after it.
     */
    public record Progress(boolean consuming, long batches, long messages, long errors, Optional<Instant> lastBatchAt, Optional<Long> lag) {}

    /** What a run did, for {@code --stats-json}. */
    public record Outcome(long messagesConsumed, long numErrors) {
        public String toJson() {
            return "{\"messages_consumed\":" + messagesConsumed + ",\"num_errors\":" + numErrors + "}";
        }
    }

    /** Builds the source once the state (and its stored offsets) is open; tests pass their own. */
    public interface SourceFactory {
        Source open(PipelineConfig config, Function<Partition, Optional<Long>> storedOffsets);
    }

    /** How SQLFlow (Go's encoding of a zero time.Time) writes an instant that never happened. */
    static final String NEVER = "0001-01-01T00:00:00Z";
    private static final ObjectMapper STATS_JSON = new ObjectMapper();

    private final PipelineConfig config;
    private final ConfigEnvironment environment;
    private final Options options;
    private final SourceFactory sources;
    private final MetricsRegistry registry;
    private volatile boolean stopRequested;
    private volatile PipelineEndpoints endpoints;
    private volatile Source openSource;
    private volatile RetryingSink openSink;
    private PipelineMetrics metrics;
    private volatile long consumed;
    private boolean sourceReachable = true;
    // Runs that failed (the batch that stopped them); what the policy set aside is the batcher's count.
    private volatile long failures;
    private volatile Batcher batcher;
    private volatile boolean consuming;
    private volatile long batches;
    private volatile Instant lastBatchAt;
    private volatile Instant lastArrivalAt;
    private volatile Instant lastErrorAt;
    private long errorsSeen;
    private volatile Long lastLag;
    // Per partition, the next offset this run processed up to (partitions a rebalance moved away leave it).
    private final Map<Partition, Long> processed = new HashMap<>();

    public PipelineRunner(PipelineConfig config, ConfigEnvironment environment, Options options) {
        this(config, environment, options, PipelineRunner::openSource);
    }

    public PipelineRunner(PipelineConfig config, ConfigEnvironment environment, Options options, SourceFactory sources) {
        this.config = requireNonNull(config, "config is null");
        this.environment = requireNonNull(environment, "environment is null");
        this.options = requireNonNull(options, "options is null");
        this.sources = requireNonNull(sources, "sources is null");
        this.registry = options.host().map(Host::registry).orElseGet(MetricsRegistry::new);
    }

    public static Source openSource(PipelineConfig config, Function<Partition, Optional<Long>> storedOffsets) {
        PipelineConfig.SourceConfig source = config.pipeline().source();
        return switch (source.type()) {
            case "kafka" -> new KafkaSource(source.settings(), config.pipeline().batchSize(), storedOffsets,
                    config.pipeline().statePath().isPresent(), staticMember(config));
            case "webhook" -> WebhookSource.open(config, storedOffsets);
            case "websocket" -> WebSocketSource.open(config, storedOffsets);
            default -> throw new MallardException(ErrorCode.USER_CONFIG_UNSUPPORTED, "source type " + source.type()
                    + " cannot run in this version of Mallard; use kafka, webhook or websocket");
        };
    }

    /**
     * A pipeline with a state file is one member that restarts: static membership lets the restarted process
     * take its partitions back at once. {@code group_instance_id} names the member explicitly. The id follows the host and the state file, so each worker of a
     * scaled-out group (each with its own file) is its own member.
     */
    static Optional<String> staticMember(PipelineConfig config) {
        String given = config.pipeline().source().settings().path("group_instance_id").asText("");
        if (!given.isEmpty()) {
            return Optional.of(given);
        }
        return config.pipeline().statePath().map(path -> {
            String host;
            try {
                host = java.net.InetAddress.getLocalHost().getHostName();
            } catch (java.net.UnknownHostException e) {
                host = "localhost";
            }
            String key = host + ":" + Path.of(path).toAbsolutePath().normalize();
            return "mallard-" + config.pipeline().name() + "-" + java.util.HexFormat.of().formatHex(
                    java.nio.ByteBuffer.allocate(4).putInt(key.hashCode()).array());
        });
    }

    /** Asks the run to stop: the batch being gathered is processed and committed, then {@link #run} returns. */
    public void requestStop() {
        stopRequested = true;
    }

    public Outcome outcome() {
        return new Outcome(consumed, errors());
    }

    public Progress progress() {
        return new Progress(consuming, batches, consumed, errors(), Optional.ofNullable(lastBatchAt), Optional.ofNullable(lastLag));
    }

    private long errors() {
        Batcher current = batcher;
        return failures + (current == null ? 0 : current.setAside());
    }

    /** Why /healthz answers 503, empty while it answers ok. */
    private Optional<String> unhealthy() {
        if (stopRequested) {
            return Optional.of("stopping");
        }
        Source source = openSource;
        if (source != null && source.unreachable().isPresent()) {
            return Optional.of("source_unreachable");
        }
        RetryingSink sink = openSink;
        return sink != null && sink.unreachable() ? Optional.of("sink_unreachable") : Optional.empty();
    }

    /**
     * The body of /stats, in SQLFlow's shape: {@code state} (null without a state path) and {@code progress}, when the
     * newest batch arrived, when the last one committed, when the last error was counted (Go's zero time,
     * {@value #NEVER}, for never, as SQLFlow writes it) and the two ages in seconds (-1 for no arrival yet; the commit
     * age counts from the endpoint's start until the first commit).
     */
    private String statsJson(Optional<StateStats> stats, Instant served) {
        ObjectNode root = STATS_JSON.createObjectNode();
        if (stats.isPresent()) {
            root.set("state", stats.get().state());
        } else {
            root.putNull("state");
        }
        Instant now = Instant.now();
        Instant arrival = lastArrivalAt;
        Instant commit = lastBatchAt;
        Instant error = lastErrorAt;
        root.putObject("progress")
                .put("last_arrival", arrival == null ? NEVER : arrival.toString())
                .put("last_commit", commit == null ? NEVER : commit.toString())
                .put("last_error", error == null ? NEVER : error.toString())
                .put("messages", consumed)
                .put("errors", errors())
                .put("arrival_age_seconds", arrival == null ? -1.0 : Duration.between(arrival, now).toNanos() / 1e9)
                .put("commit_age_seconds", Duration.between(commit == null ? served : commit, now).toNanos() / 1e9);
        return root.toString();
    }

    /** The port /metrics is served on, once the run has started it. */
    public Optional<Integer> metricsPort() {
        PipelineEndpoints current = endpoints;
        return current == null ? Optional.empty() : Optional.of(current.port());
    }

    /** The exporter's current text, as /metrics serves it; the meters stay until {@link #close}. */
    public String scrape() {
        return registry.scrape();
    }

    @Override
    public void close() {
        if (metrics != null) {
            metrics.close();
        }
        if (options.host().isEmpty()) {
            registry.close();
        }
    }

    public Outcome run() {
        PipelineConfig.Pipeline pipeline = config.pipeline();
        Optional<Path> statePath = pipeline.statePath().map(Path::of);
        if (options.host().isEmpty()) {
            statePath.ifPresent(PipelineRunner::createParent);
        }
        PipelineMetrics metrics = PipelineMetrics.of(registry, pipeline);
        this.metrics = metrics;
        try (Engine engine = options.host().map(host -> host.database().session())
                .orElseGet(() -> statePath.map(path -> Engine.onFile(path, pipeline.storageCompatibility())).orElseGet(Engine::inMemory))) {
            Optional<MaterializedViews> views = PipelineSetup.run(config, engine.connection());
            try {
                consume(engine, statePath, metrics, views);
            } finally {
                views.ifPresent(MaterializedViews::close);
            }
        }
        return outcome();
    }

    private void consume(Engine engine, Optional<Path> statePath, PipelineMetrics metrics, Optional<MaterializedViews> views) {
        PipelineConfig.Pipeline pipeline = config.pipeline();
        Optional<String> offsetsSchema = options.host().flatMap(Host::offsetsSchema);
        Optional<OffsetStore> offsets = statePath.map(path -> new OffsetStore(engine.connection(), PipelineIdentity.of(config), path, offsetsSchema));
        // A hosted pipeline's state is the server's database: no file of its own to measure, and the server serves its tables.
        Optional<StateStats> stats = options.host().isPresent() ? Optional.empty() : statePath.map(path -> new StateStats(engine, path));
        Instant served0 = Instant.now();
        try (PipelineEndpoints served = options.metricsPort()
                        .map(port -> PipelineEndpoints.start(PipelineEndpoints.DEFAULT_HOST, port, registry, this::unhealthy,
                                Optional.of(() -> statsJson(stats, served0))))
                        .orElse(null);
                StateStats closingStats = stats.orElse(null);
                Source source = sources.open(config, partition -> resumeAt(partition, offsets));
                Handler handler = Handlers.create(pipeline.handler(), RecordColumns.of(pipeline.source()), engine.connection(), environment,
                        statePath.isPresent());
                RetryingSink sink = new RetryingSink(Sinks.create(pipeline.sink(), options.console(), engine.allocator(), environment),
                        RetryingSink.Ladder.of(pipeline.sink().retry()), metrics::sinkRetry);
                Sink dlq = pipeline.onError().dlq().<Sink>map(d -> new CountedSink(Sinks.create(d, options.console(), engine.allocator(), environment),
                        (accepted, written) -> metrics.otherSinkRows("dlq", d.type(), accepted, written))).orElse(null);
                Windows windows = openWindows(engine, metrics)) {
            endpoints = served;
            openSource = source;
            openSink = sink;
            if (source instanceof MeteredSource metered) {
                metered.registerMeters(registry, pipeline.name());
            }
            LOG.info("pipeline started name={} batch_size={} state={} metrics_port={}", pipeline.name(), pipeline.batchSize(),
                    statePath.map(Path::toString).orElse("none"), served == null ? "none" : served.port());
            Batcher batcher = new Batcher(engine, offsets, handler, sink, Optional.ofNullable(dlq), metrics, stats, windows,
                    pipeline.onError().policy(), PipelineIdentity.of(config));
            this.batcher = batcher;
            consuming = true;
            // Buckets a crash left closed but unpublished go out first; SQLFlow's windows poll at start.
            windows.closeBuckets();
            windows.pollAll(System.nanoTime());
            while (true) {
                long reading = System.nanoTime();
                List<Message> batch = gather(source, windows, batcher, offsets);
                windows.previousOwners(source.takeAssignedMetadata());
                windows.follow(source.assignment(), System.nanoTime());
                long readNanos = System.nanoTime() - reading;
                boolean reachable = source.unreachable().isEmpty();
                if (sourceReachable && !reachable) {
                    metrics.error(ErrorCode.SYSTEM_SOURCE_UNREACHABLE, Phase.SOURCE_READ);
                }
                sourceReachable = reachable;
                if (!batch.isEmpty()) {
                    lastArrivalAt = Instant.now();
                    long bytes = 0;
                    for (Message message : batch) {
                        bytes += message.value().length;
                    }
                    metrics.messagesRead(batch.size(), bytes, readNanos);
                    metrics.phase(Phase.SOURCE_READ, readNanos);
                    long started = System.nanoTime();
                    Batcher.Processed done;
                    try {
                        done = batcher.process(batch, source);
                    } catch (RuntimeException e) {
                        // --stats-json of a failed run: the messages it read and the error that stopped it.
                        consumed += batch.size();
                        failures += 1;
                        lastErrorAt = Instant.now();
                        throw e;
                    }
                    processed.putAll(done.next());
                    if (done.closeDue()) {
                        windows.closeBuckets();
                        commitClosed(source, windows);
                    }
                    consumed += batch.size();
                    long elapsed = System.nanoTime() - started;
                    metrics.batchProcessed(elapsed);
                    if (LOG.isDebugEnabled()) {
                        LOG.debug("batch processed messages={} loaded={} consumed={} micros={} next_offsets={}", batch.size(), done.loaded(),
                                consumed, elapsed / 1000, done.next());
                    }
                    syncViews(views);
                    batches++;
                    lastBatchAt = Instant.now();
                    long errorsNow = errors();
                    if (errorsNow > errorsSeen) {
                        errorsSeen = errorsNow;
                        lastErrorAt = lastBatchAt;
                    }
                    if (source instanceof KafkaSource kafka) {
                        long total = 0;
                        for (Map.Entry<Partition, Long> lag : kafka.lag().entrySet()) {
                            metrics.consumerLag(lag.getKey().topic(), lag.getKey().partition(), lag.getValue());
                            total += lag.getValue();
                        }
                        lastLag = total;
                    }
                }
                if (windows.pollDue(System.nanoTime())) {
                    syncViews(views);
                }
                if (windows.onEventTime()) {
                    Set<Partition> silent = windows.silent(source.assignment(), System.nanoTime());
                    Map<Partition, Boolean> readToEnd = silent.isEmpty() ? Map.of() : source.readToEnd(silent);
                    if (windows.idle(readToEnd, System.nanoTime())) {
                        windows.closeBuckets();
                        commitClosed(source, windows);
                        syncViews(views);
                    }
                }
                if (stopRequested || limitReached()) {
                    break;
                }
            }
            if (windows.onEventTime()) {
                windows.closeBuckets();
                commitClosed(source, windows);
                syncViews(views);
            }
            if (windows.pollAll(System.nanoTime())) {
                syncViews(views);
            }
            LOG.info("pipeline stopped name={} messages={} errors={}", pipeline.name(), consumed, errors());
        }
    }

    /**
     * Moves the database's materialized views by what the last batch (or closed buckets) committed. The
     * changes were captured in the batch's own transaction, so a crash before this sync loses nothing: the next
     * run's first sync applies them.
     */
    private static void syncViews(Optional<MaterializedViews> views) {
        if (views.isPresent()) {
            long started = System.nanoTime();
            long changed = views.get().syncAfterWrite();
            LOG.debug("views synced view_rows_changed={} micros={}", changed, (System.nanoTime() - started) / 1000);
        }
    }

    /** The pipeline's windows, each with its sink in the sink's retry ladder. */
    private Windows openWindows(Engine engine, PipelineMetrics metrics) {
        return Windows.open(config, engine, sink -> new CountedSink(new RetryingSink(Sinks.create(sink, options.console(), engine.allocator(), environment),
                RetryingSink.Ladder.of(sink.retry()), () -> metrics.windowSinkRetry(sink.type())),
                (accepted, written) -> metrics.otherSinkRows("manager", sink.type(), accepted, written)), registry);
    }

    /**
     * After buckets closed: the feeds they held no longer hold Kafka's positions back, and the next owner of a
     * partition must see how far this window closed, or a rebalance before the next batch would have it publish
     * those buckets again.
     */
    private void commitClosed(Source source, Windows windows) {
        if (!processed.isEmpty()) {
            WindowHandOver.Commit commit = windows.commit(processed);
            source.commit(commit.positions(), commit.metadata());
        }
    }

    private boolean limitReached() {
        return options.maxMessages() > 0 && consumed >= options.maxMessages();
    }

    /**
     * Where a newly assigned partition resumes: the state's offset, or the sink's when it committed further (a crash
     * after an Iceberg commit and before the offsets' commit).
     */
    private Optional<Long> resumeAt(Partition partition, Optional<OffsetStore> offsets) {
        Optional<Long> stored = offsets.flatMap(store -> store.next(partition));
        RetryingSink sink = openSink;
        if (sink == null) {
            return stored;
        }
        Optional<Long> committed = Optional.ofNullable(sink.committedPositions(PipelineIdentity.of(config)).get(partition));
        return committed.isPresent() && stored.map(offset -> committed.get() > offset).orElse(true) ? committed : stored;
    }

    /** Up to batch_size messages, or what arrived within flush_interval_seconds, or what arrived before a stop. */
    private List<Message> gather(Source source, Windows windows, Batcher batcher, Optional<OffsetStore> offsets) {
        int batchSize = config.pipeline().batchSize();
        long remaining = options.maxMessages() > 0 ? options.maxMessages() - consumed : Long.MAX_VALUE;
        List<Message> batch = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(config.pipeline().flushIntervalSeconds()).toNanos();
        // A SQLFlow-style window polls on the wall clock: a batch being gathered ends when the next poll is due.
        long poll = windows.nextPollNanos().orElse(deadline);
        if (poll - deadline < 0) {
            deadline = poll;
        }
        while (batch.size() < batchSize && batch.size() < remaining && !stopRequested) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            int want = (int) Math.min(batchSize - batch.size(), remaining - batch.size());
            List<Message> polled = source.poll(Duration.ofNanos(Math.min(left, POLL_SLICE.toNanos())), want);
            Set<Partition> revoked = source.takeRevoked();
            // Their lag is the next owner's to report (an eager rebalance gives most straight back: the next batch's
            // lag puts those back).
            revoked.forEach(partition -> metrics.partitionRevoked(partition.topic(), partition.partition()));
            if (!revoked.isEmpty()) {
                // A rebalance took these partitions during the gather; whoever reads them next (this pipeline
                // too, from its last committed offset) reads these messages again, so they leave the batch.
                int before = batch.size();
                batch.removeIf(message -> revoked.contains(new Partition(message.topic(), message.partition())));
                LOG.info("partitions revoked while gathering a batch partitions={} messages_dropped={}", revoked, before - batch.size());
            }
            Set<Partition> movedAway = source.takeMovedAway();
            if (!movedAway.isEmpty()) {
                processed.keySet().removeAll(movedAway);
                if (windows.onEventTime()) {
                    // Their share of the open buckets goes with them; the rest is rebuilt from the partitions held.
                    // Where each partition still held got to: this run's position, or the state file's for one this run
                    // has not read yet (its open buckets' rows came from the previous run).
                    Map<Partition, Long> held = new HashMap<>();
                    for (Partition partition : source.assignment().orElse(Set.of())) {
                        Optional.ofNullable(processed.get(partition))
                                .or(() -> offsets.flatMap(store -> store.next(partition)))
                                .ifPresent(position -> held.put(partition, position));
                    }
                    Map<Partition, Long> again = batcher.handOver(movedAway, held).positions();
                    source.rewind(again);
                    processed.putAll(again);
                    batch.removeIf(message -> again.containsKey(new Partition(message.topic(), message.partition())));
                    polled = new ArrayList<>(polled);
                    polled.removeIf(message -> again.containsKey(new Partition(message.topic(), message.partition())));
                }
            }
            batch.addAll(polled);
        }
        return batch;
    }

    private static void createParent(Path state) {
        Path parent = state.toAbsolutePath().getParent();
        try {
            Files.createDirectories(parent);
        } catch (java.io.IOException e) {
            throw new MallardException(ErrorCode.SYSTEM_IO_FAILED, "cannot create the state directory " + parent + ": " + e.getMessage(), e);
        }
    }
}
