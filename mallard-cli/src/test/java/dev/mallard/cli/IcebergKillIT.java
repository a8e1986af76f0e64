// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.flow.sink.iceberg.IcebergSink;
import dev.mallard.flow.sink.iceberg.LocalFileIO;
import dev.mallard.testkit.EmbeddedKafka;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Kafka -> Iceberg pipeline (SQLite catalog, offsets in Kafka) as a separate process, killed with SIGKILL at random
 * moments again and again, then run to the end: read with Iceberg's own reader, the table holds every published record
 * exactly once, and every snapshot carries the positions it committed.
 */
class IcebergKillIT {
    private static final List<String> CITIES = List.of("New York", "Baltimore", "Columbus", "Denver", "Austin");
    private static final Instant START = Instant.parse("2015-12-12T19:11:01.249Z");
    private static EmbeddedKafka kafka;

    @TempDir
    Path dir;

    @BeforeAll
    static void startBroker() {
        kafka = EmbeddedKafka.start();
    }

    @AfterAll
    static void stopBroker() {
        kafka.close();
    }

    private static void publish(String topic, int count) {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(topic, "{\"timestamp\":\"" + START.plusSeconds(i) + "\",\"properties\":{\"city\":\""
                        + CITIES.get(i % CITIES.size()) + "\"}}"));
            }
            producer.flush();
        }
    }

    private JdbcCatalog catalog() {
        Map<String, String> properties = new HashMap<>();
        properties.put(CatalogProperties.URI, "jdbc:sqlite:" + dir.resolve("catalog.db"));
        properties.put(CatalogProperties.WAREHOUSE_LOCATION, dir.resolve("warehouse").toUri().toString());
        properties.put(CatalogProperties.FILE_IO_IMPL, LocalFileIO.class.getName());
        JdbcCatalog catalog = new JdbcCatalog();
        catalog.initialize("kill", properties);
        return catalog;
    }

    /** The records the current snapshot says the table holds; 0 before the table exists. */
    private long committedRecords() {
        try (JdbcCatalog catalog = catalog()) {
            if (!catalog.tableExists(TableIdentifier.parse("default.events"))) {
                return 0;
            }
            Snapshot current = catalog.loadTable(TableIdentifier.parse("default.events")).currentSnapshot();
            return current == null ? 0 : Long.parseLong(current.summary().get("total-records"));
        }
    }

    @Test
    void killedWithSigkillAtRandomMomentsAndRestartedTheIcebergTableHoldsEveryRecordExactlyOnce() throws Exception {
        int total = 30_000;
        String topic = "iceberg-kill-" + UUID.randomUUID();
        kafka.createTopic(topic, 3);
        publish(topic, total);
        Path config = dir.resolve("kill.yml");
        Files.writeString(config, """
                pipeline:
                  name: iceberg-kill
                  batch_size: 500
                  flush_interval_seconds: 1
                  source:
                    type: kafka
                    kafka:
                      brokers: [%s]
                      group_id: %s
                      group_instance_id: iceberg-kill
                      auto_offset_reset: earliest
                      topics: [%s]
                  handler:
                    type: handlers.InferredMemBatch
                    sql: SELECT CAST(timestamp AS TIMESTAMP) AS timestamp, properties.city AS city FROM batch
                  sink:
                    type: iceberg
                    iceberg:
                      catalog_name: kill
                      table_name: default.events
                      catalog:
                        uri: "sqlite:///%s"
                        warehouse: "%s"
                """.formatted(kafka.bootstrapServers(), "g-" + UUID.randomUUID(), topic, dir.resolve("catalog.db"),
                dir.resolve("warehouse").toUri()));
        Random random = new Random(22);
        int kills = 0;
        int killsMidStream = 0;
        // A static member (group_instance_id) takes its partitions back at once after a kill, as a restarted worker would.
        while (kills < 6) {
            Path log = dir.resolve("kill-" + kills + ".log");
            Process run = MallardJar.start(log, "run", config.toString());
            MallardJar.awaitProcessing(run, log);
            Thread.sleep(random.nextInt(1500));
            if (!run.isAlive()) {
                break;
            }
            run.destroyForcibly();
            assertThat(run.waitFor(30, TimeUnit.SECONDS)).isTrue();
            kills++;
            long committed = committedRecords();
            if (committed > 0 && committed < total) {
                killsMidStream++;
            }
            if (committed >= total) {
                break;
            }
        }
        assertThat(kills).as("the pipeline was killed").isGreaterThanOrEqualTo(3);
        assertThat(killsMidStream).as("kills that landed mid-stream").isGreaterThanOrEqualTo(2);
        long remaining = total - committedRecords();
        if (remaining > 0) {
            Path lastLog = dir.resolve("last.log");
            Process last = MallardJar.start(lastLog, "run", config.toString(), "--max-msgs", Long.toString(remaining));
            assertThat(last.waitFor(180, TimeUnit.SECONDS)).isTrue();
            assertThat(last.exitValue()).as(Files.readString(lastLog)).isZero();
        }
        List<String> reference = new ArrayList<>();
        for (int i = 0; i < total; i++) {
            reference.add(LocalDateTime.ofInstant(START.plusSeconds(i), ZoneOffset.UTC) + "|" + CITIES.get(i % CITIES.size()));
        }
        try (JdbcCatalog catalog = catalog()) {
            Table table = catalog.loadTable(TableIdentifier.parse("default.events"));
            assertThat(read(table)).containsExactlyInAnyOrderElementsOf(reference);
            for (Snapshot snapshot : table.snapshots()) {
                assertThat(snapshot.summary()).containsEntry(IcebergSink.SUMMARY_PIPELINE, "iceberg-kill").containsKey(IcebergSink.SUMMARY_POSITIONS);
            }
        }
    }

    private static List<String> read(Table table) {
        List<String> rows = new ArrayList<>();
        try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
            records.forEach(record -> rows.add(record.getField("timestamp") + "|" + record.getField("city")));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return rows;
    }
}
