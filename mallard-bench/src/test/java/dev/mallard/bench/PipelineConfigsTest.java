// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.core.engine.Engine;
import dev.mallard.flow.config.PipelineConfig;
import dev.mallard.flow.config.PipelineConfigReader;
import dev.mallard.flow.pipeline.DevInvoke;
import dev.mallard.flow.source.Message;
import dev.mallard.testkit.EventGenerator;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The generated pipelines read as valid configs and count the generator's events, run in memory without a broker. */
class PipelineConfigsTest {
    private static final PipelineConfigs.Kafka KAFKA = new PipelineConfigs.Kafka("127.0.0.1:9092", "bench-topic", "bench-group");
    private static final ConfigEnvironment ENVIRONMENT = ConfigEnvironment.from(Map.of());

    @Test
    void structuredCountsByCityOverTheDeclaredTable() throws Exception {
        PipelineConfig config = read(PipelineConfigs.structured(KAFKA, 5000));
        assertThat(config.pipeline().batchSize()).isEqualTo(5000);
        assertThat(config.pipeline().statePath()).isEmpty();
        assertThat(counts(config, 11)).isEqualTo(Map.of("New York", 6L, "Baltimore", 5L));
    }

    @Test
    void inferredCountsByCityOverTheBatch() throws Exception {
        assertThat(counts(read(PipelineConfigs.inferred(KAFKA, 1000)), 10)).isEqualTo(Map.of("New York", 5L, "Baltimore", 5L));
    }

    @Test
    void statefulMergesIntoTotalsOnTheStateFile() throws Exception {
        Path state = Path.of("/tmp/bench state/state.duckdb");
        PipelineConfig config = read(PipelineConfigs.stateful(KAFKA, 5000, state));
        assertThat(config.pipeline().statePath()).contains(state.toAbsolutePath().toString());
        assertThat(counts(config, 7)).isEqualTo(Map.of("New York", 4L, "Baltimore", 3L));
    }

    @Test
    void threadsOptionRunsSetThreadsBeforeTheDeclaredCommandsAndTheCountsStayTheSame() throws Exception {
        PipelineConfig structured = read(PipelineConfigs.withThreads(PipelineConfigs.structured(KAFKA, 5000), 1));
        assertThat(structured.commands()).extracting(PipelineConfig.Command::sql).containsExactly("SET threads = 1",
                "CREATE TABLE events (" + PipelineConfigs.EVENTS_COLUMNS + ")");
        assertThat(counts(structured, 11)).isEqualTo(Map.of("New York", 6L, "Baltimore", 5L));
        PipelineConfig inferred = read(PipelineConfigs.withThreads(PipelineConfigs.inferred(KAFKA, 1000), 1));
        assertThat(inferred.commands()).extracting(PipelineConfig.Command::sql).containsExactly("SET threads = 1");
        assertThat(counts(inferred, 10)).isEqualTo(Map.of("New York", 5L, "Baltimore", 5L));
    }

    @Test
    void withoutTheThreadsOptionTheConfigIsUnchanged() {
        String structured = PipelineConfigs.structured(KAFKA, 5000);
        assertThat(PipelineConfigs.withThreads(structured, null)).isEqualTo(structured);
    }

    private static PipelineConfig read(String yaml) {
        return new PipelineConfigReader(ENVIRONMENT).read("bench.yml", yaml).orThrow();
    }

    /** Runs the handler over one batch of generated events (in memory, as dev invoke does) and reads city, count. */
    private static Map<String, Long> counts(PipelineConfig config, int events) throws Exception {
        EventGenerator generator = EventGenerator.userActions(0);
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < events; i++) {
            batch.add(new Message("bench-topic", 0, i, null, generator.next()));
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (Engine engine = Engine.inMemory()) {
            DevInvoke.run(engine, config, batch, ENVIRONMENT, out);
        }
        ObjectMapper json = new ObjectMapper();
        Map<String, Long> counts = new HashMap<>();
        for (String line : out.toString(StandardCharsets.UTF_8).split("\n")) {
            if (!line.isBlank()) {
                JsonNode row = json.readTree(line);
                counts.put(row.get("city").asText(), row.properties().stream().skip(1).findFirst().orElseThrow().getValue().asLong());
            }
        }
        return counts;
    }
}
