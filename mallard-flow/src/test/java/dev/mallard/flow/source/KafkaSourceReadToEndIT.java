// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.source;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.flow.source.Source.Partition;
import dev.mallard.testkit.EmbeddedKafka;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * What a window asks before it lets a silent partition go idle, answered by a real broker: read to its end, records
 * still waiting, or (the broker gone) no answer.
 */
class KafkaSourceReadToEndIT {
    @Test
    void aPartitionIsReadToItsEndOnlyWhenNothingWaitsAndWithoutABrokerThereIsNoAnswer() throws Exception {
        EmbeddedKafka kafka = EmbeddedKafka.start();
        KafkaSource source = null;
        try {
            kafka.createTopic("ends", 1);
            publish(kafka, 3);
            ObjectNode block = JsonNodeFactory.instance.objectNode();
            block.putArray("brokers").add(kafka.bootstrapServers());
            block.put("group_id", "ends");
            block.putArray("topics").add("ends");
            source = new KafkaSource(block, 100, partition -> Optional.empty());
            Partition partition = new Partition("ends", 0);
            List<Message> read = new ArrayList<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (read.size() < 3 && System.nanoTime() < deadline) {
                read.addAll(source.poll(Duration.ofMillis(200), 100));
            }
            assertThat(read).hasSize(3);
            assertThat(source.readToEnd(Set.of(partition))).isEqualTo(Map.of(partition, true));

            publish(kafka, 2);
            assertThat(source.readToEnd(Set.of(partition))).as("two records wait").isEqualTo(Map.of(partition, false));

            kafka.close();
            kafka = null;
            assertThat(source.readToEnd(Set.of(partition))).as("the broker is gone: no answer for the partition").isEmpty();
        } finally {
            if (source != null) {
                source.close();
            }
            if (kafka != null) {
                kafka.close();
            }
        }
    }

    private static void publish(EmbeddedKafka kafka, int count) {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>("ends", 0, null, "{\"n\":" + i + "}"));
            }
            producer.flush();
        }
    }
}
