// SPDX-License-Identifier: Apache-2.0
package dev.mallard.testkit;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;
import org.apache.kafka.metadata.bootstrap.BootstrapMetadata;
import org.apache.kafka.metadata.properties.MetaPropertiesEnsemble;
import org.apache.kafka.metadata.storage.Formatter;
import org.apache.kafka.server.common.Feature;
import org.apache.kafka.server.common.MetadataVersion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A single-node KRaft Kafka broker (broker and controller in one node) running in this JVM, built on Kafka's own
 * {@link KafkaClusterTestKit}. Clients in this process or another reach it at {@link #bootstrapServers()},
 * {@code 127.0.0.1:<port>}, over PLAINTEXT.
 *
 * <p>With {@link Options#withDataDir(Path)} the broker keeps its logs and metadata in that directory and a later
 * start on it sees the same topics, records and committed offsets; without it the data lives in a temporary
 * directory that {@link #close()} deletes. A start that fails while the test kit builds the node (an invalid
 * configuration, a directory it cannot create) has the test kit delete that directory's contents, as it cleans up
 * after itself: a data directory is for development data, not for data to keep.
 */
public final class EmbeddedKafka implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(EmbeddedKafka.class);

    /*
     * KafkaClusterTestKit binds the listener names it knows (EXTERNAL for clients, CONTROLLER) to ephemeral ports
     * before the broker starts and ignores the configured port for them. Clients therefore get a listener of their
     * own, which binds where it is told: a fixed port for `mallard dev kafka`, or 0 for an ephemeral one. The
     * pre-bound EXTERNAL socket is never used; the test kit closes it on close.
     */
    private static final String CLIENT_LISTENER = "PLAINTEXT";
    private static final String HOST = "127.0.0.1";
    private static final String META_PROPERTIES = "meta.properties";

    private final KafkaClusterTestKit cluster;
    private final int port;
    private final String bootstrapServers;
    private final Path dataDir;
    private final boolean temporary;
    private final AtomicBoolean closed = new AtomicBoolean();

    private EmbeddedKafka(KafkaClusterTestKit cluster, int port, Path dataDir, boolean temporary) {
        this.cluster = requireNonNull(cluster, "cluster is null");
        this.port = port;
        this.bootstrapServers = HOST + ":" + port;
        this.dataDir = requireNonNull(dataDir, "dataDir is null");
        this.temporary = temporary;
    }

    /**
     * How to start the broker.
     *
     * @param port the client port on 127.0.0.1; 0 picks a free one
     * @param dataDir where logs and metadata persist across starts; empty for a temporary directory
     * @param defaultPartitions partitions of a topic created without a count (auto-created or {@code num.partitions})
     */
    public record Options(int port, Optional<Path> dataDir, int defaultPartitions) {
        public Options {
            if (port < 0 || port > 65_535) {
                throw new IllegalArgumentException("port must be 0 to 65535, was " + port);
            }
            requireNonNull(dataDir, "dataDir is null");
            if (defaultPartitions < 1) {
                throw new IllegalArgumentException("defaultPartitions must be at least 1, was " + defaultPartitions);
            }
        }

        /** An ephemeral port, a temporary directory, one partition per topic. */
        public static Options defaults() {
            return new Options(0, Optional.empty(), 1);
        }

        public Options withPort(int port) {
            return new Options(port, dataDir, defaultPartitions);
        }

        public Options withDataDir(Path dataDir) {
            return new Options(port, Optional.of(requireNonNull(dataDir, "dataDir is null")), defaultPartitions);
        }

        public Options withDefaultPartitions(int defaultPartitions) {
            return new Options(port, dataDir, defaultPartitions);
        }
    }

    /** Starts a broker with {@link Options#defaults()}. */
    public static EmbeddedKafka start() {
        return start(Options.defaults());
    }

    /**
     * Formats (on first use of the directory) and starts the broker and waits until it accepts clients.
     *
     * @throws MallardException {@code system.kafka.failed} when it does not start, e.g. the port is taken
     */
    public static EmbeddedKafka start(Options options) {
        requireNonNull(options, "options is null");
        long started = System.nanoTime();
        if (options.port() != 0) {
            requireFree(options.port());
        }
        Optional<Path> temporaryDir = options.dataDir().isPresent() ? Optional.empty() : Optional.of(createTempDir());
        Path baseDir = options.dataDir().orElseGet(temporaryDir::orElseThrow);
        KafkaClusterTestKit cluster = null;
        try {
            Files.createDirectories(baseDir);
            Optional<String> existingClusterId = formattedClusterId(baseDir);
            BootstrapMetadata metadata = productionMetadata();
            TestKitNodes nodes = new TestKitNodes.Builder(metadata)
                    .setCombined(true)
                    .setNumBrokerNodes(1)
                    .setNumControllerNodes(1)
                    .setBaseDirectory(baseDir)
                    .setClusterId(existingClusterId.orElseGet(() -> Uuid.randomUuid().toString()))
                    .build();
            KafkaClusterTestKit.Builder builder = new KafkaClusterTestKit.Builder(nodes).setDeleteOnClose(false);
            brokerConfig(options, nodes).forEach(builder::setConfigProp);
            cluster = builder.build();
            if (existingClusterId.isEmpty()) {
                format(cluster, nodes, metadata);
            }
            cluster.startup();
            cluster.waitForReadyBrokers();
            int port = cluster.brokers().values().iterator().next().boundPort(ListenerName.normalised(CLIENT_LISTENER));
            EmbeddedKafka kafka = new EmbeddedKafka(cluster, port, baseDir, temporaryDir.isPresent());
            LOG.info("kafka started at {} in {} ms, data in {}", kafka.bootstrapServers,
                    (System.nanoTime() - started) / 1_000_000, baseDir);
            return kafka;
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            RuntimeException failure = new MallardException(ErrorCode.SYSTEM_KAFKA_FAILED,
                    "the embedded Kafka broker did not start on " + HOST + ":" + options.port() + ": " + rootMessage(e), e);
            if (cluster != null) {
                try {
                    cluster.close();
                } catch (Exception closing) {
                    failure.addSuppressed(closing);
                }
            }
            temporaryDir.ifPresent(EmbeddedKafka::deleteQuietly);
            throw failure;
        }
    }

    /** {@code 127.0.0.1:<port>}, for the {@code bootstrap.servers} of any client. */
    public String bootstrapServers() {
        return bootstrapServers;
    }

    /** Where the broker keeps its logs and metadata: the given directory, or a temporary one. */
    public Path dataDir() {
        return dataDir;
    }

    /** The client port the broker is bound to. */
    public int port() {
        return port;
    }

    /**
     * Creates a topic with this many partitions and waits until the broker serves all of them; does nothing when
     * the topic exists already (whatever its partition count).
     */
    public void createTopic(String name, int partitions) {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers))) {
            Topics.ensure(admin, name, Optional.of(partitions));
        }
    }

    /** Stops the broker and controller; deletes the data when it lived in a temporary directory. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        long started = System.nanoTime();
        try {
            cluster.close();
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new MallardException(ErrorCode.SYSTEM_KAFKA_FAILED,
                    "the embedded Kafka broker at " + bootstrapServers + " did not stop cleanly: " + rootMessage(e), e);
        } finally {
            if (temporary) {
                deleteQuietly(dataDir);
            }
        }
        LOG.info("kafka at {} stopped in {} ms", bootstrapServers, (System.nanoTime() - started) / 1_000_000);
    }

    private static Map<String, Object> brokerConfig(Options options, TestKitNodes nodes) {
        String controller = nodes.controllerListenerName().value();
        String unused = nodes.brokerListenerName().value();
        Map<String, Object> config = new TreeMap<>();
        config.put("listeners", CLIENT_LISTENER + "://" + HOST + ":" + options.port() + "," + controller + "://localhost:0");
        config.put("listener.security.protocol.map",
                CLIENT_LISTENER + ":PLAINTEXT," + unused + ":PLAINTEXT," + controller + ":PLAINTEXT");
        config.put("inter.broker.listener.name", CLIENT_LISTENER);
        config.put("num.partitions", Integer.toString(options.defaultPartitions()));
        // One node: every internal topic has one replica. One partition each, too: the default 50 partitions of
        // the offsets topic make the first consumer group wait while they are created.
        config.put("offsets.topic.replication.factor", "1");
        config.put("offsets.topic.num.partitions", "1");
        config.put("transaction.state.log.replication.factor", "1");
        config.put("transaction.state.log.min.isr", "1");
        config.put("transaction.state.log.num.partitions", "1");
        config.put("share.coordinator.state.topic.replication.factor", "1");
        config.put("share.coordinator.state.topic.min.isr", "1");
        config.put("group.initial.rebalance.delay.ms", "0");
        // The test kit enables unreleased protocol versions; a development broker should behave like a released one.
        config.put("unstable.api.versions.enable", "false");
        config.put("unstable.feature.versions.enable", "false");
        return config;
    }

    /*
     * What KafkaClusterTestKit.format() does for one combined node, except that Kafka's formatter reports to
     * System.out, which `mallard dev kafka` keeps for its ready line; this one reports to the log.
     */
    private static void format(KafkaClusterTestKit cluster, TestKitNodes nodes, BootstrapMetadata metadata) throws Exception {
        MetaPropertiesEnsemble ensemble = cluster.controllers().values().iterator().next().sharedServer().metaPropsEnsemble();
        ByteArrayOutputStream report = new ByteArrayOutputStream();
        Formatter formatter = new Formatter()
                .setPrintStream(new PrintStream(report, true, StandardCharsets.UTF_8))
                .setNodeId(ensemble.nodeId().orElseThrow())
                .setClusterId(nodes.clusterId())
                .setDirectories(ensemble.logDirProps().keySet())
                .setMetadataLogDirectory(ensemble.metadataLogDir())
                .setControllerListenerName(nodes.controllerListenerName().value())
                // The formatter derives the other features' levels from the release version, as kafka-storage does.
                .setReleaseVersion(metadata.metadataVersion());
        formatter.run();
        LOG.debug("{}", report.toString(StandardCharsets.UTF_8).strip());
    }

    /** The metadata version and feature levels a released 4.1 broker is formatted with (the test kit's are unreleased). */
    private static BootstrapMetadata productionMetadata() {
        MetadataVersion version = MetadataVersion.latestProduction();
        return BootstrapMetadata.fromVersions(version, productionFeatures(version), "mallard");
    }

    private static Map<String, Short> productionFeatures(MetadataVersion version) {
        return Feature.PRODUCTION_FEATURES.stream()
                .collect(Collectors.toMap(Feature::featureName, feature -> feature.defaultLevel(version), (a, b) -> a, TreeMap::new));
    }

    /** The cluster id a previous start wrote into this directory, when there was one. */
    private static Optional<String> formattedClusterId(Path baseDir) throws IOException {
        try (Stream<Path> files = Files.find(baseDir, 2, (path, attributes) -> path.getFileName().toString().equals(META_PROPERTIES))) {
            Optional<Path> metaProperties = files.findFirst();
            if (metaProperties.isEmpty()) {
                return Optional.empty();
            }
            Properties properties = new Properties();
            try (InputStream in = Files.newInputStream(metaProperties.get())) {
                properties.load(in);
            }
            return Optional.ofNullable(properties.getProperty("cluster.id"));
        }
    }

    /*
     * A taken port would otherwise surface as the broker's fatal error, several stack traces long, after the
     * controller has started; one line before anything starts says the same. Another process may still take the
     * port in between, and then the broker's own error it is.
     */
    private static void requireFree(int port) {
        try (ServerSocket probe = new ServerSocket()) {
            probe.setReuseAddress(true);
            probe.bind(new InetSocketAddress(HOST, port));
        } catch (IOException e) {
            throw new MallardException(ErrorCode.SYSTEM_KAFKA_FAILED, "the embedded Kafka broker cannot listen on " + HOST + ":" + port
                    + ": " + e.getMessage() + " (is another broker running there?)", e);
        }
    }

    private static Path createTempDir() {
        try {
            return Files.createTempDirectory("mallard-kafka-");
        } catch (IOException e) {
            throw new MallardException(ErrorCode.SYSTEM_IO_FAILED, "cannot create a temporary directory for Kafka: " + e.getMessage(), e);
        }
    }

    private static void deleteQuietly(Path dir) {
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> {
                try {
                    Files.deleteIfExists(path);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException | UncheckedIOException e) {
            LOG.warn("could not delete the temporary Kafka directory {}: {}", dir, e.getMessage());
        }
    }

    static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
    }
}
