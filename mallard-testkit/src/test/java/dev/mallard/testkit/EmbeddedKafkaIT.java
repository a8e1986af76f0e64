// SPDX-License-Identifier: Apache-2.0
package dev.mallard.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EmbeddedKafkaIT {
    @TempDir
    Path dir;

    @Test
    void aThousandRecordsOverThreePartitionsAllComeBackToAConsumerGroup() throws Exception {
        try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
            assertThat(kafka.bootstrapServers()).isEqualTo("127.0.0.1:" + kafka.port());
            kafka.createTopic("events", 3);
            Records.produce(kafka.bootstrapServers(), "events", 1000);

            Records.Consumed consumed = Records.consume(kafka.bootstrapServers(), "events", "counter", 1000);

            assertThat(consumed.perPartition()).containsOnlyKeys(0, 1, 2);
            assertThat(consumed.perPartition().values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(1000);
            assertThat(consumed.values()).doesNotHaveDuplicates();
        }
    }

    @Test
    void aGivenDataDirKeepsTopicsRecordsAndCommittedOffsetsAcrossARestart() throws Exception {
        EmbeddedKafka.Options options = EmbeddedKafka.Options.defaults().withDataDir(dir);
        try (EmbeddedKafka kafka = EmbeddedKafka.start(options)) {
            kafka.createTopic("kept", 3);
            Records.produce(kafka.bootstrapServers(), "kept", 100);
            assertThat(Records.consume(kafka.bootstrapServers(), "kept", "reader", 100).values()).hasSize(100);
        }
        try (EmbeddedKafka kafka = EmbeddedKafka.start(options)) {
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
                assertThat(admin.describeTopics(Set.of("kept")).allTopicNames().get().get("kept").partitions()).hasSize(3);
            }
            Records.produce(kafka.bootstrapServers(), "kept", 50);
            assertThat(Records.consume(kafka.bootstrapServers(), "kept", "reader", 50).values()).as("after the committed offsets").hasSize(50);
            assertThat(Records.consume(kafka.bootstrapServers(), "kept", "new-reader", 150).values()).as("from the start").hasSize(150);
        }
        assertThat(dir).isNotEmptyDirectory();
    }

    @Test
    void theTemporaryDataDirIsGoneAfterClose() {
        Path dataDir;
        try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
            dataDir = kafka.dataDir();
            assertThat(dataDir).isNotEmptyDirectory();
        }
        assertThat(Files.exists(dataDir)).isFalse();
    }

    @Test
    void creatingATopicThatExistsLeavesItAsItIs() throws Exception {
        try (EmbeddedKafka kafka = EmbeddedKafka.start(EmbeddedKafka.Options.defaults().withDefaultPartitions(2))) {
            kafka.createTopic("twice", 4);
            kafka.createTopic("twice", 1);
            Records.produce(kafka.bootstrapServers(), "auto-created", 1);
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
                var topics = admin.describeTopics(Set.of("twice", "auto-created")).allTopicNames().get();
                assertThat(topics.get("twice").partitions()).hasSize(4);
                assertThat(topics.get("auto-created").partitions()).as("num.partitions").hasSize(2);
            }
        }
    }

    @Test
    void aTakenPortFailsTheStartNamingThePort() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            int port = taken.getLocalPort();
            assertThatThrownBy(() -> EmbeddedKafka.start(EmbeddedKafka.Options.defaults().withPort(port)))
                    .isInstanceOfSatisfying(MallardException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.SYSTEM_KAFKA_FAILED))
                    .hasMessageContaining("127.0.0.1:" + port)
                    .hasMessageContaining("in use");
        }
    }
}
