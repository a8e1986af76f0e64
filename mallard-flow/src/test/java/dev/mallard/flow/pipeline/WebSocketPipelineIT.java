// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.flow.config.PipelineConfig;
import dev.mallard.flow.config.PipelineConfigReader;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.websocket.WsRouting;
import io.helidon.websocket.WsListener;
import io.helidon.websocket.WsSession;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** examples/websocket-bluesky.yml run by PipelineRunner against a local server sending the Jetstream fixture. */
class WebSocketPipelineIT {
    private static final Path EXAMPLE = Path.of("..", "examples", "websocket-bluesky.yml");
    private static final Path FIXTURE = Path.of("..", "examples", "fixtures", "jetstream-events.jsonl");

    @Test
    void theBlueskyExampleCountsTheCollectionsOfWhatTheServerSends() throws Exception {
        List<String> events = Files.readAllLines(FIXTURE);
        WebServer server = WebServer.builder().host("127.0.0.1").port(0).shutdownHook(false)
                .addRouting(WsRouting.builder().endpoint("/subscribe", new WsListener() {
                    @Override
                    public void onOpen(WsSession session) {
                        Thread.ofVirtual().start(() -> events.forEach(event -> session.send(event, true)));
                    }
                }))
                .build()
                .start();
        try {
            PipelineConfig config = new PipelineConfigReader(ConfigEnvironment.from(Map.of(
                    "MALLARD_WEBSOCKET_URI", "ws://127.0.0.1:" + server.port() + "/subscribe"))).read(EXAMPLE).orThrow();
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            try (PipelineRunner runner = new PipelineRunner(config, ConfigEnvironment.from(Map.of()),
                    new PipelineRunner.Options(events.size(), out))) {
                assertThat(BoundedRun.run(runner).messagesConsumed()).isEqualTo(events.size());
            }
            assertThat(out.toString(StandardCharsets.UTF_8).lines().toList()).containsExactly(
                    "{\"collection\":\"app.bsky.feed.post\",\"created\":2}",
                    "{\"collection\":\"app.bsky.feed.like\",\"created\":1}");
        } finally {
            server.stop();
        }
    }
}
