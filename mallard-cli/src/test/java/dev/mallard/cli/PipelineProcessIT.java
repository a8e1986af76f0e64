// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.testkit.Await;
import dev.mallard.testkit.EmbeddedKafka;
import dev.mallard.testkit.EventGenerator;
import dev.mallard.testkit.Progress;
import dev.mallard.testkit.Publisher;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code mallard run} as a separate process against a broker in this JVM: killed with SIGKILL, stopped with
 * SIGTERM, started twice on one state file. What the state file holds is checked between runs.
 */
class PipelineProcessIT {
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

    private static String publish(int partitions, long count) {
        String topic = "events-" + UUID.randomUUID();
        kafka.createTopic(topic, partitions);
        try (Publisher publisher = Publisher.connect(kafka.bootstrapServers(), Progress.silent())) {
            publisher.publish(topic, EventGenerator.userActions(11), count);
        }
        return topic;
    }

    private Path statefulConfig(String topic, Path state, int batchSize) throws IOException {
        Path config = dir.resolve("stateful-" + UUID.randomUUID() + ".yml");
        Files.writeString(config, """
                tables:
                  sql:
                    - name: totals
                      sql: CREATE TABLE IF NOT EXISTS totals (city VARCHAR, n BIGINT)
                pipeline:
                  name: kill-test
                  batch_size: %d
                  flush_interval_seconds: 1
                  drain_deadline_seconds: 20
                  state:
                    path: %s
                  source:
                    type: kafka
                    kafka:
                      brokers: [%s]
                      group_id: %s
                      auto_offset_reset: earliest
                      topics: [%s]
                  handler:
                    type: handlers.InferredMemBatch
                    sql: |
                      MERGE INTO totals t USING (SELECT properties.city AS city, count(*) AS n FROM batch GROUP BY 1) b ON t.city = b.city
                      WHEN MATCHED THEN UPDATE SET n = t.n + b.n WHEN NOT MATCHED THEN INSERT VALUES (b.city, b.n)
                  sink:
                    type: noop
                """.formatted(batchSize, state, kafka.bootstrapServers(), "g-" + UUID.randomUUID(), topic));
        return config;
    }

    private Process start(String... args) throws IOException {
        return MallardJar.start(dir.resolve("run-" + UUID.randomUUID() + ".log"), args);
    }

    /** totals per city and the sum of stored next offsets, read while no pipeline holds the file. */
    private record State(Map<String, Long> totals, long offsets) {
        long counted() {
            return totals.values().stream().mapToLong(Long::longValue).sum();
        }
    }

    private static State read(Path state) throws Exception {
        if (!Files.exists(state)) {
            return new State(Map.of(), 0);
        }
        Map<String, Long> totals = new HashMap<>();
        long offsets;
        try (Connection connection = DriverManager.getConnection("jdbc:duckdb:" + state)) {
            try (ResultSet rows = connection.createStatement().executeQuery("SELECT city, n FROM totals")) {
                while (rows.next()) {
                    totals.put(rows.getString(1), rows.getLong(2));
                }
            }
            try (ResultSet rows = connection.createStatement().executeQuery("SELECT coalesce(sum(next_offset), 0) FROM sqlflow_offsets")) {
                rows.next();
                offsets = rows.getLong(1);
            }
        } catch (java.sql.SQLException e) {
            // Killed before the tables were created.
            return new State(Map.of(), 0);
        }
        return new State(totals, offsets);
    }

