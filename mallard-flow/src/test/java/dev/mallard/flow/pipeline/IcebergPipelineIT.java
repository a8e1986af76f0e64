// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.flow.config.PipelineConfig;
import dev.mallard.flow.config.PipelineConfigReader;
import dev.mallard.flow.sink.iceberg.IcebergSink;
import dev.mallard.flow.sink.iceberg.IcebergTables;
import dev.mallard.flow.sink.postgres.PostgresTestDatabase;
import dev.mallard.flow.source.Message;
import dev.mallard.flow.source.Source;
import dev.mallard.testkit.EmbeddedKafka;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import org.apache.iceberg.Snapshot;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * examples/kafka-iceberg.yml (SQLFlow's kafka.mem.iceberg.yml with its catalog located in the sink) run against a Kafka
 * broker in this JVM, into a SQLite and a Postgres catalog, and read back with Iceberg's own reader.
 */
class IcebergPipelineIT {
    private static final Path EXAMPLE = Path.of("..", "examples", "kafka-iceberg.yml");
    private static final List<String> CITIES = List.of("New York", "Baltimore", "Columbus", "Denver", "Austin");
    private static final Instant START = Instant.parse("2015-12-12T19:11:01.249Z");

    private EmbeddedKafka kafka;
    private String topic;

    @TempDir
    Path dir;

    @BeforeEach
    void startBroker() {
        kafka = EmbeddedKafka.start();
        topic = "iceberg-events-" + UUID.randomUUID();
        kafka.createTopic(topic, 3);
    }

    @AfterEach
    void stopBroker() {
        if (kafka != null) {
            kafka.close();
        }
    }

    private PipelineConfig example(String catalogUri, Map<String, String> extra) {
        Map<String, String> environment = new HashMap<>(Map.of(
                "SQLFLOW_KAFKA_BROKERS", kafka.bootstrapServers(),
                "MALLARD_TOPIC", topic,
                "MALLARD_GROUP", "g-" + UUID.randomUUID(),
                "MALLARD_ICEBERG_CATALOG", catalogUri,
                "MALLARD_ICEBERG_WAREHOUSE", dir.resolve("warehouse").toUri().toString()));
        environment.putAll(extra);
        return new PipelineConfigReader(ConfigEnvironment.from(environment)).read(EXAMPLE).orThrow();
    }

    private void publish(int from, int count) {
        publish(topic, from, count);
    }

    private void publish(String topic, int from, int count) {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties, new StringSerializer(), new StringSerializer())) {
            for (int i = from; i < from + count; i++) {
                producer.send(new ProducerRecord<>(topic, "{\"timestamp\":\"" + START.plusSeconds(i) + "\",\"event\":\"search\","
                        + "\"properties\":{\"city\":\"" + CITIES.get(i % CITIES.size()) + "\"}}"));
            }
            producer.flush();
        }
    }

    /** What the example's SQL makes of the first {@code published} events, one row each. */
    private static List<String> reference(int published) {
        List<String> rows = new ArrayList<>();
        for (int i = 0; i < published; i++) {
            rows.add(LocalDateTime.ofInstant(START.plusSeconds(i), ZoneOffset.UTC) + "|" + CITIES.get(i % CITIES.size()));
        }
        return rows;
    }

    private static List<String> table(String jdbcUrl, Path warehouse) {
        try (IcebergTables tables = IcebergTables.open("sqlflow_test", jdbcUrl, warehouse)) {
            return tables.records("default.city_events").stream().map(r -> r.getField("timestamp") + "|" + r.getField("city")).toList();
        }
    }

    private long run(PipelineConfig config, long messages, PipelineRunner.SourceFactory sources) {
        return run(config, ConfigEnvironment.from(Map.of()), messages, sources);
    }

    private long run(PipelineConfig config, ConfigEnvironment environment, long messages, PipelineRunner.SourceFactory sources) {
        try (PipelineRunner runner = new PipelineRunner(config, environment,
                new PipelineRunner.Options(messages, new ByteArrayOutputStream()), sources)) {
            return BoundedRun.run(runner).messagesConsumed();
        }
    }

    @Test
    void theKafkaIcebergExampleAppendsEveryRecordOnceToASqliteCatalogAcrossRuns() {
        String catalog = dir.resolve("catalog.db").toString();
        PipelineConfig config = example("sqlite:///" + catalog, Map.of());
        publish(0, 7_003);
        assertThat(run(config, 7_003, PipelineRunner::openSource)).isEqualTo(7_003);
        publish(7_003, 2_001);
        assertThat(run(config, 2_001, PipelineRunner::openSource)).isEqualTo(2_001);
        assertThat(table("jdbc:sqlite:" + catalog, dir.resolve("warehouse"))).containsExactlyInAnyOrderElementsOf(reference(9_004));
    }

    @Test
    void sqlflowsOwnKafkaMemIcebergConfigRunsUnchangedWithItsCatalogFoundByNameInPyicebergYaml() throws Exception {
        Path home = Files.createDirectories(dir.resolve("pyiceberg-home"));
        Path catalog = dir.resolve("sqlflow-catalog.db");
        // As SQLFlow's README sets up its local catalog: a SQLite database and a file warehouse, under the name the config uses.
        Files.writeString(home.resolve(".pyiceberg.yaml"), """
                catalog:
                  sqlflow_test:
                    uri: sqlite:///%s
                    warehouse: %s
                """.formatted(catalog, dir.resolve("warehouse").toUri()));
        ConfigEnvironment environment = ConfigEnvironment.from(Map.of("SQLFLOW_KAFKA_BROKERS", kafka.bootstrapServers(),
                "PYICEBERG_HOME", home.toString()));
        String text;
        try (InputStream in = IcebergPipelineIT.class.getResourceAsStream("/sqlflow/kafka.mem.iceberg.yml")) {
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        PipelineConfig config = new PipelineConfigReader(environment).read("kafka.mem.iceberg.yml", text).orThrow();
        kafka.createTopic("input-kafka-mem-iceberg", 1);
        publish("input-kafka-mem-iceberg", 0, 6_001);
        assertThat(run(config, environment, 6_001, PipelineRunner::openSource)).isEqualTo(6_001);
        assertThat(table("jdbc:sqlite:" + catalog, dir.resolve("warehouse"))).containsExactlyInAnyOrderElementsOf(reference(6_001));
    }

    @Test
    void theKafkaIcebergExampleWritesToAPostgresCatalog() throws Exception {
        PostgresTestDatabase postgres = PostgresTestDatabase.require();
        String schema = PostgresTestDatabase.uniqueTable("iceberg_catalog");
        postgres.execute("CREATE SCHEMA " + schema);
        try {
            String uri = "postgresql://postgres@127.0.0.1:5432/test?currentSchema=" + schema;
            publish(0, 3_000);
            assertThat(run(example(uri, Map.of()), 3_000, PipelineRunner::openSource)).isEqualTo(3_000);
            assertThat(table("jdbc:postgresql://127.0.0.1:5432/test?currentSchema=" + schema + "&user=postgres", dir.resolve("warehouse")))
                    .containsExactlyInAnyOrderElementsOf(reference(3_000));
            assertThat(postgres.rows("SELECT table_namespace, table_name FROM " + schema + ".iceberg_tables"))
                    .containsExactly("default|city_events");
        } finally {
            postgres.execute("DROP SCHEMA " + schema + " CASCADE");
        }
    }

    /**
     * A crash after the Iceberg commit and before the offsets' commit, on the second batch: the restarted pipeline
     * resumes from the positions in the table's last snapshot, and no batch is in the table twice.
     */
    @Test
    void aCrashBetweenTheIcebergCommitAndTheOffsetCommitLeavesEveryRecordInTheTableOnce() {
        String catalog = dir.resolve("catalog.db").toString();
        PipelineConfig config = example("sqlite:///" + catalog, Map.of());
        publish(0, 20_000);
        assertThatThrownBy(() -> run(config, 20_000, (cfg, stored) -> new CrashingAfterSink(PipelineRunner.openSource(cfg, stored), 2)))
                .hasMessageContaining("crash after the sink");
        List<String> afterCrash = table("jdbc:sqlite:" + catalog, dir.resolve("warehouse"));
        assertThat(afterCrash).as("the batch of the crash is committed").isNotEmpty().hasSizeLessThan(20_000);
        assertThat(run(config, 20_000 - afterCrash.size(), PipelineRunner::openSource)).isEqualTo(20_000 - afterCrash.size());
        assertThat(table("jdbc:sqlite:" + catalog, dir.resolve("warehouse"))).containsExactlyInAnyOrderElementsOf(reference(20_000));
        try (IcebergTables tables = IcebergTables.open("sqlflow_test", "jdbc:sqlite:" + catalog, dir.resolve("warehouse"))) {
            for (Snapshot snapshot : tables.table("default.city_events").snapshots()) {
                assertThat(snapshot.summary()).containsKey(IcebergSink.SUMMARY_POSITIONS);
            }
        }
    }

    /** A source that dies, as a process killed would, once the n-th batch is flushed to the sink and before anything commits. */
    private static final class CrashingAfterSink implements Source {
        private final Source source;
        private int batches;
        private final int crashAt;

        CrashingAfterSink(Source source, int crashAt) {
            this.source = source;
            this.crashAt = crashAt;
        }

        @Override
        public List<Message> poll(Duration timeout, int max) {
            return source.poll(timeout, max);
        }

        @Override
        public Optional<String> unreachable() {
            return source.unreachable();
        }

        @Override
        public void processed(Map<Partition, Long> nextOffsets) {
            if (++batches == crashAt) {
                throw new IllegalStateException("crash after the sink flushed batch " + batches);
            }
            source.processed(nextOffsets);
        }

        @Override
        public void commit(Map<Partition, Long> nextOffsets) {
            source.commit(nextOffsets);
        }

        @Override
        public void commit(Map<Partition, Long> nextOffsets, String metadata) {
            source.commit(nextOffsets, metadata);
        }

        @Override
        public Map<Partition, String> takeAssignedMetadata() {
            return source.takeAssignedMetadata();
        }

        @Override
        public Set<Partition> takeRevoked() {
            return source.takeRevoked();
        }

        @Override
        public Set<Partition> takeMovedAway() {
            return source.takeMovedAway();
        }

        @Override
        public void rewind(Map<Partition, Long> positions) {
            source.rewind(positions);
        }

        @Override
        public Map<Partition, Boolean> readToEnd(Set<Partition> partitions) {
            return source.readToEnd(partitions);
        }

        @Override
        public Optional<Set<Partition>> assignment() {
            return source.assignment();
        }

        @Override
        public void close() {
            source.close();
        }
    }
}
