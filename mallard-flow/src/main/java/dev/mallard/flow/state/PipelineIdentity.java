// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.state;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mallard.flow.config.PipelineConfig;
import java.util.ArrayList;
import java.util.List;

/**
 * What a state file belongs to: the pipeline's name, its source topics and its consumer group. A file copied to
 * another pipeline would otherwise hand it offsets of topics it never read, and it would skip what it should read.
 *
 * @param topics sorted; a webhook or WebSocket source's one topic is its type
 * @param group the Kafka consumer group; empty for a source without one
 */
public record PipelineIdentity(String name, List<String> topics, String group) {
    public PipelineIdentity {
        requireNonNull(name, "name is null");
        topics = topics.stream().sorted().toList();
        requireNonNull(group, "group is null");
    }

    public static PipelineIdentity of(PipelineConfig config) {
        PipelineConfig.SourceConfig source = config.pipeline().source();
        List<String> topics = new ArrayList<>();
        String group = "";
        if (source.type().equals("kafka")) {
            for (JsonNode topic : source.settings().path("topics")) {
                topics.add(topic.asText());
            }
            group = source.settings().path("group_id").asText("");
        } else {
            topics.add(source.type());
        }
        return new PipelineIdentity(config.pipeline().name(), topics, group);
    }

    @Override
    public String toString() {
        return "name=" + name + " topics=" + topics + " group=" + group;
    }
}
