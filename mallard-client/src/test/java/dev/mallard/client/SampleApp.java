// SPDX-License-Identifier: Apache-2.0
package dev.mallard.client;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import dev.mallard.client.micrometer.MallardMeterRegistry;
import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;

/**
 * The application under test: it logs through SLF4J into its own Logback context, configured with the XML of
 * docs/client.md, and counts and times orders in a {@link MallardMeterRegistry} shipping to the {@code metrics} queue.
 */
final class SampleApp implements AutoCloseable {
    private static final Path DOC = Path.of("..", "docs", "client.md");

    private final LoggerContext logging = new LoggerContext();
    private final Logger log;
    private final MallardMeterRegistry metrics;
    private final Counter orders;
    private final Timer latency;
    private final AtomicInteger depth = new AtomicInteger();

    SampleApp(URI server, Path spill) throws Exception {
        logging.setMDCAdapter(new ch.qos.logback.classic.util.LogbackMDCAdapter());
        logging.putProperty("MALLARD_URL", server.toString());
        logging.putProperty("MALLARD_USER", IngestServer.USER);
        logging.putProperty("MALLARD_PASSWORD", IngestServer.PASSWORD);
        logging.putProperty("MALLARD_SPILL", spill.toString());
        JoranConfigurator configurator = new JoranConfigurator();
        configurator.setContext(logging);
        configurator.doConfigure(new ByteArrayInputStream(docExample("xml").getBytes(StandardCharsets.UTF_8)));
        log = logging.getLogger("shop.orders");

        // docs:begin registry
        HttpArrowProducer producer = HttpArrowProducer.builder(server, "metrics", MallardMeterRegistry.SCHEMA)
                .login(IngestServer.USER, IngestServer.PASSWORD)
                .options(ProducerOptions.builder().producerId("shop-metrics").build())
                .build();
        MallardMeterRegistry registry = new MallardMeterRegistry(MallardMeterRegistry.config(Duration.ofSeconds(10)), Clock.SYSTEM, producer);
        // docs:end registry
        metrics = registry;
        orders = Counter.builder("shop.orders").tag("region", "eu").register(metrics);
        latency = Timer.builder("shop.order.latency").register(metrics);
        metrics.gauge("shop.queue.depth", depth);
    }

    /** The first fenced block of {@code language} in docs/client.md. */
    static String docExample(String language) throws Exception {
        String doc = Files.readString(DOC);
        String fence = "```" + language + "\n";
        int start = doc.indexOf(fence);
        if (start < 0) {
            throw new AssertionError("docs/client.md has no " + language + " example");
        }
        start += fence.length();
        return doc.substring(start, doc.indexOf("```", start));
    }

    void placeOrder(int number) {
        logging.getMDCAdapter().put("order", Integer.toString(number));
        try {
            latency.record(Duration.ofMillis(number % 50));
            orders.increment();
            depth.set(number);
            if (number % 10 == 0) {
                log.warn("order {} needs a look", number, new IllegalStateException("stock low for order " + number));
            } else {
                log.info("order {} placed", number);
            }
        } finally {
            logging.getMDCAdapter().remove("order");
        }
    }

    Map<String, Long> dropped() {
        return Map.of("metrics", metrics.droppedRows());
    }

    @Override
    public void close() {
        metrics.close();
        logging.stop();
    }
}
