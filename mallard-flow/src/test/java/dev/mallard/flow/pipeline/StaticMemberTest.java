// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.flow.config.PipelineConfig;
import dev.mallard.flow.config.PipelineConfigReader;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StaticMemberTest {
    @TempDir
    Path dir;

    private static PipelineConfig config(String state, String kafkaExtra) {
        return new PipelineConfigReader(ConfigEnvironment.from(Map.of())).read("p.yml", """
                pipeline:
                  name: members
                  batch_size: 10
                  %s
                  source:
                    type: kafka
                    kafka: {brokers: [b:9092], group_id: g, auto_offset_reset: earliest, topics: [events]%s}
                  handler:
                    type: handlers.InferredMemBatch
                    sql: SELECT * FROM batch
                  sink:
                    type: noop
                """.formatted(state, kafkaExtra)).orThrow();
    }

    @Test
    void aPipelineWithoutStateOrIdIsADynamicMember() {
        assertThat(PipelineRunner.staticMember(config("", ""))).isEmpty();
    }

    @Test
    void aStateFileMakesTheMemberStaticWithAnIdThatFollowsTheFile() {
        String a = PipelineRunner.staticMember(config("state: {path: " + dir.resolve("a.db") + "}", "")).orElseThrow();
        String b = PipelineRunner.staticMember(config("state: {path: " + dir.resolve("b.db") + "}", "")).orElseThrow();
        assertThat(a).startsWith("mallard-members-");
        assertThat(b).startsWith("mallard-members-").isNotEqualTo(a);
    }

    @Test
    void anIdGivenInTheConfigIsTheMembersIdWithOrWithoutAStateFile() {
        assertThat(PipelineRunner.staticMember(config("", ", group_instance_id: worker-1"))).contains("worker-1");
        assertThat(PipelineRunner.staticMember(config("state: {path: " + dir.resolve("a.db") + "}", ", group_instance_id: worker-2")))
                .contains("worker-2");
    }
}
