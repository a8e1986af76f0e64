// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.mallard.flow.sink.postgres.PostgresDsn;
import dev.mallard.testkit.EmbeddedKafka;
import dev.mallard.testkit.EventGenerator;
import dev.mallard.testkit.Progress;
import dev.mallard.testkit.Publisher;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A stateful Kafka -> Postgres upsert pipeline as a separate process, killed with SIGKILL mid-stream again and
 * again, then run to the end: the Postgres table equals a GROUP BY of everything published. The Postgres is
 * MALLARD_TEST_POSTGRES_DSN (default the local one); unreachable, the test is skipped, or fails when CI is set.
 */
class PostgresKillIT {
    private static final String DSN = System.getenv().getOrDefault("MALLARD_TEST_POSTGRES_DSN", "postgres://postgres@127.0.0.1:5432/test");
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

    private static Connection postgres() throws SQLException {
        PostgresDsn dsn = PostgresDsn.parse(DSN, "MALLARD_TEST_POSTGRES_DSN");
        Connection connection = new org.postgresql.Driver().connect(dsn.jdbcUrl(), dsn.properties());
        if (connection == null) {
            throw new SQLException("the driver does not accept " + dsn.description());
        }
        return connection;
    }

    private static void requirePostgres() {
        try (Connection ignored = postgres()) {
            // reachable
        } catch (SQLException e) {
            String message = "Postgres is not reachable (" + e.getMessage() + "); start one or set MALLARD_TEST_POSTGRES_DSN";
            if (System.getenv("CI") != null) {
                fail(message);
            }
            Assumptions.abort(message);
        }
    }

    private static Map<String, Long> table(String table) throws SQLException {
        Map<String, Long> rows = new HashMap<>();
        try (Connection connection = postgres(); Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery("SELECT city, total FROM " + table)) {
            while (result.next()) {
                rows.put(result.getString(1), result.getLong(2));
            }
        }
        return rows;
    }

    private static long stateOffsets(Path state) {
        if (!Files.exists(state)) {
            return 0;
        }
        try (Connection connection = DriverManager.getConnection("jdbc:duckdb:" + state);
                ResultSet rows = connection.createStatement().executeQuery("SELECT coalesce(sum(next_offset), 0) FROM sqlflow_offsets")) {
            rows.next();
            return rows.getLong(1);
        } catch (SQLException e) {
            return 0; // killed before the table was created
        }
    }

    @Test
    void killedWithSigkillMidStreamAndRestartedTheUpsertTableEqualsAGroupByOfEverythingPublished() throws Exception {
        requirePostgres();
        long total = 40_000;
        String topic = "events-" + UUID.randomUUID();
        kafka.createTopic(topic, 3);
        try (Publisher publisher = Publisher.connect(kafka.bootstrapServers(), Progress.silent())) {
            publisher.publish(topic, EventGenerator.userActions(7), total);
        }
        String table = "kill_totals_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        try (Connection connection = postgres(); Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE " + table + " (city text PRIMARY KEY, total bigint)");
        }
        Path state = dir.resolve("state").resolve("kill.duckdb");
        Path config = dir.resolve("kill.yml");
        Files.writeString(config, """
                tables:
                  sql:
                    - name: totals
                      sql: CREATE TABLE IF NOT EXISTS totals (city VARCHAR, total BIGINT)
                pipeline:
                  name: postgres-kill
                  batch_size: 500
                  flush_interval_seconds: 1
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
                      WHEN MATCHED THEN UPDATE SET total = t.total + b.n WHEN NOT MATCHED THEN INSERT VALUES (b.city, b.n);
                      SELECT city, total FROM totals WHERE city IN (SELECT properties.city FROM batch)
                  sink:
                    type: postgres
                    postgres:
                      dsn: "%s"
                      table: %s
                      mode: upsert
                      key: [city]
                """.formatted(state, kafka.bootstrapServers(), "g-" + UUID.randomUUID(), topic, DSN, table));
        Random random = new Random(42);
        int kills = 0;
        int killsMidStream = 0;
        while (kills < 5) {
            Path log = dir.resolve("kill-" + kills + ".log");
            Process run = MallardJar.start(log, "run", config.toString());
            MallardJar.awaitProcessing(run, log);
            Thread.sleep(random.nextInt(600));
            if (!run.isAlive()) {
                break;
            }
            run.destroyForcibly();
            assertThat(run.waitFor(30, TimeUnit.SECONDS)).isTrue();
            kills++;
            long offsets = stateOffsets(state);
            if (offsets > 0 && offsets < total) {
                killsMidStream++;
            }
            if (offsets >= total) {
                break;
            }
        }
        assertThat(kills).as("the pipeline was killed").isGreaterThanOrEqualTo(3);
        assertThat(killsMidStream).as("kills that landed mid-stream").isGreaterThanOrEqualTo(2);
        long remaining = total - stateOffsets(state);
        if (remaining > 0) {
            Process last = MallardJar.start(dir.resolve("last.log"), "run", config.toString(), "--max-msgs", Long.toString(remaining));
            assertThat(last.waitFor(120, TimeUnit.SECONDS)).isTrue();
            assertThat(last.exitValue()).as(Files.readString(dir.resolve("last.log"))).isZero();
        }
        assertThat(table(table)).containsExactlyInAnyOrderEntriesOf(Map.of("New York", total / 2, "Baltimore", total / 2));
    }
}
