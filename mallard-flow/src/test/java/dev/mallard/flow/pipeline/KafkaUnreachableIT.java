// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.flow.config.PipelineConfig;
import dev.mallard.flow.config.PipelineConfigReader;
import java.io.ByteArrayOutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** A Kafka source whose brokers do not answer: a port on this machine with nothing listening. */
class KafkaUnreachableIT {
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private static int portWithNothingListening() throws Exception {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    private static HttpResponse<String> get(int port, String path) throws Exception {
        return CLIENT.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void anUnreachableBrokerFailsHealthzIsCountedAndEndsTheRunWithExitTwelveAfterTheDeadline() throws Exception {
        int broker = portWithNothingListening();
        PipelineConfig config = new PipelineConfigReader(ConfigEnvironment.from(Map.of())).read("p.yml", """
                pipeline:
                  name: nowhere
                  batch_size: 10
                  flush_interval_seconds: 1
                  source:
                    type: kafka
                    kafka:
                      brokers: [127.0.0.1:%d]
                      group_id: g
                      auto_offset_reset: earliest
                      topics: [t]
                      unreachable_deadline_seconds: 15
                  handler: {type: handlers.InferredMemBatch, sql: SELECT * FROM batch}
                  sink: {type: console}
                """.formatted(broker)).orThrow();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        try (PipelineRunner runner = new PipelineRunner(config, ConfigEnvironment.from(Map.of()),
                new PipelineRunner.Options(0, new ByteArrayOutputStream(), Optional.of(0)))) {
            Thread running = Thread.ofPlatform().name("pipeline").start(() -> {
                try {
                    runner.run();
                } catch (Throwable e) {
                    failure.set(e);
                }
            });
            long waitUntil = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (runner.metricsPort().isEmpty() && System.nanoTime() < waitUntil) {
                Thread.onSpinWait();
            }
            int port = runner.metricsPort().orElseThrow();
            HttpResponse<String> health = get(port, "/healthz");
            while (health.statusCode() == 200 && running.isAlive() && System.nanoTime() < waitUntil) {
                Thread.sleep(50); // polling a condition, bounded by waitUntil
                health = get(port, "/healthz");
            }
            assertThat(health.statusCode()).isEqualTo(503);
            assertThat(health.body()).contains("source_unreachable");
            assertThat(get(port, "/metrics").body())
                    .containsPattern("error_count_total\\{[^}]*code=\"system.source.unreachable\"[^}]*phase=\"source.read\"[^}]*} 1.0");
            running.join(Duration.ofSeconds(60));
            assertThat(running.isAlive()).as("the run ended within its deadline").isFalse();
        }
        assertThatThrownBy(() -> {
            throw failure.get();
        }).isInstanceOfSatisfying(MallardException.class, e -> {
            assertThat(e.errorCode()).isEqualTo(ErrorCode.SYSTEM_SOURCE_UNREACHABLE);
            assertThat(e.errorCode().exitCode().code()).isEqualTo(12);
        }).hasMessageContaining("127.0.0.1:" + broker).hasMessageContaining("unreachable_deadline_seconds");
    }
}
