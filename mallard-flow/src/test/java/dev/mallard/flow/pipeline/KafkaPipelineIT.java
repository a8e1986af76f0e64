// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.flow.config.PipelineConfig;
import dev.mallard.flow.config.PipelineConfigReader;
import dev.mallard.testkit.EmbeddedKafka;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** mallard run's pipeline loop against a real broker started in this JVM. */
class KafkaPipelineIT {
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

    private static String topic(int partitions) {
        String name = "in-" + UUID.randomUUID();
        kafka.createTopic(name, partitions);
        return name;
    }

    private static void publish(String topic, List<String> values) {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties, new StringSerializer(), new StringSerializer())) {
            for (String value : values) {
                producer.send(new ProducerRecord<>(topic, value));
            }
            producer.flush();
        }
    }

    private static List<String> cityEvents(int count, int offset) {
        List<String> events = new ArrayList<>();
        for (int i = offset; i < offset + count; i++) {
            events.add("{\"event\":\"search\",\"properties\":{\"city\":\"" + (i % 3 == 0 ? "New York" : i % 3 == 1 ? "Baltimore" : "Columbus")
                    + "\"},\"n\":" + i + "}");
        }
        return events;
    }

    private PipelineConfig config(String yaml) {
        return new PipelineConfigReader(ConfigEnvironment.from(Map.of("SQLFLOW_KAFKA_BROKERS", kafka.bootstrapServers())))
                .read("p.yml", yaml).orThrow();
    }

    private static String source(String topic, String group) {
        return """
                  source:
                    type: kafka
                    kafka:
                      brokers: [{{ SQLFLOW_KAFKA_BROKERS }}]
                      group_id: %s
                      auto_offset_reset: earliest
                      topics: [%s]
                """.formatted(group, topic);
    }

    private static PipelineRunner.Outcome run(PipelineConfig config, long maxMessages, ByteArrayOutputStream out) {
        try (PipelineRunner runner = new PipelineRunner(config, ConfigEnvironment.from(Map.of()), new PipelineRunner.Options(maxMessages, out))) {
            return BoundedRun.run(runner);
        }
    }

    private static List<JsonNode> consumeAll(String topic, int expected) throws Exception {
        Properties properties = new Properties();
        properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        properties.put(ConsumerConfig.GROUP_ID_CONFIG, "reader-" + UUID.randomUUID());
        properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<JsonNode> values = new ArrayList<>();
        ObjectMapper mapper = new ObjectMapper();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(properties, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (values.size() < expected && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    values.add(mapper.readTree(record.value()));
                }
            }
            // A little longer, so that more than expected would be seen.
            for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(500))) {
                values.add(mapper.readTree(record.value()));
            }
        }
        return values;
    }

    private static long committed(String group, String topic, int partitions) throws Exception {
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        try (Admin admin = Admin.create(properties)) {
            Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            long total = 0;
            for (int p = 0; p < partitions; p++) {
                OffsetAndMetadata offset = offsets.get(new TopicPartition(topic, p));
                total += offset == null ? 0 : offset.offset();
            }
            return total;
        }
    }

    @Test
    void countsByCityFromAMultiPartitionTopicIntoAKafkaSinkAndCommitsWhatItProcessed() throws Exception {
        String in = topic(3);
        String out = "out-" + UUID.randomUUID();
        kafka.createTopic(out, 1);
        publish(in, cityEvents(9_000, 0));
        PipelineConfig config = config("""
                commands:
                  - name: table
                    sql: CREATE TABLE events (event VARCHAR, properties STRUCT(city VARCHAR), n BIGINT)
                pipeline:
                  batch_size: 1000
                """ + source(in, "g-count") + """
                  handler:
                    type: handlers.StructuredBatch
                    table: events
                    sql: SELECT properties.city AS city, count(*) AS n FROM events GROUP BY 1
                  sink:
                    type: kafka
                    kafka:
                      brokers: [{{ SQLFLOW_KAFKA_BROKERS }}]
                      topic: %s
                      key: city
                """.formatted(out));
        PipelineRunner.Outcome outcome = run(config, 9_000, new ByteArrayOutputStream());
        assertThat(outcome.messagesConsumed()).isEqualTo(9_000);
        assertThat(outcome.numErrors()).isZero();
        Map<String, Long> totals = new HashMap<>();
        for (JsonNode row : consumeAll(out, 27)) {
            totals.merge(row.path("city").asText(), row.path("n").asLong(), Long::sum);
        }
        assertThat(totals).containsExactlyInAnyOrderEntriesOf(Map.of("New York", 3_000L, "Baltimore", 3_000L, "Columbus", 3_000L));
        assertThat(committed("g-count", in, 3)).isEqualTo(9_000);
    }

    @Test
    void stateIsExactlyOnceAcrossRestartsAndResumesFromTheStateFilesOffsets() throws Exception {
        String in = topic(2);
        Path state = dir.resolve("state").resolve("totals.duckdb");
        String yaml = """
                tables:
                  sql:
                    - name: totals
                      sql: CREATE TABLE IF NOT EXISTS totals (city VARCHAR, n BIGINT)
                pipeline:
                  batch_size: 700
                  state:
                    path: %s
                """.formatted(state) + source(in, "g-state") + """
                  handler:
                    type: handlers.InferredMemBatch
                    sql: |
                      MERGE INTO totals t USING (SELECT properties.city AS city, count(*) AS n FROM batch GROUP BY 1) b ON t.city = b.city
                      WHEN MATCHED THEN UPDATE SET n = t.n + b.n WHEN NOT MATCHED THEN INSERT VALUES (b.city, b.n)
                  sink:
                    type: noop
                """;
        publish(in, cityEvents(3_000, 0));
        assertThat(run(config(yaml), 2_000, new ByteArrayOutputStream()).messagesConsumed()).isEqualTo(2_000);
        publish(in, cityEvents(3_000, 3_000));
        assertThat(run(config(yaml), 4_000, new ByteArrayOutputStream()).messagesConsumed()).isEqualTo(4_000);
        assertThat(row(state, "SELECT (SELECT sum(n) FROM totals), (SELECT sum(next_offset) FROM sqlflow_offsets)"))
                .containsExactly(6_000L, 6_000L);
    }

    @Test
    void sqlflowsIdempotentSinkPatternRunsWithDurableStateItsTransactionInsideTheBatchs() throws Exception {
        // kafka.motherduck.idempotent.yml's handler, on the state file instead of MotherDuck: BEGIN ... COMMIT of its own.
        String in = topic(2);
        Path state = dir.resolve("idempotent").resolve("events.duckdb");
        String yaml = """
                commands:
                  - name: tables
                    sql: |
                      CREATE TABLE IF NOT EXISTS events (city VARCHAR, n BIGINT);
                      CREATE TABLE IF NOT EXISTS events_metadata (partition INTEGER, "offset" BIGINT, topic VARCHAR,
                        PRIMARY KEY (topic, partition));
                pipeline:
                  batch_size: 500
                  state:
                    path: %s
                """.formatted(state) + source(in, "g-idempotent") + """
                  handler:
                    type: handlers.InferredMemBatch
                    sql: |
                      BEGIN TRANSACTION;
                      CREATE OR REPLACE TEMPORARY TABLE filtered_batch AS
                      SELECT b.* FROM batch b LEFT JOIN events_metadata em
                        ON b.kafka_topic = em.topic AND b.kafka_partition = em.partition
                      WHERE em."offset" IS NULL OR b.kafka_offset > em."offset";
                      INSERT INTO events SELECT properties.city, n FROM filtered_batch;
                      INSERT INTO events_metadata (partition, "offset", topic)
                      SELECT kafka_partition, max(kafka_offset), kafka_topic FROM filtered_batch GROUP BY kafka_partition, kafka_topic
                      ON CONFLICT (topic, partition) DO UPDATE SET "offset" = EXCLUDED."offset";
                      COMMIT;
                  sink:
                    type: noop
                """;
        publish(in, cityEvents(2_000, 0));
        PipelineRunner.Outcome outcome = run(config(yaml), 2_000, new ByteArrayOutputStream());
        assertThat(outcome.messagesConsumed()).isEqualTo(2_000);
        assertThat(outcome.numErrors()).isZero();
        assertThat(row(state, "SELECT (SELECT count(*) FROM events), (SELECT count(DISTINCT n) FROM events), "
                + "(SELECT sum(\"offset\" + 1) FROM events_metadata), (SELECT sum(next_offset) FROM sqlflow_offsets)"))
                .containsExactly(2_000L, 2_000L, 2_000L, 2_000L);
    }

    @Test
    void aStateFileFromAnotherPipelineIsRefusedNamingBoth() throws Exception {
        String first = topic(1);
        String second = topic(1);
        Path state = dir.resolve("shared").resolve("state.duckdb");
        String yaml = """
                pipeline:
                  name: %s
                  batch_size: 100
                  state:
                    path: %s
                """;
        String tail = """
                  handler:
                    type: handlers.InferredMemBatch
                    sql: SELECT count(*) AS n FROM batch
                  sink:
                    type: noop
                """;
        publish(first, cityEvents(100, 0));
        publish(second, cityEvents(100, 0));
        assertThat(run(config(yaml.formatted("a", state) + source(first, "g-a") + tail), 100, new ByteArrayOutputStream())
                .messagesConsumed()).isEqualTo(100);
        // The same pipeline again is fine.
        publish(first, cityEvents(100, 100));
        assertThat(run(config(yaml.formatted("a", state) + source(first, "g-a") + tail), 100, new ByteArrayOutputStream())
                .messagesConsumed()).isEqualTo(100);
        assertThatThrownBy(() -> run(config(yaml.formatted("b", state) + source(second, "g-b") + tail), 100, new ByteArrayOutputStream()))
                .isInstanceOfSatisfying(MallardException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_STATE_MISMATCH))
                .hasMessageContaining(state.toString())
                .hasMessageContaining("name=a").hasMessageContaining(first).hasMessageContaining("group=g-a")
                .hasMessageContaining("name=b").hasMessageContaining(second).hasMessageContaining("group=g-b");
        assertThat(row(state, "SELECT sum(next_offset) FROM sqlflow_offsets")).containsExactly(200L);
    }

    @Test
    void aRunThatFailsReportsTheMessagesItReadAndTheErrorThatStoppedIt() throws Exception {
        String in = topic(1);
        List<String> values = new ArrayList<>(cityEvents(25, 0));
        values.add("not json");
        publish(in, values);
        PipelineConfig config = config("""
                pipeline:
                  batch_size: 10
                  flush_interval_seconds: 1
                """ + source(in, "g-fails-" + in) + """
                  handler:
                    type: handlers.InferredMemBatch
                    sql: SELECT count(*) AS n FROM batch
                  sink:
                    type: noop
                """);
        try (PipelineRunner runner = new PipelineRunner(config, ConfigEnvironment.from(Map.of()), new PipelineRunner.Options(0, new ByteArrayOutputStream()))) {
            assertThatThrownBy(() -> BoundedRun.run(runner))
                    .isInstanceOfSatisfying(MallardException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_HANDLER_PARSE_FAILED));
            // What --stats-json writes: every message read, the failed batch's included, and the error that stopped the run.
            assertThat(runner.outcome()).isEqualTo(new PipelineRunner.Outcome(26, 1));
        }
    }

    private static long lagSeries(PipelineRunner runner) {
        return runner.scrape().lines().filter(line -> line.startsWith("consumer_lag_messages{")).count();
    }

    private static void await(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!condition.getAsBoolean() && System.nanoTime() < deadline) {
            Thread.sleep(100); // polling a condition, bounded by the deadline
        }
        assertThat(condition.getAsBoolean()).as(what).isTrue();
    }

    @Test
    void theLagGaugeOfAPartitionARebalanceTakesAwayIsDropped() throws Exception {
        String in = topic(2);
        publish(in, cityEvents(200, 0));
        PipelineConfig config = config("""
                pipeline:
                  batch_size: 10
                  flush_interval_seconds: 1
                """ + source(in, "g-lag-" + in) + """
                  handler:
                    type: handlers.InferredMemBatch
                    sql: SELECT count(*) AS n FROM batch
                  sink:
                    type: noop
                """);
        try (PipelineRunner a = new PipelineRunner(config, ConfigEnvironment.from(Map.of()), new PipelineRunner.Options(0, new ByteArrayOutputStream()));
                PipelineRunner b = new PipelineRunner(config, ConfigEnvironment.from(Map.of()), new PipelineRunner.Options(0, new ByteArrayOutputStream()))) {
            Thread runningA = Thread.ofPlatform().name("worker-a").start(a::run);
            await(() -> lagSeries(a) == 2, "worker A reports the lag of both partitions");
            Thread runningB = Thread.ofPlatform().name("worker-b").start(b::run);
            await(() -> {
                publish(in, cityEvents(20, 0));
                return b.scrape().contains("consumer_lag_messages{") && lagSeries(a) == 1;
            }, "once B holds a partition, A reports only the one it kept");
            assertThat(lagSeries(b)).isEqualTo(1);
            a.requestStop();
            b.requestStop();
            runningA.join(Duration.ofSeconds(60));
            runningB.join(Duration.ofSeconds(60));
            assertThat(runningA.isAlive() || runningB.isAlive()).isFalse();
        }
    }

    private static JsonNode stats(PipelineRunner runner) throws Exception {
        java.net.http.HttpResponse<String> response = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
                java.net.URI.create("http://127.0.0.1:" + runner.metricsPort().orElseThrow() + "/stats")).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return new ObjectMapper().readTree(response.body());
    }

    @Test
    void statsAnswersInSqlflowsShapeTheStateAndTheProgressOfTheRun() throws Exception {
        String in = topic(2);
        publish(in, cityEvents(300, 0));
        Path state = dir.resolve("stats").resolve("stats.duckdb");
        PipelineConfig stateful = config("""
                tables:
                  sql:
                    - name: totals
                      sql: CREATE TABLE IF NOT EXISTS totals (city VARCHAR, n BIGINT)
                pipeline:
                  batch_size: 100
                  flush_interval_seconds: 1
                  state:
                    path: %s
                """.formatted(state) + source(in, "g-stats-" + in) + """
                  handler:
                    type: handlers.InferredMemBatch
                    sql: INSERT INTO totals SELECT properties.city, count(*) FROM batch GROUP BY 1
                  sink:
                    type: noop
                """);
        try (PipelineRunner runner = new PipelineRunner(stateful, ConfigEnvironment.from(Map.of()),
                new PipelineRunner.Options(0, new ByteArrayOutputStream(), java.util.Optional.of(0)))) {
            Thread running = Thread.ofPlatform().name("stats-pipeline").start(runner::run);
            await(() -> runner.progress().messages() == 300, "the pipeline read every message");
            JsonNode body = stats(runner);
            JsonNode stateNode = body.get("state");
            assertThat(stateNode.get("path").asText()).isEqualTo(state.toString());
            assertThat(stateNode.get("size_bytes").asLong()).isPositive();
            assertThat(stateNode.get("tables").findValuesAsText("name")).contains("totals").doesNotContain("sqlflow_offsets", "sqlflow_pipeline");
            long reportedRows = 0;
            for (JsonNode table : stateNode.get("tables")) {
                if (table.get("name").asText().equals("totals")) {
                    reportedRows = table.get("rows").asLong();
                }
            }
            JsonNode offsets = stateNode.get("offsets");
            assertThat(offsets).isNotEmpty();
            long next = 0;
            for (JsonNode offset : offsets) {
                assertThat(offset.get("topic").asText()).isEqualTo(in);
                assertThat(offset.get("leader_epoch").asInt()).isEqualTo(-1);
                next += offset.get("offset").asLong();
            }
            assertThat(next).isEqualTo(300);
            JsonNode progress = body.get("progress");
            assertThat(progress.get("messages").asLong()).isEqualTo(300);
            assertThat(progress.get("errors").asLong()).isZero();
            assertThat(java.time.Instant.parse(progress.get("last_arrival").asText())).isAfter(java.time.Instant.EPOCH);
            assertThat(java.time.Instant.parse(progress.get("last_commit").asText())).isAfter(java.time.Instant.EPOCH);
            assertThat(progress.get("last_error").asText()).isEqualTo("0001-01-01T00:00:00Z");
            assertThat(progress.get("arrival_age_seconds").asDouble()).isNotNegative();
            assertThat(progress.get("commit_age_seconds").asDouble()).isNotNegative();
            runner.requestStop();
            running.join(Duration.ofSeconds(60));
            assertThat(running.isAlive()).isFalse();
            // Every message was committed before the request, so the exact count is the file's.
            assertThat(row(state, "SELECT count(*) FROM totals")).containsExactly(reportedRows);
        }
        PipelineConfig stateless = config("""
                pipeline:
                  batch_size: 100
                  flush_interval_seconds: 1
                """ + source(in, "g-stats-stateless-" + in) + """
                  handler:
                    type: handlers.InferredMemBatch
                    sql: SELECT count(*) AS n FROM batch
                  sink:
                    type: noop
                """);
        try (PipelineRunner runner = new PipelineRunner(stateless, ConfigEnvironment.from(Map.of()),
                new PipelineRunner.Options(0, new ByteArrayOutputStream(), java.util.Optional.of(0)))) {
            Thread running = Thread.ofPlatform().name("stats-stateless").start(runner::run);
            await(() -> runner.metricsPort().isPresent(), "the endpoints are up");
            JsonNode before = stats(runner);
            // Absent state and empty state are different facts: no state path is null.
            assertThat(before.get("state").isNull()).isTrue();
            assertThat(before.get("progress").has("messages")).isTrue();
            await(() -> runner.progress().messages() == 300, "the pipeline read every message");
            assertThat(stats(runner).get("progress").get("messages").asLong()).isEqualTo(300);
            runner.requestStop();
            running.join(Duration.ofSeconds(60));
            assertThat(running.isAlive()).isFalse();
        }
    }

    @Test
    void aMaterializedViewCreatedByTheCommandsMovesWithEveryBatchAndAcrossARestart() throws Exception {
        String in = topic(2);
        Path state = dir.resolve("views").resolve("events.duckdb");
        String yaml = """
                commands:
                  - name: events
                    sql: |
                      CREATE TABLE IF NOT EXISTS events (city VARCHAR, n BIGINT);
                      CREATE MATERIALIZED VIEW IF NOT EXISTS city_totals AS
                        SELECT city, count(*) AS events, sum(n) AS total FROM events GROUP BY city
                pipeline:
                  batch_size: 700
                  state:
                    path: %s
                """.formatted(state) + source(in, "g-views") + """
                  handler:
                    type: handlers.InferredMemBatch
                    sql: INSERT INTO events SELECT properties.city, n FROM batch
                  sink:
                    type: noop
                """;
        publish(in, cityEvents(3_000, 0));
        assertThat(run(config(yaml), 2_000, new ByteArrayOutputStream()).messagesConsumed()).isEqualTo(2_000);
        assertThat(viewTotals(state)).containsExactly(2_000L, 0L, 0L);
        publish(in, cityEvents(3_000, 3_000));
        assertThat(run(config(yaml), 4_000, new ByteArrayOutputStream()).messagesConsumed()).isEqualTo(4_000);
        // Every event once in the view, and the view equal to its query in both directions.
        assertThat(viewTotals(state)).containsExactly(6_000L, 0L, 0L);
    }

    /** The view's event count, then the rows by which the view and its query differ in each direction. */
    private static List<Long> viewTotals(Path state) throws Exception {
        String query = "SELECT city, count(*) AS events, sum(n) AS total FROM events GROUP BY city";
        return row(state, "SELECT (SELECT sum(events) FROM city_totals), "
                + "(SELECT count(*) FROM (SELECT * FROM city_totals EXCEPT ALL " + query + ")), "
                + "(SELECT count(*) FROM (" + query + " EXCEPT ALL SELECT * FROM city_totals))");
    }

    /** The one row of a query of numbers on a state file. */
    private static List<Long> row(Path state, String sql) throws Exception {
        try (Connection connection = DriverManager.getConnection("jdbc:duckdb:" + state);
                ResultSet rows = connection.createStatement().executeQuery(sql)) {
            rows.next();
            List<Long> values = new ArrayList<>();
            for (int i = 1; i <= rows.getMetaData().getColumnCount(); i++) {
                values.add(rows.getLong(i));
            }
            return values;
        }
    }

    @Test
    void aPartitionTheStateFileHasNoOffsetForStartsAtItsBeginningNotAtTheGroupsCommittedOffset() throws Exception {
        String in = topic(2);
        Path state = dir.resolve("restored").resolve("totals.duckdb");
        String yaml = """
                tables:
                  sql:
                    - name: totals
                      sql: CREATE TABLE IF NOT EXISTS totals (n BIGINT)
                pipeline:
                  batch_size: 100
                  state:
                    path: %s
                """.formatted(state) + source(in, "g-restored") + """
                  handler:
                    type: handlers.InferredMemBatch
                    sql: INSERT INTO totals SELECT count(*) FROM batch
                  sink:
                    type: noop
                """;
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < 50; i++) {
                producer.send(new ProducerRecord<>(in, 0, null, "{\"n\":" + i + "}"));
            }
            producer.flush();
            assertThat(run(config(yaml), 50, new ByteArrayOutputStream()).messagesConsumed()).isEqualTo(50);
            // A backup of the state taken now knows partition 0 only.
            java.nio.file.Files.copy(state, dir.resolve("backup.duckdb"));
            for (int i = 0; i < 30; i++) {
                producer.send(new ProducerRecord<>(in, 1, null, "{\"n\":" + i + "}"));
            }
            producer.flush();
        }
        assertThat(run(config(yaml), 30, new ByteArrayOutputStream()).messagesConsumed()).isEqualTo(30);
        assertThat(committed("g-restored", in, 2)).as("the group committed partition 1 to its end").isEqualTo(80);
        // Restoring the backup: the state has processed nothing of partition 1, so it is read again from its start.
        java.nio.file.Files.copy(dir.resolve("backup.duckdb"), state, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        java.nio.file.Files.deleteIfExists(dir.resolve("restored").resolve("totals.duckdb.wal"));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (PipelineRunner runner = new PipelineRunner(config(yaml), ConfigEnvironment.from(Map.of()), new PipelineRunner.Options(30, out))) {
            BoundedRun.run(runner, Duration.ofSeconds(60));
        }
        assertThat(row(state, "SELECT (SELECT sum(n) FROM totals), (SELECT sum(next_offset) FROM sqlflow_offsets)"))
                .containsExactly(80L, 80L);
    }

    @Test
    void aMalformedMessageUnderRaiseStopsNamingItsPosition() {
        String in = topic(1);
        publish(in, List.of("{\"city\":\"a\"}", "not json", "{\"city\":\"b\"}"));
        PipelineConfig config = config("pipeline:\n  batch_size: 10\n  flush_interval_seconds: 2\n" + source(in, "g-raise")
                + "  handler: {type: handlers.InferredMemBatch, sql: SELECT * FROM batch}\n  sink: {type: noop}\n");
        assertThatThrownBy(() -> run(config, 3, new ByteArrayOutputStream()))
                .isInstanceOf(MallardException.class)
                .hasMessageContaining(in + "[0]@1")
                .satisfies(e -> assertThat(((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_HANDLER_PARSE_FAILED));
    }

    @Test
    void underIgnoreBadMessagesAreCountedAndTheRestDelivered() {
        String in = topic(1);
        publish(in, List.of("{\"city\":\"a\",\"n\":1}", "not json", "{\"city\":\"b\",\"n\":\"many\"}", "{\"city\":\"c\",\"n\":3}"));
        PipelineConfig config = config("""
                commands:
                  - name: t
                    sql: CREATE TABLE t (city VARCHAR, n BIGINT)
                pipeline:
                  batch_size: 10
                  flush_interval_seconds: 2
                  on_error: {policy: ignore}
                """ + source(in, "g-ignore") + """
                  handler: {type: handlers.StructuredBatch, table: t, sql: SELECT city FROM t ORDER BY city}
                  sink: {type: console}
                """);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PipelineRunner.Outcome outcome = run(config, 4, out);
        assertThat(outcome.numErrors()).isEqualTo(2);
        assertThat(out.toString(StandardCharsets.UTF_8).lines()).containsExactly("{\"city\":\"a\"}", "{\"city\":\"c\"}");
    }

    @Test
    void underDlqBadMessagesReachTheDeadLetterTopicWithTheirError() throws Exception {
        String in = topic(1);
        String dlq = "dlq-" + UUID.randomUUID();
        kafka.createTopic(dlq, 1);
        publish(in, List.of("{\"city\":\"a\"}", "{broken", "{\"city\":\"c\"}"));
        PipelineConfig config = config("""
                pipeline:
                  batch_size: 10
                  flush_interval_seconds: 2
                  on_error:
                    policy: DLQ
                    dlq:
                      type: kafka
                      kafka: {brokers: [{{ SQLFLOW_KAFKA_BROKERS }}], topic: %s}
                """.formatted(dlq) + source(in, "g-dlq") + """
                  handler: {type: handlers.InferredMemBatch, sql: SELECT city FROM batch}
                  sink: {type: noop}
                """);
        try (PipelineRunner runner = new PipelineRunner(config, ConfigEnvironment.from(Map.of()), new PipelineRunner.Options(3, new ByteArrayOutputStream()))) {
            assertThat(BoundedRun.run(runner).numErrors()).isEqualTo(1);
            // The dead letter counted under its own role, apart from the two rows the pipeline's sink took.
            assertThat(runner.scrape()).contains("sink_rows_accepted_total{pipeline=\"pipeline\",role=\"dlq\",sink=\"kafka\"} 1.0")
                    .contains("sink_rows_written_total{pipeline=\"pipeline\",role=\"dlq\",sink=\"kafka\"} 1.0")
                    .contains("sink_rows_written_total{pipeline=\"pipeline\",role=\"pipeline\",sink=\"noop\"} 2.0");
        }
        List<JsonNode> letters = consumeAll(dlq, 1);
        assertThat(letters).singleElement().satisfies(letter -> {
            assertThat(letter.path("message").asText()).isEqualTo("{broken");
            assertThat(letter.path("phase").asText()).isEqualTo("handler.write");
            assertThat(letter.path("error").asText()).contains(in + "[0]@1");
            assertThat(letter.path("timestamp").asText()).endsWith("Z");
        });
    }

    @Test
    void aSinkThatFailsCommitsNoOffsetPastWhatItDidNotFlush() throws Exception {
        String in = topic(1);
        publish(in, cityEvents(500, 0));
        PipelineConfig config = config("pipeline:\n  batch_size: 100\n" + source(in, "g-fail")
                + "  handler: {type: handlers.InferredMemBatch, sql: SELECT count(*) AS n FROM batch}\n"
                + "  sink:\n    type: sqlcommand\n    sqlcommand:\n      sql: COPY sqlflow_sink_batch TO '/nonexistent/dir/out.csv'\n");
        assertThatThrownBy(() -> run(config, 500, new ByteArrayOutputStream()))
                .isInstanceOf(MallardException.class)
                .satisfies(e -> assertThat(((MallardException) e).errorCode()).isEqualTo(ErrorCode.SYSTEM_SINK_WRITE_FAILED));
        assertThat(committed("g-fail", in, 1)).isZero();
    }

    @Test
    void aPartialFinalBatchRunsWhenTheLimitIsReached() {
        String in = topic(1);
        publish(in, cityEvents(250, 0));
        PipelineConfig config = config("pipeline:\n  batch_size: 100\n" + source(in, "g-partial")
                + "  handler: {type: handlers.InferredMemBatch, sql: SELECT count(*) AS n FROM batch}\n  sink: {type: console}\n");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (PipelineRunner runner = new PipelineRunner(config, ConfigEnvironment.from(Map.of()), new PipelineRunner.Options(250, out))) {
        assertThat(BoundedRun.run(runner).messagesConsumed()).isEqualTo(250);
        assertThat(out.toString(StandardCharsets.UTF_8).lines()).containsExactly("{\"n\":100}", "{\"n\":100}", "{\"n\":50}");
        assertThat(runner.scrape()).contains("message_count_messages_total{pipeline=\"pipeline\"} 250.0")
                .contains("sink_rows_written_total{pipeline=\"pipeline\",role=\"pipeline\",sink=\"console\"} 3.0")
                .contains("phase_duration_seconds_count{phase=\"handler.invoke\",pipeline=\"pipeline\"} 3");
        }
    }

    @Test
    void handlerSqlSeesEachRecordsTopicPartitionOffsetAndEventTime() {
        String in = topic(3);
        List<String> events = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            events.add("{\"n\":" + i + ",\"at\":" + (1_449_947_461_000L + i * 1000L) + "}");
        }
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < events.size(); i++) {
                producer.send(new ProducerRecord<>(in, i % 3, null, events.get(i)));
            }
            producer.flush();
        }
        PipelineConfig config = config("pipeline:\n  batch_size: 30\n" + source(in, "g-records").stripTrailing()
                + "\n      event_time: {path: at, format: unix_millis}\n"
                + "  handler:\n    type: handlers.InferredMemBatch\n    sql: >-\n"
                + "      SELECT count(DISTINCT kafka_partition) AS partitions, count(DISTINCT (kafka_partition, kafka_offset)) AS positions,\n"
                + "      bool_and(kafka_topic = '" + in + "') AS one_topic, sum(kafka_offset) AS offsets,\n"
                + "      min(event_time) AS first, max(event_time) AS last FROM batch\n"
                + "  sink: {type: console}\n");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertThat(run(config, 30, out).messagesConsumed()).isEqualTo(30);
        // Ten records in each of three partitions: offsets 0..9 in each, so they sum to 3 * 45.
        assertThat(out.toString(StandardCharsets.UTF_8).lines()).containsExactly(
                "{\"partitions\":3,\"positions\":30,\"one_topic\":true,\"offsets\":135,"
                        + "\"first\":\"2015-12-12T19:11:01Z\",\"last\":\"2015-12-12T19:11:30Z\"}");
    }

    @Test
    void aRebalanceDuringAGatherLeavesNoMessageTwiceInTheBatch() throws Exception {
        String in = topic(2);
        Properties producerSettings = new Properties();
        producerSettings.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerSettings, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < 100; i++) {
                producer.send(new ProducerRecord<>(in, i % 2, null, "{\"n\":" + i + "}"));
            }
            producer.flush();
        }
        String group = "g-rebalance";
        // A batch far larger than the topic and a long flush interval: the pipeline is still gathering when a
        // second member joins (it loses its partitions, then gets one back) and leaves (it gets both back), and
        // each time it reads again from the group's committed offsets, of which there are none yet.
        PipelineConfig config = config("pipeline:\n  batch_size: 1000\n  flush_interval_seconds: 120\n" + source(in, group)
                + "  handler:\n    type: handlers.InferredMemBatch\n"
                + "    sql: SELECT count(*) AS n, count(DISTINCT (kafka_partition, kafka_offset)) AS positions FROM batch\n"
                + "  sink: {type: console}\n");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (PipelineRunner runner = new PipelineRunner(config, ConfigEnvironment.from(Map.of()), new PipelineRunner.Options(0, out))) {
            Thread running = Thread.ofPlatform().name("pipeline").start(runner::run);
            awaitMembers(group, 1);
            // The pipeline holds all 100 records in its batch before the second member takes a partition away.
            awaitHandedOver(group, in, 2, 100);
            Properties settings = new Properties();
            settings.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
            settings.put(ConsumerConfig.GROUP_ID_CONFIG, group);
            settings.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
            settings.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            try (KafkaConsumer<byte[], byte[]> second = new KafkaConsumer<>(settings, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                second.subscribe(List.of(in));
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (second.assignment().isEmpty() && System.nanoTime() < deadline) {
                    second.poll(Duration.ofMillis(100));
                }
                assertThat(second.assignment()).as("the second member's share").hasSize(1);
            }
            awaitMembers(group, 1);
            // The partition that came back is read again from the start (nothing was committed): 50 records more.
            awaitHandedOver(group, in, 2, 150);
            runner.requestStop();
            running.join(Duration.ofSeconds(60));
            assertThat(running.isAlive()).isFalse();
        }
        assertThat(out.toString(StandardCharsets.UTF_8).lines()).containsExactly("{\"n\":100,\"positions\":100}");
    }

    /**
     * Waits until the pipeline's consumer (client id {@code mallard-<group>}) has handed the pipeline every record of
     * the topic's partitions (lag 0 on each, from the client's JMX metrics) and at least {@code consumed} in all.
     */
    private static void awaitHandedOver(String group, String topic, int partitions, long consumed) throws Exception {
        javax.management.MBeanServer beans = java.lang.management.ManagementFactory.getPlatformMBeanServer();
        String prefix = "kafka.consumer:type=consumer-fetch-manager-metrics,client-id=mallard-" + group + ",topic=" + topic;
        dev.mallard.testkit.Await.until("the pipeline's consumer to hand over " + consumed + " records of " + topic + " with no lag", () -> {
            if (!(metric(beans, prefix, "records-consumed-total") >= consumed)) {
                return false;
            }
            for (int partition = 0; partition < partitions; partition++) {
                if (metric(beans, prefix + ",partition=" + partition, "records-lag") != 0.0) {
                    return false;
                }
            }
            return true;
        });
    }

    /** A client metric's value; NaN while the client has not registered it (yet, or again after a rebalance). */
    private static double metric(javax.management.MBeanServer beans, String name, String attribute) throws Exception {
        try {
            return ((Number) beans.getAttribute(new javax.management.ObjectName(name), attribute)).doubleValue();
        } catch (javax.management.InstanceNotFoundException | javax.management.AttributeNotFoundException notYet) {
            return Double.NaN;
        }
    }

    /** Waits until the group is stable with this many members. */
    private static void awaitMembers(String group, int members) throws Exception {
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        try (Admin admin = Admin.create(properties)) {
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (System.nanoTime() < deadline) {
                try {
                    var description = admin.describeConsumerGroups(List.of(group)).describedGroups().get(group).get();
                    if (description.groupState() == org.apache.kafka.common.GroupState.STABLE && description.members().size() == members) {
                        return;
                    }
                } catch (java.util.concurrent.ExecutionException e) {
                    if (!(e.getCause() instanceof org.apache.kafka.common.errors.GroupIdNotFoundException)) {
                        throw e;
                    }
                    // Not created until the first member joins.
                }
                Thread.sleep(100);
            }
        }
        throw new AssertionError("group " + group + " never became stable with " + members + " member(s)");
    }
}
