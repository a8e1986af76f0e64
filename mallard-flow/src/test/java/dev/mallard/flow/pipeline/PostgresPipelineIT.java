// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.flow.config.PipelineConfig;
import dev.mallard.flow.config.PipelineConfigReader;
import dev.mallard.flow.sink.postgres.PostgresTestDatabase;
import dev.mallard.testkit.EmbeddedKafka;
import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** examples/postgres-upsert.yml run for real: a Kafka broker in this JVM into the local Postgres. */
class PostgresPipelineIT {
    private static final Path EXAMPLE = Path.of("..", "examples", "postgres-upsert.yml");
    private static final List<String> CITIES = List.of("New York", "Baltimore", "Columbus", "Denver", "Austin");

    // A broker per test: the example's group id is fixed, and a static member left in the group by another
    // test's state file would hold the group until its session expired.
    private EmbeddedKafka kafka;

    @TempDir
    Path dir;

    private PostgresTestDatabase postgres;
    private String table;
    private String topic;

    @BeforeEach
    void createTableAndTopic() throws Exception {
        postgres = PostgresTestDatabase.require();
        kafka = EmbeddedKafka.start();
        table = PostgresTestDatabase.uniqueTable("city_totals");
        postgres.execute("CREATE TABLE " + table + " (city text PRIMARY KEY, total bigint)");
        topic = "city-events-" + UUID.randomUUID();
        kafka.createTopic(topic, 3);
    }

    @AfterEach
    void stopBroker() {
        if (kafka != null) {
            kafka.close();
        }
    }

    private PipelineConfig example() {
        return new PipelineConfigReader(ConfigEnvironment.from(Map.of(
                "SQLFLOW_KAFKA_BROKERS", kafka.bootstrapServers(),
                "MALLARD_TOPIC", topic,
                "MALLARD_STATE_DIR", dir.toString(),
                "MALLARD_POSTGRES_DSN", postgres.dsn(),
                "MALLARD_POSTGRES_TABLE", table))).read(EXAMPLE).orThrow();
    }

    private void publish(int from, int count) {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties, new StringSerializer(), new StringSerializer())) {
            for (int i = from; i < from + count; i++) {
                producer.send(new ProducerRecord<>(topic, "{\"event\":\"search\",\"properties\":{\"city\":\"" + CITIES.get(i % CITIES.size()) + "\"}}"));
            }
            producer.flush();
        }
    }

    /** What a GROUP BY over the first {@code published} events gives. */
    private static List<String> groupBy(int published) {
        List<String> rows = new ArrayList<>();
        CITIES.stream().sorted().forEach(city -> {
            int index = CITIES.indexOf(city);
            long count = published / CITIES.size() + (index < published % CITIES.size() ? 1 : 0);
            rows.add(city + "|" + count);
        });
        return rows;
    }

    private long run(long messages) {
        try (PipelineRunner runner = new PipelineRunner(example(), ConfigEnvironment.from(Map.of()),
                new PipelineRunner.Options(messages, new ByteArrayOutputStream()))) {
            return BoundedRun.run(runner).messagesConsumed();
        }
    }

    @Test
    void theUpsertExampleKeepsTheTableEqualToAGroupByOfEverythingPublishedAcrossRestarts() throws Exception {
        publish(0, 12_003);
        assertThat(run(12_003)).isEqualTo(12_003);
        assertThat(postgres.rows("SELECT city, total FROM " + table + " ORDER BY city")).containsExactlyElementsOf(groupBy(12_003));
        publish(12_003, 7_001);
        assertThat(run(7_001)).isEqualTo(7_001);
        assertThat(postgres.rows("SELECT city, total FROM " + table + " ORDER BY city")).containsExactlyElementsOf(groupBy(19_004));
    }

    /**
     * A crash after the sink committed and before the state did: the state file is put back to what it held before
     * the last run, so the run's batches are processed and written to Postgres a second time.
     */
    @Test
    void batchesReplayedAfterACrashLeaveTheUpsertTableAsIfDeliveredOnce() throws Exception {
        Path state = dir.resolve("postgres-upsert.duckdb");
        Path saved = dir.resolve("saved");
        Files.createDirectories(saved);
        publish(0, 6_000);
        assertThat(run(6_000)).isEqualTo(6_000);
        Files.copy(state, saved.resolve("state.duckdb"));
        publish(6_000, 9_000);
        assertThat(run(9_000)).isEqualTo(9_000);
        assertThat(postgres.rows("SELECT city, total FROM " + table + " ORDER BY city")).containsExactlyElementsOf(groupBy(15_000));

        Files.copy(saved.resolve("state.duckdb"), state, StandardCopyOption.REPLACE_EXISTING);
        Files.deleteIfExists(dir.resolve("postgres-upsert.duckdb.wal"));
        assertThat(run(9_000)).as("the lost batches are read again").isEqualTo(9_000);
        assertThat(postgres.rows("SELECT city, total FROM " + table + " ORDER BY city")).containsExactlyElementsOf(groupBy(15_000));
    }
}
