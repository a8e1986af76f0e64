// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.flow.config.PipelineConfig;
import dev.mallard.flow.config.PipelineConfigReader;
import dev.mallard.testkit.EmbeddedKafka;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Tumbling windows through `mallard run`'s loop against a real broker started in this JVM. */
class WindowPipelineIT {
    private static EmbeddedKafka kafka;

    @BeforeAll
    static void startBroker() {
        kafka = EmbeddedKafka.start();
    }

    @AfterAll
    static void stopBroker() {
        kafka.close();
    }

    private static String topic(int partitions) {
        String name = "win-" + UUID.randomUUID();
        kafka.createTopic(name, partitions);
        return name;
    }

    private static void publish(String topic, List<String> values, int partitions) {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < values.size(); i++) {
                producer.send(new ProducerRecord<>(topic, i % partitions, null, values.get(i)));
            }
            producer.flush();
        }
    }

    private static PipelineConfig config(String topic, int sizeSeconds, int graceSeconds, String emitSql) {
        return config(topic, sizeSeconds, graceSeconds, emitSql, 50, 1);
    }

    private static PipelineConfig config(String topic, int sizeSeconds, int graceSeconds, String emitSql, int batchSize, int idleCloseSeconds) {
        return config(topic, sizeSeconds, graceSeconds, emitSql, batchSize, idleCloseSeconds, null);
    }

    /** With a state file when {@code state} is not null. */
    private static PipelineConfig config(String topic, int sizeSeconds, int graceSeconds, String emitSql, int batchSize, int idleCloseSeconds,
            java.nio.file.Path state) {
        return new PipelineConfigReader(ConfigEnvironment.from(Map.of("SQLFLOW_KAFKA_BROKERS", kafka.bootstrapServers()))).read("w.yml", """
                tables:
                  sql:
                    - name: city_counts
                      sql: CREATE TABLE IF NOT EXISTS city_counts (bucket TIMESTAMPTZ, city VARCHAR, n BIGINT)
                      window:
                        time_column: bucket
                        size_seconds: %d
                        grace_seconds: %d
                        idle_close_seconds: %d
                        emit_sql: %s
                        sink:
                          type: console
                pipeline:
                  batch_size: %d
                  flush_interval_seconds: 1%s
                  source:
                    type: kafka
                    kafka:
                      brokers: [{{ SQLFLOW_KAFKA_BROKERS }}]
                      group_id: %s
                      auto_offset_reset: earliest
                      topics: [%s]
                      event_time: {path: timestamp, format: rfc3339}
                  handler:
                    type: handlers.InferredMemBatch
                    sql: >-
                      INSERT INTO city_counts
                      SELECT time_bucket(INTERVAL '%d seconds', event_time), properties.city, count(*) FROM batch GROUP BY ALL
                  sink:
                    type: noop
                """.formatted(sizeSeconds, graceSeconds, idleCloseSeconds, emitSql, batchSize,
                        state == null ? "" : "\n  state:\n    path: " + state, "g-" + topic, topic, sizeSeconds)).orThrow();
    }

    /** Runs the pipeline until it printed this many lines (or a minute passed), then drains it. */
    private static List<String> runUntil(PipelineConfig config, int lines) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (PipelineRunner runner = new PipelineRunner(config, ConfigEnvironment.from(Map.of()), new PipelineRunner.Options(0, out))) {
            Thread running = Thread.ofPlatform().name("pipeline").start(runner::run);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (printed(out).size() < lines && System.nanoTime() < deadline && running.isAlive()) {
                Thread.sleep(100);
            }
            runner.requestStop();
            running.join(Duration.ofSeconds(60));
            assertThat(running.isAlive()).isFalse();
            assertThat(runner.scrape()).contains("window_late_rows_total{outcome=\"refused\",pipeline=\"pipeline\",window=\"city_counts\"} 0.0");
            int emitted = printed(out).size();
            if (emitted > 0) {
                // Every printed line is a row the window's sink delivered, counted under role="manager".
                assertThat(runner.scrape()).contains("sink_rows_written_total{pipeline=\"pipeline\",role=\"manager\",sink=\"console\"} "
                        + (double) emitted);
            }
        }
        return printed(out);
    }

    private static List<String> printed(ByteArrayOutputStream out) {
        synchronized (out) {
            return out.toString(StandardCharsets.UTF_8).lines().toList();
        }
    }

    @Test
    void sqlflowsWindowFixturePublishesItsHourAfterIdleClose() throws Exception {
        String in = topic(1);
        // SQLFlow's window.jsonl: four searches at 2015-12-12T19:11:01.249Z.
        List<String> fixture = List.of(
                "{\"timestamp\":\"2015-12-12T19:11:01.249Z\",\"event\":\"search\",\"properties\":{\"city\":\"New York\"},\"user\":{\"id\":\"123412ds\"}}",
                "{\"timestamp\":\"2015-12-12T19:11:01.249Z\",\"event\":\"search\",\"properties\":{\"city\":\"New York\"},\"user\":{\"id\":\"123412ds1\"}}",
                "{\"timestamp\":\"2015-12-12T19:11:01.249Z\",\"event\":\"search\",\"properties\":{\"city\":\"Baltimore\"},\"user\":{\"id\":\"123412ds1\"}}",
                "{\"timestamp\":\"2015-12-12T19:11:01.249Z\",\"event\":\"search\",\"properties\":{\"city\":\"Baltimore\"},\"user\":{\"id\":\"123412ds1\"}}");
        publish(in, fixture, 1);
        List<String> published = runUntil(config(in, 3600, 0, "SELECT bucket, city, sum(n) AS n FROM closed GROUP BY ALL ORDER BY city DESC"), 2);
        assertThat(published).containsExactly(
                "{\"bucket\":\"2015-12-12T19:00:00Z\",\"city\":\"New York\",\"n\":2}",
                "{\"bucket\":\"2015-12-12T19:00:00Z\",\"city\":\"Baltimore\",\"n\":2}");
    }

    @Test
    void aMultiPartitionInterleavedStreamPublishesWhatABatchGroupByComputes() throws Exception {
        String in = topic(3);
        Instant start = Instant.parse("2024-03-01T10:00:00Z");
        String[] cities = {"New York", "Baltimore", "Columbus", "Austin"};
        List<String> events = new ArrayList<>();
        Map<String, Long> expected = new TreeMap<>();
        for (int i = 0; i < 900; i++) {
            // Round robin over three partitions; inside each, neighbours swap places (out of order by 3 s, within
            // the 5 s grace), so every partition is a little disordered and the three advance at the same pace.
            int second = (i % 6 < 3) ? i + 3 : i - 3;
            Instant at = start.plusSeconds(second);
            String city = cities[(i * 7) % cities.length];
            events.add("{\"timestamp\":\"" + at + "\",\"properties\":{\"city\":\"" + city + "\"}}");
            Instant bucket = start.plusSeconds(Math.floorDiv(second, 60) * 60L);
            expected.merge("{\"bucket\":\"" + bucket + "\",\"city\":\"" + city + "\"", 1L, Long::sum);
        }
        publish(in, events, 3);
        List<String> want = new ArrayList<>();
        expected.forEach((key, n) -> want.add(key + ",\"n\":" + n + "}"));
        List<String> published = runUntil(config(in, 60, 5, "SELECT bucket, city, sum(n) AS n FROM closed GROUP BY ALL"), want.size());
        assertThat(published).containsExactlyInAnyOrderElementsOf(want);
    }

    @Test
    void onTimeRecordsAreNeverRefusedWhileBothCoresBurnAndTheConsumerIsThrottled() throws Exception {
        // Three partitions of on-time records (each a little disordered, within the grace), a one-second idle close,
        // and a pipeline slowed on purpose: small batches, each burning CPU in its handler, with two busy threads
        // taking both cores. The consumer drains one partition's fetched records before the next, so the others sit
        // unread for longer than the idle close: silence this process caused, which must not close their buckets.
        String in = topic(3);
        Instant start = Instant.parse("2024-03-01T10:00:00Z");
        String[] cities = {"New York", "Baltimore", "Columbus", "Austin"};
        List<String> events = new ArrayList<>();
        Map<String, Long> expected = new TreeMap<>();
        for (int i = 0; i < 300; i++) {
            int second = (i % 6 < 3) ? i + 3 : i - 3;
            Instant at = start.plusSeconds(second);
            String city = cities[(i * 7) % cities.length];
            events.add("{\"timestamp\":\"" + at + "\",\"properties\":{\"city\":\"" + city + "\"}}");
            Instant bucket = start.plusSeconds(Math.floorDiv(second, 60) * 60L);
            expected.merge("{\"bucket\":\"" + bucket + "\",\"city\":\"" + city + "\"", 1L, Long::sum);
        }
        publish(in, events, 3);
        List<String> want = new ArrayList<>();
        expected.forEach((key, n) -> want.add(key + ",\"n\":" + n + "}"));
        PipelineConfig config = new PipelineConfigReader(ConfigEnvironment.from(Map.of("SQLFLOW_KAFKA_BROKERS", kafka.bootstrapServers())))
                .read("w.yml", """
                tables:
                  sql:
                    - name: city_counts
                      sql: CREATE TABLE IF NOT EXISTS city_counts (bucket TIMESTAMPTZ, city VARCHAR, n BIGINT)
                      window:
                        time_column: bucket
                        size_seconds: 60
                        grace_seconds: 5
                        idle_close_seconds: 1
                        emit_sql: SELECT bucket, city, sum(n) AS n FROM closed GROUP BY ALL
                        sink:
                          type: console
                pipeline:
                  batch_size: 10
                  flush_interval_seconds: 1
                  source:
                    type: kafka
                    kafka:
                      brokers: [{{ SQLFLOW_KAFKA_BROKERS }}]
                      group_id: g-%s
                      auto_offset_reset: earliest
                      topics: [%s]
                      event_time: {path: timestamp, format: rfc3339}
                  handler:
                    type: handlers.InferredMemBatch
                    sql: |
                      CREATE OR REPLACE TEMP TABLE throttle AS SELECT sum(hash(range)) AS h FROM range(1000000);
                      INSERT INTO city_counts
                      SELECT time_bucket(INTERVAL '60 seconds', event_time), properties.city, count(*) FROM batch GROUP BY ALL
                  sink:
                    type: noop
                """.formatted(in, in)).orThrow();
        java.util.concurrent.atomic.AtomicBoolean burning = new java.util.concurrent.atomic.AtomicBoolean(true);
        List<Thread> burners = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            burners.add(Thread.ofPlatform().name("cpu-burner-" + i).daemon().start(() -> {
                long x = 0;
                while (burning.get()) {
                    x += System.nanoTime() % 7;
                }
                if (x == 42) {
                    System.out.print("");
                }
            }));
        }
        List<String> published;
        try {
            // runUntil requires window_late_rows_total{outcome="refused"} to be 0.
            published = runUntil(config, want.size());
        } finally {
            burning.set(false);
            for (Thread burner : burners) {
                burner.join(Duration.ofSeconds(10));
            }
        }
        assertThat(published).containsExactlyInAnyOrderElementsOf(want);
    }

    @Test
    void aWorkerWithoutTheWindowsRowsReplaysAndRebuildsEveryRetainedBucketWhole() throws Exception {
        String in = topic(1);
        Instant start = Instant.parse("2024-03-01T10:00:00Z");
        java.util.function.IntFunction<String> at = second -> start.plusSeconds(second).toString();
        // Minute buckets, 60 s of grace. Offsets 0-4: bucket 0 closes when 170 s arrives (W = 110 s); buckets 1 and 2
        // stay open, fed first by offsets 1 and 3, so Kafka's committed position stays at 1.
        publish(in, List.of(
                "{\"timestamp\":\"" + at.apply(10) + "\",\"properties\":{\"city\":\"a\"}}",
                "{\"timestamp\":\"" + at.apply(100) + "\",\"properties\":{\"city\":\"c\"}}",
                "{\"timestamp\":\"" + at.apply(50) + "\",\"properties\":{\"city\":\"a\"}}",
                "{\"timestamp\":\"" + at.apply(170) + "\",\"properties\":{\"city\":\"d\"}}",
                "{\"timestamp\":\"" + at.apply(175) + "\",\"properties\":{\"city\":\"d\"}}"), 1);
        ByteArrayOutputStream first = new ByteArrayOutputStream();
        runBounded(oneByOne(in), 5, first);
        assertThat(printed(first)).containsExactly("{\"bucket\":\"" + at.apply(0) + "\",\"city\":\"a\",\"n\":2}");

        // A new process without a state file: the window's rows are gone. It resumes at offset 1, drops the replayed
        // record of bucket 0 (the commit metadata says it was published), and rebuilds buckets 1 and 2 whole.
        publish(in, List.of("{\"timestamp\":\"" + at.apply(300) + "\",\"properties\":{\"city\":\"e\"}}"), 1);
        ByteArrayOutputStream second = new ByteArrayOutputStream();
        assertThat(runBounded(oneByOne(in), 5, second))
                .contains("window_late_rows_total{outcome=\"finalized\",pipeline=\"pipeline\",window=\"city_counts\"} 1.0");
        assertThat(printed(second)).containsExactly(
                "{\"bucket\":\"" + at.apply(60) + "\",\"city\":\"c\",\"n\":1}",
                "{\"bucket\":\"" + at.apply(120) + "\",\"city\":\"d\",\"n\":2}");
    }

    /**
     * Runs the pipeline until it consumed this many messages, or for at most a minute (then it is drained, so a
     * pipeline that never sees them fails the test instead of hanging it); returns its final metrics.
     */
    private static String runBounded(PipelineConfig config, long messages, ByteArrayOutputStream out) throws Exception {
        try (PipelineRunner runner = new PipelineRunner(config, ConfigEnvironment.from(Map.of()), new PipelineRunner.Options(messages, out))) {
            BoundedRun.run(runner, Duration.ofSeconds(60));
            return runner.scrape();
        }
    }

    /** Minute buckets with 60 s of grace, one record per batch, and no idle close within the test. */
    private static PipelineConfig oneByOne(String topic) {
        return config(topic, 60, 60, "SELECT bucket, city, sum(n) AS n FROM closed GROUP BY ALL ORDER BY bucket, city", 1, 600);
    }

    @Test
    void aRebalanceThatGivesThePartitionsStraightBackDoesNotCountTheirRecordsTwice() throws Exception {
        String in = topic(2);
        String other = topic(1);
        Instant start = Instant.parse("2024-03-01T10:00:00Z");
        List<String> minuteZero = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            minuteZero.add("{\"timestamp\":\"" + start.plusSeconds(i) + "\",\"properties\":{\"city\":\"a\"}}");
        }
        publish(in, minuteZero, 2);
        // No state file and no idle close: bucket 0 stays open, so Kafka's committed positions stay at its first offsets.
        PipelineConfig config = config(in, 60, 0, "SELECT bucket, city, sum(n) AS n FROM closed GROUP BY ALL", 1, 600);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (PipelineRunner runner = new PipelineRunner(config, ConfigEnvironment.from(Map.of()), new PipelineRunner.Options(0, out))) {
            Thread running = Thread.ofPlatform().name("pipeline").start(runner::run);
            awaitScrape(runner, "message_count_messages_total{pipeline=\"pipeline\"} 10.0");
            // A member of the same group reading another topic: an eager rebalance revokes the pipeline's partitions and
            // gives them straight back.
            Properties settings = new Properties();
            settings.put(org.apache.kafka.clients.consumer.ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
            settings.put(org.apache.kafka.clients.consumer.ConsumerConfig.GROUP_ID_CONFIG, "g-" + in);
            try (var member = new org.apache.kafka.clients.consumer.KafkaConsumer<byte[], byte[]>(settings,
                    new org.apache.kafka.common.serialization.ByteArrayDeserializer(), new org.apache.kafka.common.serialization.ByteArrayDeserializer())) {
                member.subscribe(List.of(other));
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (member.assignment().isEmpty() && System.nanoTime() < deadline) {
                    member.poll(Duration.ofMillis(100));
                }
                assertThat(member.assignment()).hasSize(1);
            }
            awaitSoleMemberHolding("g-" + in, in, 2);
            // W moves to 3 minutes: bucket 0 closes.
            publish(in, List.of("{\"timestamp\":\"" + start.plusSeconds(180) + "\",\"properties\":{\"city\":\"b\"}}",
                    "{\"timestamp\":\"" + start.plusSeconds(181) + "\",\"properties\":{\"city\":\"b\"}}"), 2);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (printed(out).isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            runner.requestStop();
            running.join(Duration.ofSeconds(60));
            assertThat(running.isAlive()).isFalse();
        }
        assertThat(printed(out)).containsExactly("{\"bucket\":\"" + start + "\",\"city\":\"a\",\"n\":10}");
    }

    /** Bucket 0 of minute buckets: ten records of city a on partition 0, ten of city b on partition 1. */
    private static Instant publishMinuteZero(String topic) {
        Instant start = Instant.parse("2024-03-01T10:00:00Z");
        List<String> minuteZero = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            // Keyed by partition, as a scaled-out window needs.
            minuteZero.add("{\"timestamp\":\"" + start.plusSeconds(i) + "\",\"properties\":{\"city\":\"" + (i % 2 == 0 ? "a" : "b") + "\"}}");
        }
        publish(topic, minuteZero, 2);
        return start;
    }

    /**
     * Worker A runs until its metrics show {@code aStarted}; then B joins the group and takes one partition. Once B has
     * read its partition's 10 records and A shows {@code aRebuilt}, minute 3 arrives on both partitions, each worker
     * publishes bucket 0, and both are drained. Returns what both published.
     */
    private static List<String> twoWorkers(String topic, Instant start, PipelineConfig configA, PipelineConfig configB, String aStarted,
            String aRebuilt) throws Exception {
        ByteArrayOutputStream outA = new ByteArrayOutputStream();
        ByteArrayOutputStream outB = new ByteArrayOutputStream();
        try (PipelineRunner a = new PipelineRunner(configA, ConfigEnvironment.from(Map.of()), new PipelineRunner.Options(0, outA));
                PipelineRunner b = new PipelineRunner(configB, ConfigEnvironment.from(Map.of()), new PipelineRunner.Options(0, outB))) {
            Thread runningA = Thread.ofPlatform().name("worker-a").start(a::run);
            awaitScrape(a, aStarted);
            Thread runningB = Thread.ofPlatform().name("worker-b").start(b::run);
            awaitScrape(b, "message_count_messages_total{pipeline=\"pipeline\"} 10.0");
            awaitScrape(a, aRebuilt);
            publish(topic, List.of("{\"timestamp\":\"" + start.plusSeconds(180) + "\",\"properties\":{\"city\":\"a\"}}",
                    "{\"timestamp\":\"" + start.plusSeconds(181) + "\",\"properties\":{\"city\":\"b\"}}"), 2);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while ((printed(outA).isEmpty() || printed(outB).isEmpty()) && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            a.requestStop();
            b.requestStop();
            runningA.join(Duration.ofSeconds(60));
            runningB.join(Duration.ofSeconds(60));
            assertThat(runningA.isAlive()).isFalse();
            assertThat(runningB.isAlive()).isFalse();
        }
        List<String> published = new ArrayList<>(printed(outA));
        published.addAll(printed(outB));
        return published;
    }

    @Test
    void aPartitionThatMovesToAnotherWorkerIsPublishedByThatWorkerAloneAndTheRestIsRebuilt() throws Exception {
        String in = topic(2);
        Instant start = publishMinuteZero(in);
        // No grace, no idle close within the test: bucket 0 stays open until minute 3 arrives on both partitions.
        PipelineConfig config = config(in, 60, 0, "SELECT bucket, city, sum(n) AS n FROM closed GROUP BY ALL", 50, 600);
        // A reads all 20; when B joins, one partition moves to it with A's share of bucket 0 from it. B reads it from the
        // position A committed (bucket 0's first offset); A rebuilds bucket 0 from the partition it keeps (10 more).
        List<String> published = twoWorkers(in, start, config, config, "message_count_messages_total{pipeline=\"pipeline\"} 20.0",
                "message_count_messages_total{pipeline=\"pipeline\"} 30.0");
        assertThat(published).as("each city's bucket 0 published once, whole, by the worker that holds its partition")
                .containsExactlyInAnyOrder(
                        "{\"bucket\":\"" + start + "\",\"city\":\"a\",\"n\":10}",
                        "{\"bucket\":\"" + start + "\",\"city\":\"b\",\"n\":10}");
    }

    @Test
    void aWorkerRestartedOnItsStateFileHandsOverWhatItsStateHoldsForAPartitionThatMovesBeforeItReadsIt(
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        String in = topic(2);
        Instant start = publishMinuteZero(in);
        String emit = "SELECT bucket, city, sum(n) AS n FROM closed GROUP BY ALL";
        PipelineConfig configA = config(in, 60, 0, emit, 50, 600, dir.resolve("a.duckdb"));
        PipelineConfig configB = config(in, 60, 0, emit, 50, 600, dir.resolve("b.duckdb"));
        // A reads all of bucket 0 from both partitions into its state file, and stops.
        ByteArrayOutputStream first = new ByteArrayOutputStream();
        runBounded(configA, 20, first);
        assertThat(printed(first)).isEmpty();
        // A starts again on its file and reads nothing new before B joins and takes one partition: A's file holds that
        // partition's share of bucket 0, which A gives up without having read the partition in this run, and it
        // rebuilds the other's share (10 records read again).
        List<String> published = twoWorkers(in, start, configA, configB, "window_watermark_seconds{pipeline=\"pipeline\",window=\"city_counts\"}",
                "message_count_messages_total{pipeline=\"pipeline\"} 10.0");
        assertThat(published).as("each city's bucket 0 published once, whole")
                .containsExactlyInAnyOrder(
                        "{\"bucket\":\"" + start + "\",\"city\":\"a\",\"n\":10}",
                        "{\"bucket\":\"" + start + "\",\"city\":\"b\",\"n\":10}");
    }

    /** Waits until the group is stable with one member (the pipeline) holding this many partitions of the topic. */
    private static void awaitSoleMemberHolding(String group, String topic, int partitions) throws Exception {
        java.util.Properties properties = new java.util.Properties();
        properties.put(org.apache.kafka.clients.admin.AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        try (org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(properties)) {
            dev.mallard.testkit.Await.until("group " + group + " stable with the pipeline alone holding " + partitions + " partitions", () -> {
                var description = admin.describeConsumerGroups(List.of(group)).describedGroups().get(group).get();
                return description.groupState() == org.apache.kafka.common.GroupState.STABLE && description.members().size() == 1
                        && description.members().iterator().next().assignment().topicPartitions().stream()
                                .filter(partition -> partition.topic().equals(topic)).count() == partitions;
            });
        }
    }

    private static void awaitScrape(PipelineRunner runner, String line) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!runner.scrape().contains(line) && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        assertThat(runner.scrape()).contains(line);
    }
}
