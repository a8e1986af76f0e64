// SPDX-License-Identifier: Apache-2.0
package dev.mallard.hub;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.server.MallardServer;
import dev.mallard.server.config.ServerConfig;
import dev.mallard.server.config.ServerConfigReader;
import dev.mallard.testkit.Await;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Two pipelines in one hub writing their own tables and views while eight clients read them over Flight SQL and HTTP. */
class HubConcurrencyIT {
    private static final int CLIENTS = 8;
    private static final int ROUNDS = 4;
    private static final int PER_ROUND = 500;

    @TempDir
    Path dir;

    @BeforeAll
    static void startKafka() {
        HubIT.startKafka();
    }

    @AfterAll
    static void stopKafka() {
        HubIT.stopKafka();
    }

    @Test
    void twoPipelinesWritingDifferentTablesWhileEightClientsQueryGiveNoErrorAndNoWrongRow() throws Exception {
        String topicA = HubIT.topic(2);
        String topicB = HubIT.topic(2);
        Path a = dir.resolve("a.yml");
        Path b = dir.resolve("b.yml");
        Files.writeString(a, HubIT.viewPipeline("a", topicA, "a_events", "a_totals", true));
        Files.writeString(b, HubIT.viewPipeline("b", topicB, "b_events", "b_totals", true));
        ServerConfig config = new ServerConfigReader(ConfigEnvironment.from(Map.of())).read(Optional.empty(), List.of(
                "warehouse=" + dir.resolve("wh"), "database=hub.duckdb", "host=127.0.0.1", "http.port=0", "flight.port=0",
                "users.0.username=" + HubIT.USER, "users.0.password=" + HubIT.PASSWORD, "pipelines.0=" + a, "pipelines.1=" + b));
        try (MallardServer server = MallardServer.start(config, Hub.hosting())) {
            HubClient client = HubIT.client(server);
            Await.until("both pipelines created their views", () -> {
                try {
                    client.httpNumber("SELECT count(*) FROM a_totals, b_totals");
                    return true;
                } catch (AssertionError e) {
                    return false;
                }
            });
            AtomicBoolean running = new AtomicBoolean(true);
            ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
            ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
            AtomicLong reads = new AtomicLong();
            List<Thread> readers = new ArrayList<>();
            for (int i = 0; i < CLIENTS; i++) {
                boolean overFlight = i % 2 == 0;
                String table = i % 4 < 2 ? "a" : "b";
                readers.add(Thread.ofPlatform().name("reader-" + i).start(() -> read(client, overFlight, table, running, errors, wrong, reads)));
            }
            long published = 0;
            for (int round = 0; round < ROUNDS; round++) {
                HubIT.publish(topicA, HubIT.cityEvents(PER_ROUND, (int) published));
                HubIT.publish(topicB, HubIT.cityEvents(PER_ROUND * 2, (int) published * 2));
                published += PER_ROUND;
                long expected = published;
                Await.until("round " + round + " in both views", () -> client.httpNumber(HubIT.VIEW_EVENTS.replace("city_totals", "a_totals")) == expected
                        && client.httpNumber(HubIT.VIEW_EVENTS.replace("city_totals", "b_totals")) == expected * 2);
            }
            running.set(false);
            for (Thread reader : readers) {
                reader.join();
            }
            assertThat(errors).as("errors").isEmpty();
            assertThat(wrong).as("wrong rows").isEmpty();
            assertThat(reads.get()).isGreaterThan(CLIENTS);
            assertThat(client.httpNumber("SELECT count(DISTINCT n) FROM a_events")).isEqualTo(published);
            assertThat(client.httpNumber("SELECT count(DISTINCT n) FROM b_events")).isEqualTo(published * 2);
        }
    }

    /**
     * Reads the view and its table in one statement, so one snapshot: the view's count must equal the table's, and neither
     * may go back between reads.
     */
    private static void read(HubClient client, boolean overFlight, String table, AtomicBoolean running, ConcurrentLinkedQueue<String> errors,
            ConcurrentLinkedQueue<String> wrong, AtomicLong reads) {
        String sql = "SELECT (SELECT count(*) FROM " + table + "_events) * 1000000000 + (SELECT coalesce(sum(events), 0) FROM " + table + "_totals)";
        long last = 0;
        try (Connection flight = overFlight ? client.flight() : null) {
            while (running.get()) {
                long both = overFlight ? HubClient.number(flight, sql) : client.httpNumber(sql);
                long rows = both / 1_000_000_000L;
                long view = both % 1_000_000_000L;
                if (rows != view) {
                    wrong.add(table + ": the table holds " + rows + " rows and the view counts " + view);
                }
                if (rows < last) {
                    wrong.add(table + ": " + rows + " rows after " + last);
                }
                last = rows;
                reads.incrementAndGet();
            }
        } catch (Exception | AssertionError e) {
            errors.add(Thread.currentThread().getName() + ": " + e);
        }
    }
}
