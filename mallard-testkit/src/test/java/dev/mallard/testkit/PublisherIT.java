// SPDX-License-Identifier: Apache-2.0
package dev.mallard.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PublisherIT {
    private static EmbeddedKafka kafka;

    @TempDir
    Path dir;

    @BeforeAll
    static void startKafka() {
        kafka = EmbeddedKafka.start();
    }

    @AfterAll
    static void stopKafka() {
        kafka.close();
    }

    @Test
    void tenThousandGeneratedEventsArePublishedAndCountedBackHalfInEachCity() {
        try (Publisher publisher = Publisher.connect(kafka.bootstrapServers(), Progress.silent())) {
            assertThat(publisher.ensureTopic("generated", Optional.of(3))).isTrue();
            assertThat(publisher.publish("generated", EventGenerator.userActions(42), 10_000)).isEqualTo(10_000);
        }

        Records.Consumed consumed = Records.consume(kafka.bootstrapServers(), "generated", "check", 10_000);

        assertThat(consumed.values()).hasSize(10_000);
        assertThat(consumed.perPartition()).containsOnlyKeys(0, 1, 2);
        assertThat(consumed.values().stream().filter(value -> value.contains("\"city\":\"New York\"")).count()).isEqualTo(5_000);
        assertThat(consumed.values().stream().filter(value -> value.contains("\"city\":\"Baltimore\"")).count()).isEqualTo(5_000);
    }

    @Test
    void eachNonBlankLineOfAFileIsOneMessageAsItIs() throws Exception {
        Path file = dir.resolve("events.jsonl");
        Files.writeString(file, "{\"n\":1}\n\n   \n{\"n\":2}\r\n{\"n\": 3}\n", StandardCharsets.UTF_8);
        try (Publisher publisher = Publisher.connect(kafka.bootstrapServers(), Progress.silent())) {
            publisher.ensureTopic("lines", Optional.empty());
            assertThat(publisher.publishLines("lines", file)).isEqualTo(3);
            assertThat(publisher.publishLines("lines", file, 2)).as("with a limit").isEqualTo(2);
        }

        assertThat(Records.consume(kafka.bootstrapServers(), "lines", "check", 5).values())
                .containsExactlyInAnyOrder("{\"n\":1}", "{\"n\":2}", "{\"n\": 3}", "{\"n\":1}", "{\"n\":2}");
    }

    @Test
    void anExistingTopicIsLeftAsItIs() {
        kafka.createTopic("existing", 2);
        try (Publisher publisher = Publisher.connect(kafka.bootstrapServers(), Progress.silent())) {
            assertThat(publisher.ensureTopic("existing", Optional.of(5))).isFalse();
        }
    }

    @Test
    void progressIsARewrittenLineClearedAtTheEnd() {
        ByteArrayOutputStream shown = new ByteArrayOutputStream();
        try (Publisher publisher = Publisher.connect(kafka.bootstrapServers(), Progress.to(new PrintStream(shown, true, StandardCharsets.UTF_8)))) {
            publisher.ensureTopic("watched", Optional.empty());
            publisher.publish("watched", EventGenerator.userActions(1), 10);
        }
        String text = shown.toString(StandardCharsets.UTF_8);
        assertThat(text).startsWith("\rpublished ").contains(" of 10 messages").doesNotContain("\n").endsWith("\r");
    }

    @Test
    void aMissingFileIsAUserFault() {
        try (Publisher publisher = Publisher.connect(kafka.bootstrapServers(), Progress.silent())) {
            assertThatThrownBy(() -> publisher.publishLines("lines", dir.resolve("no-such.jsonl")))
                    .isInstanceOfSatisfying(MallardException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_CONFIG_NOT_FOUND))
                    .hasMessageContaining("no-such.jsonl");
        }
    }

    @Test
    void brokersThatDoNotAnswerFailWithinTheConnectTimeout() throws Exception {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = socket.getLocalPort();
        }
        // The error names the 2 s given, not the 10 s default: the timeout asked for is the one that ran out.
        assertThatThrownBy(() -> Publisher.connect("127.0.0.1:" + closedPort, Progress.silent(), Duration.ofSeconds(2)))
                .isInstanceOfSatisfying(MallardException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.SYSTEM_KAFKA_UNREACHABLE))
                .hasMessageContaining("127.0.0.1:" + closedPort)
                .hasMessageContaining("within 2 s");
    }

    @Test
    void malformedBootstrapServersAreAUserFault() {
        assertThatThrownBy(() -> Publisher.connect("no-port-here", Progress.silent()))
                .isInstanceOfSatisfying(MallardException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_ARGUMENT_INVALID))
                .hasMessageContaining("no-port-here");
    }
}
