// SPDX-License-Identifier: Apache-2.0
package dev.mallard.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.server.MallardServer;
import dev.mallard.testkit.Await;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A small app using the Logback appender and the Micrometer registry ships to a real server; the rows are queried back. */
class LogsAndMetricsIT {
    @TempDir
    Path root;

    @Test
    void theAppsLogsAndMetricsLandInTheirQueuesAndAnOutageInBetweenLosesNothing() throws Exception {
        Path warehouse = root.resolve("warehouse");
        try (MallardServer server = IngestServer.start(warehouse, "logs", "metrics"); FaultyHttpProxy proxy = new FaultyHttpProxy(server.httpPort())) {
            try (SampleApp app = new SampleApp(proxy.uri(), root.resolve("spill"))) {
                for (int i = 1; i <= 50; i++) {
                    app.placeOrder(i);
                }
                Await.until("the first 50 log rows are written", () -> rows(warehouse, "logs") == 50);
                proxy.down();
                // Five threads log and count at once through the one appender and registry.
                java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newFixedThreadPool(5);
                List<java.util.concurrent.Future<?>> done = new java.util.ArrayList<>();
                for (int t = 0; t < 5; t++) {
                    int first = 51 + t * 10;
                    done.add(threads.submit(() -> {
                        for (int i = first; i < first + 10; i++) {
                            app.placeOrder(i);
                        }
                    }));
                }
                for (java.util.concurrent.Future<?> f : done) {
                    f.get();
                }
                threads.shutdown();
                Await.until("the logs of the outage are spilled", () -> HttpArrowProducerIT.spilledFiles(root.resolve("spill").resolve("shop-logs")) > 0);
                proxy.up(server.httpPort());
            }
            List<Object> logs = IngestServer.query(warehouse, "logs",
                    "SELECT count(*), count(DISTINCT sequence), min(sequence), max(sequence), count(throwable), "
                            + "count(*) FILTER (WHERE level = 'WARN' AND throwable LIKE '%IllegalStateException: stock low%'), "
                            + "count(*) FILTER (WHERE mdc['order'] = regexp_extract(message, 'order (\\d+)', 1)), "
                            + "count(*) FILTER (WHERE logger = 'shop.orders' AND application = 'shop') FROM rows").get(0);
            assertThat(logs).containsExactly(100L, 100L, 0L, 99L, 10L, 10L, 100L, 100L);
            List<Object> metrics = IngestServer.query(warehouse, "metrics",
                    "SELECT sum(value) FILTER (WHERE name = 'shop.orders' AND statistic = 'count' AND tags['region'] = 'eu'), "
                            + "sum(value) FILTER (WHERE name = 'shop.order.latency' AND statistic = 'count'), "
                            + "count(*) FILTER (WHERE name = 'shop.queue.depth' AND type = 'gauge'), "
                            + "max(value) FILTER (WHERE name = 'shop.order.latency' AND statistic = 'max' AND base_unit = 'seconds') FROM rows").get(0);
            assertThat(((Number) metrics.get(0)).doubleValue()).isEqualTo(100.0);
            assertThat(((Number) metrics.get(1)).doubleValue()).isEqualTo(100.0);
            assertThat(((Number) metrics.get(2)).longValue()).isGreaterThanOrEqualTo(1);
            assertThat(((Number) metrics.get(3)).doubleValue()).isEqualTo(0.049);
        }
    }

    private static long rows(Path warehouse, String queue) throws Exception {
        return (Long) IngestServer.query(warehouse, queue, "SELECT count(*) FROM rows").get(0).get(0);
    }
}
