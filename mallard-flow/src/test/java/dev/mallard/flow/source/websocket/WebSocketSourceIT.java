// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.source.websocket;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.core.metrics.MetricsRegistry;
import dev.mallard.core.retry.Backoff;
import dev.mallard.flow.source.Message;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.websocket.WsRouting;
import io.helidon.websocket.WsListener;
import io.helidon.websocket.WsSession;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The WebSocket source against a local WebSocket server (Helidon), reached through a TCP proxy that drops
 * connections mid-stream with a reset, as a network failure does.
 */
class WebSocketSourceIT {
    private WebServer server;
    private WebSocketSource source;

    @AfterEach
    void stop() {
        if (source != null) {
            source.close();
        }
        if (server != null) {
            server.stop();
        }
    }

    /**
     * Connection n sends {@code {"seq":i,"connection":n}} with i counting from n * 1,000,000: the connections before
     * the last one keep sending until their socket breaks, the last sends {@code lastCount} events and stays open.
     */
    private void serve(int connections, int lastCount, CountDownLatch lastSent) {
        AtomicInteger opened = new AtomicInteger();
        server = WebServer.builder().host("127.0.0.1").port(0).shutdownHook(false)
                .addRouting(WsRouting.builder().endpoint("/firehose", () -> new WsListener() {
                    @Override
                    public void onOpen(WsSession session) {
                        int n = opened.getAndIncrement();
                        Thread.ofVirtual().start(() -> {
                            try {
                                for (int i = 0; n == connections - 1 ? i < lastCount : true; i++) {
                                    session.send("{\"seq\":" + (n * 1_000_000 + i) + ",\"connection\":" + n + "}", true);
                                    if (n < connections - 1) {
                                        Thread.sleep(1);
                                    }
                                }
                                lastSent.countDown();
                            } catch (RuntimeException | InterruptedException broken) {
                                // the proxy cut this connection
                            }
                        });
                    }
                }))
                .build()
                .start();
    }

    private List<Message> pollAll(int expected) {
        List<Message> messages = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (messages.size() < expected && System.nanoTime() < deadline) {
            messages.addAll(source.poll(Duration.ofMillis(100), 500));
        }
        return messages;
    }

    private static int seq(Message message) {
        String text = new String(message.value(), StandardCharsets.UTF_8);
        return Integer.parseInt(text.substring(text.indexOf(':') + 1, text.indexOf(',')));
    }

    @Test
    void afterTheConnectionIsCutMidStreamItReconnectsAndNoMessageSentAfterTheReconnectIsLost() throws Exception {
        CountDownLatch lastSent = new CountDownLatch(1);
        serve(3, 2_000, lastSent);
        List<Message> received = new ArrayList<>();
        try (CuttingProxy proxy = new CuttingProxy(server.port())) {
            source = new WebSocketSource(URI.create("ws://127.0.0.1:" + proxy.port() + "/firehose"), 0, 100,
                    new Backoff(Duration.ofMillis(20), Duration.ofMillis(200)));
            for (int connection = 0; connection < 2; connection++) {
                // Cut once this connection has delivered some of its stream, while the server is still sending.
                int current = connection;
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (received.stream().filter(m -> seq(m) / 1_000_000 == current).count() < 50 && System.nanoTime() < deadline) {
                    received.addAll(source.poll(Duration.ofMillis(50), 500));
                }
                proxy.cut();
            }
            assertThat(lastSent.await(60, TimeUnit.SECONDS)).as("the third connection sent its events").isTrue();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (received.stream().filter(m -> seq(m) >= 2_000_000).count() < 2_000 && System.nanoTime() < deadline) {
                received.addAll(source.poll(Duration.ofMillis(50), 500));
            }
            // Before the proxy closes, which drops the third connection too.
            assertThat(source.reconnects()).isEqualTo(2);
            assertThat(source.state()).isEqualTo(WebSocketSource.State.CONNECTED);
            MetricsRegistry registry = new MetricsRegistry();
            source.registerMeters(registry, "firehose");
            assertThat(registry.scrape()).contains("websocket_reconnects_total{pipeline=\"firehose\"} 2.0")
                    .contains("websocket_connected{pipeline=\"firehose\"} 1.0");
        }
        List<Integer> seqs = received.stream().map(WebSocketSourceIT::seq).toList();
        assertThat(seqs.stream().filter(seq -> seq >= 2_000_000).toList()).as("everything sent after the last reconnect, in order")
                .containsExactlyElementsOf(java.util.stream.IntStream.range(2_000_000, 2_002_000).boxed().toList());
        for (int connection = 0; connection < 2; connection++) {
            int base = connection * 1_000_000;
            List<Integer> ofConnection = seqs.stream().filter(seq -> seq / 1_000_000 == base / 1_000_000).toList();
            assertThat(ofConnection).as("connection %d: what arrived before the cut is its stream from the start, without gaps", connection)
                    .hasSizeGreaterThanOrEqualTo(50)
                    .containsExactlyElementsOf(java.util.stream.IntStream.range(base, base + ofConnection.size()).boxed().toList());
        }
        assertThat(received).extracting(Message::topic).containsOnly("websocket");
        assertThat(received).extracting(Message::offset)
                .containsExactlyElementsOf(java.util.stream.LongStream.range(0, received.size()).boxed().toList());
    }

    @Test
    void aServerThatIsNotThereYetIsRetriedUntilItIs() throws Exception {
        int port;
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        source = new WebSocketSource(URI.create("ws://127.0.0.1:" + port + "/firehose"), 7, 100,
                new Backoff(Duration.ofMillis(20), Duration.ofMillis(100)));
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (source.reconnects() < 2 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(source.reconnects()).isGreaterThanOrEqualTo(2);
        assertThat(source.state()).isNotEqualTo(WebSocketSource.State.CONNECTED);
        CountDownLatch lastSent = new CountDownLatch(1);
        server = WebServer.builder().host("127.0.0.1").port(port).shutdownHook(false)
                .addRouting(WsRouting.builder().endpoint("/firehose", () -> new WsListener() {
                    @Override
                    public void onOpen(WsSession session) {
                        Thread.ofVirtual().start(() -> {
                            session.send("{\"seq\":0,\"connection\":0}", true);
                            lastSent.countDown();
                        });
                    }
                }))
                .build()
                .start();
        List<Message> received = pollAll(1);
        assertThat(received).extracting(Message::offset).containsExactly(7L);
    }
}
