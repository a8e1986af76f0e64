// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PipelineResultsTest {
    private static final long MESSAGES = 300_000;

    /** A report of the given rate: 300,000 messages over the seconds that rate takes. */
    private static WorkerReport at(double messagesPerSecond, long peakRssMib) {
        long nanos = Math.round(MESSAGES / messagesPerSecond * 1e9);
        return new WorkerReport(MESSAGES, nanos, nanos, 2 * nanos, peakRssMib * 1024, Map.of(),
                Map.of("handler.write", nanos / 2e9, "source.read", nanos / 4e9));
    }

    private static Measurement once(WorkerReport report) {
        return new Measurement(List.of(new Measurement.Round(report, 0.5, 0.0)));
    }

    private static PipelineResults results(double structured, double inferred, double stateful, double streams, long rss) {
        PipelineResults.Setup setup = new PipelineResults.Setup(MESSAGES, 5000, 1, 1, 2, "25", "rocksdb", 0.1, 0.2);
        return new PipelineResults(setup, Map.of(
                Contender.BARE_CONSUMER, once(at(1_000_000, 200)),
                Contender.STRUCTURED, once(at(structured, rss)),
                Contender.INFERRED, once(at(inferred, rss - 10)),
                Contender.STATEFUL, once(at(stateful, rss - 20)),
                Contender.KAFKA_STREAMS, once(at(streams, 600))));
    }

    @Test
    void theMedianRoundGivesTheFiguresAndTheLargestRoundTheRss() {
        Measurement measurement = new Measurement(List.of(new Measurement.Round(at(300_000, 250), 1, 0),
                new Measurement.Round(at(100_000, 310), 1, 0), new Measurement.Round(at(200_000, 240), 1, 0)));
        assertThat(measurement.messagesPerSecond()).isCloseTo(200_000, org.assertj.core.data.Offset.offset(1.0));
        assertThat(measurement.slowest()).isCloseTo(100_000, org.assertj.core.data.Offset.offset(1.0));
        assertThat(measurement.peakRssMib()).isEqualTo(310.0);
    }

    @Test
    void jsonHasTheAgreedKeysAndReadsTheTargetsOnCpuPerMessage() throws Exception {
        // CPU per message is the inverse of the rate here: structured 1.18x the bare consumer's, inferred 2.86x,
        // state adds 6%, Kafka Streams 2.83x the structured pipeline's.
        JsonNode json = new ObjectMapper().readTree(results(850_000, 350_000, 800_000, 300_000, 280).json());
        List<String> keys = new ArrayList<>();
        json.fieldNames().forEachRemaining(keys::add);
        assertThat(keys).startsWith("bare_consumer_msgs_per_s", "structured_msgs_per_s", "inferred_msgs_per_s", "stateful_msgs_per_s",
                "kafka_streams_msgs_per_s", "pipeline_peak_rss_mib");
        assertThat(json.get("bare_consumer_msgs_per_s").asLong()).isEqualTo(1_000_000);
        assertThat(json.get("structured_msgs_per_s").asLong()).isEqualTo(850_000);
        assertThat(json.get("pipeline_peak_rss_mib").asDouble()).isEqualTo(280.0);
        assertThat(json.get("cpu_us_per_msg").get("bare_consumer").asDouble()).isEqualTo(1.0);
        assertThat(json.get("cpu_us_per_msg").get("structured").asDouble()).isCloseTo(1.18, org.assertj.core.data.Offset.offset(0.01));
        JsonNode met = json.get("targets_met");
        assertThat(met.get("structured_cpu_vs_bare").asBoolean()).isTrue();
        assertThat(met.get("inferred_cpu_vs_bare").asBoolean()).isFalse();
        assertThat(met.get("kafka_streams_cpu_vs_structured").asBoolean()).isFalse();
        assertThat(met.get("state_cpu_cost").asBoolean()).isTrue();
        assertThat(met.get("pipeline_peak_rss").asBoolean()).isTrue();
        assertThat(json.get("ratios").get("state_cpu_cost").asDouble()).isCloseTo(0.063, org.assertj.core.data.Offset.offset(0.001));
        assertThat(json.get("ratios").get("structured_cpu_vs_bare").asDouble()).isCloseTo(1.176, org.assertj.core.data.Offset.offset(0.001));
    }

    @Test
    void tableMarksEachTargetAndPrintsCpuPerMessageBesideTheRate() {
        StringWriter text = new StringWriter();
        // structured 2.5x the bare consumer's CPU per message, inferred 1.67x, state adds 67%, Streams 1.67x structured.
        results(400_000, 600_000, 240_000, 240_000, 350).table(new PrintWriter(text));
        String table = text.toString();
        assertThat(table).contains("1,000,000", "400,000", "CPU us/msg");
        assertThat(table.lines().filter(line -> line.startsWith("Mallard StructuredBatch, noop sink"))).singleElement()
                .asString().contains("2.50").endsWith("MISSED");
        assertThat(table.lines().filter(line -> line.startsWith("Mallard InferredMemBatch"))).singleElement().asString().endsWith("met");
        assertThat(table.lines().filter(line -> line.startsWith("Kafka Streams"))).singleElement().asString().endsWith("MISSED");
        assertThat(table).contains("350.0 MiB, target <= 300 MiB  MISSED");
    }
}