    @Test
    void killedWithSigkillAtRandomPointsTheStateStillCountsEveryMessageExactlyOnce() throws Exception {
        long total = 100_000;
        String topic = publish(3, total);
        Path state = dir.resolve("state").resolve("kill.duckdb");
        Path config = statefulConfig(topic, state, 500);
        Random random = new Random(42);
        int kills = 0;
        int killsWhileAdvancing = 0;
        long previous = 0;
        while (kills < 5) {
            Path log = dir.resolve("kill-" + kills + ".log");
            Process run = MallardJar.start(log, "run", config.toString());
            MallardJar.awaitProcessing(run, log);
            // Somewhere in the middle of a batch: loading, handling, committing.
            Thread.sleep(random.nextInt(600));
            if (!run.isAlive()) {
                break;
            }
            run.destroyForcibly();
            assertThat(run.waitFor(30, TimeUnit.SECONDS)).isTrue();
            kills++;
            State after = read(state);
            // The invariant at every crash: the state holds the effect of exactly the offsets it records.
            assertThat(after.counted()).as("after kill %d", kills).isEqualTo(after.offsets());
            if (after.offsets() > previous && after.offsets() < total) {
                killsWhileAdvancing++;
            }
            previous = after.offsets();
            if (after.offsets() >= total) {
                break;
            }
        }
        assertThat(kills).as("the pipeline was killed mid-stream").isGreaterThanOrEqualTo(5);
        assertThat(killsWhileAdvancing).as("kills that landed while the state was advancing").isGreaterThanOrEqualTo(3);
        State beforeLast = read(state);
        Process last = start("run", config.toString(), "--max-msgs", Long.toString(total - beforeLast.offsets()));
        assertThat(last.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(last.exitValue()).isZero();
        State end = read(state);
        assertThat(end.totals()).containsExactlyInAnyOrderEntriesOf(Map.of("New York", total / 2, "Baltimore", total / 2));
        assertThat(end.offsets()).isEqualTo(total);
    }

    @Test
    void sigtermDrainsCommitsAndExitsZero() throws Exception {
        String topic = publish(2, 30_000);
        Path state = dir.resolve("drain.duckdb");
        Path stats = dir.resolve("stats.json");
        Path log = dir.resolve("drain.log");
        Process run = MallardJar.start(log, "run", statefulConfig(topic, state, 1_000).toString(), "--stats-json", stats.toString());
        // 30 batches of 1,000: a SIGTERM after the first lands while later ones are read.
        MallardJar.awaitProcessing(run, log);
        assertThat(run.isAlive()).as(Files.readString(log)).isTrue();
        run.destroy();
        assertThat(run.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(run.exitValue()).isZero();
        State after = read(state);
        assertThat(after.offsets()).isPositive();
        assertThat(after.counted()).isEqualTo(after.offsets());
        assertThat(Files.readString(stats)).matches("\\{\"messages_consumed\":\\d+,\"num_errors\":0}\\s*");
    }

    @Test
    void aSecondProcessOnTheSameStateFileFailsAtOnceWithAClearError() throws Exception {
        String topic = publish(1, 10);
        Path state = dir.resolve("locked.duckdb");
        Path config = statefulConfig(topic, state, 100);
        Path firstLog = dir.resolve("first.log");
        Process first = MallardJar.start(firstLog, "run", config.toString());
        try {
            // The state file is open and locked before the pipeline says it started.
            MallardJar.awaitLog(first, firstLog, "pipeline started");
            assertThat(first.isAlive()).as(Files.readString(firstLog)).isTrue();
            Path log = dir.resolve("second.log");
            Process second = new ProcessBuilder(MallardJar.command("run", config.toString())).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            assertThat(second.waitFor(60, TimeUnit.SECONDS)).as("the second process does not hang").isTrue();
            assertThat(second.exitValue()).isEqualTo(10);
            assertThat(Files.readString(log)).contains("user.state.locked").contains(state.toString());
        } finally {
            first.destroyForcibly();
            first.waitFor(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void aRunThatFailsWritesTheRealFiguresToStatsJson() throws Exception {
        String topic = "fails-" + UUID.randomUUID();
        kafka.createTopic(topic, 1);
        java.util.Properties properties = new java.util.Properties();
        properties.put("bootstrap.servers", kafka.bootstrapServers());
        try (org.apache.kafka.clients.producer.KafkaProducer<String, String> producer = new org.apache.kafka.clients.producer.KafkaProducer<>(
                properties, new org.apache.kafka.common.serialization.StringSerializer(), new org.apache.kafka.common.serialization.StringSerializer())) {
            for (int i = 0; i < 25; i++) {
                producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>(topic, "{\"n\":" + i + "}"));
            }
            producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>(topic, "not json"));
            producer.flush();
        }
        Path config = dir.resolve("fails.yml");
        Files.writeString(config, """
                pipeline:
                  batch_size: 10
                  flush_interval_seconds: 1
                  source:
                    type: kafka
                    kafka: {brokers: [%s], group_id: %s, auto_offset_reset: earliest, topics: [%s]}
                  handler: {type: handlers.InferredMemBatch, sql: SELECT count(*) AS n FROM batch}
                  sink: {type: noop}
                """.formatted(kafka.bootstrapServers(), "g-" + UUID.randomUUID(), topic));
        Path stats = dir.resolve("fails-stats.json");
        Path log = dir.resolve("fails.log");
        Process run = MallardJar.start(log, "run", config.toString(), "--stats-json", stats.toString());
        assertThat(run.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(run.exitValue()).as(Files.readString(log)).isEqualTo(10);
        assertThat(Files.readString(log)).contains("user.handler.parse_failed");
        // Every message read, the failed batch's included, and the error that stopped the run.
        assertThat(Files.readString(stats)).isEqualTo("{\"messages_consumed\":26,\"num_errors\":1}\n");
    }

    @Test
    void aSinkBlockingPastTheDrainDeadlineExitsFifteen() throws Exception {
        String topic = publish(1, 2_000);
        Path config = dir.resolve("slow.yml");
        // The sink's SQL runs for minutes: a sink that blocks, made of real work. Its first statement leaves a
        // file, so the test knows the sink is running.
        Path sinkStarted = dir.resolve("sink-started.csv");
        Files.writeString(config, """
                pipeline:
                  batch_size: 100
                  flush_interval_seconds: 1
                  drain_deadline_seconds: 2
                  source:
                    type: kafka
                    kafka: {brokers: [%s], group_id: %s, auto_offset_reset: earliest, topics: [%s]}
                  handler: {type: handlers.InferredMemBatch, sql: SELECT count(*) AS n FROM batch}
                  sink:
                    type: sqlcommand
                    sqlcommand:
                      sql: |
                        COPY (SELECT 1 AS started) TO '%s' (FORMAT csv);
                        CREATE OR REPLACE TEMP TABLE slow AS SELECT sum(a.range * b.range) AS s FROM range(1000000) a, range(1000000) b
                """.formatted(kafka.bootstrapServers(), "g-" + UUID.randomUUID(), topic, sinkStarted));
        Path log = dir.resolve("slow.log");
        Process run = MallardJar.start(log, "run", config.toString());
        Await.until("the sink to start (" + sinkStarted + ")", () -> !run.isAlive() || Files.exists(sinkStarted));
        assertThat(run.isAlive()).as(Files.readString(log)).isTrue();
        run.destroy();
        assertThat(run.waitFor(30, TimeUnit.SECONDS)).isTrue();
        // 15 only comes from the drain deadline passing: a completed drain exits 0, a failure 1 or 10.
        assertThat(run.exitValue()).isEqualTo(15);
    }
}
