// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.testkit.EmbeddedKafka;
import dev.mallard.testkit.EventGenerator;
import dev.mallard.testkit.Progress;
import dev.mallard.testkit.Publisher;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The jar carries the Kafka broker for {@code dev kafka} and {@code demo}; {@code run} must not load a class of it.
 * The JVM's class-load log of a real run against a broker (in this JVM) says which classes were loaded.
 */
class BrokerOffTheRunPathIT {
    /** The broker's own classes: its Scala core, the KRaft server side, the testkit that starts it. */
    static final Pattern BROKER_CLASS = Pattern.compile(
            "(?m)^\\S+ (kafka\\.|scala\\.|org\\.apache\\.kafka\\.(server|raft|controller|metadata|storage|coordinator)\\.|dev\\.mallard\\.testkit\\.EmbeddedKafka)");

    @TempDir
    Path dir;

    static List<String> brokerClassesIn(Path classLog) throws IOException {
        return BROKER_CLASS.matcher(Files.readString(classLog)).results().map(match -> match.group().split(" ")[1]).distinct().limit(5).toList();
    }

    static String classLogOption(Path classLog) {
        return "-Xlog:class+load=info:file=" + classLog + ":uptime";
    }

    @Test
    void runLoadsNoClassOfTheKafkaBroker() throws Exception {
        try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
            String topic = "off-path-" + UUID.randomUUID();
            kafka.createTopic(topic, 1);
            try (Publisher publisher = Publisher.connect(kafka.bootstrapServers(), Progress.silent())) {
                publisher.publish(topic, EventGenerator.userActions(3), 10);
            }
            Path config = dir.resolve("count.yml");
            Files.writeString(config, """
                    pipeline:
                      batch_size: 10
                      source:
                        type: kafka
                        kafka: {brokers: [%s], group_id: g-%s, auto_offset_reset: earliest, topics: [%s]}
                      handler:
                        type: handlers.InferredMemBatch
                        sql: SELECT count(*) AS n FROM batch
                      sink:
                        type: console
                    """.formatted(kafka.bootstrapServers(), UUID.randomUUID(), topic));
            Path classLog = dir.resolve("classes.log");
            Path out = dir.resolve("out.txt");
            Process run = new ProcessBuilder(MallardJar.command(List.of(classLogOption(classLog)), "run", config.toString(), "--messages", "10"))
                    .redirectOutput(out.toFile()).redirectError(dir.resolve("err.txt").toFile()).start();
            assertThat(run.waitFor(120, TimeUnit.SECONDS)).as("mallard run finished").isTrue();
            assertThat(run.exitValue()).as(Files.readString(dir.resolve("err.txt"))).isZero();
            assertThat(Files.readString(out)).isEqualTo("{\"n\":10}\n");
            assertThat(Files.readString(classLog)).contains("org.apache.kafka.clients.consumer.KafkaConsumer");
            assertThat(brokerClassesIn(classLog)).isEmpty();
        }
    }
}
