// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.metrics.MetricsRegistry;
import java.lang.management.ManagementFactory;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class PipelineMetricsTest {
    private static final String P = "pipeline=\"orders\"";
    private static final String SINK = ",role=\"pipeline\",sink=\"kafka\"";
    private static final String OK = ",result=\"ok\"";

    private final MetricsRegistry registry = new MetricsRegistry();
    private final AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-03-01T10:00:00.750Z"));
    private final InstantSource clock = () -> now.get();

    @AfterEach
    void closeRegistry() {
        registry.close();
    }

    private PipelineMetrics stateless() {
        return new PipelineMetrics(registry, "orders", "kafka", false, clock);
    }

    private PipelineMetrics stateful() {
        return new PipelineMetrics(registry, "orders", "kafka", true, clock);
    }

    private Exposition scrape() {
        return new Exposition(registry.scrape());
    }

    @Test
    void aNewPipelineShowsItsCountersAndHistogramsAtZeroAndNoGaugeBeforeItsFirstReading() {
        stateless();
        Exposition scraped = scrape();
        assertThat(scraped.types()).containsOnlyKeys(
                "message_count_messages_total", "message_payload_bytes_total", "handler_rows_read_total",
                "sink_rows_accepted_total", "sink_rows_written_total", "sink_flush_count_flushes_total",
                "sink_retry_count_total", "source_read_latency_seconds", "source_read_latency_seconds_max",
                "sink_flush_latency_seconds", "sink_flush_latency_seconds_max", "batch_processing_latency_seconds",
                "batch_processing_latency_seconds_max");
        assertThat(scraped.value("message_count_messages_total{" + P + "}")).isZero();
        assertThat(scraped.value("batch_processing_latency_seconds_count{" + P + "}")).isZero();
    }

    @Test
    void everyMeterCarriesThePipelineTag() {
        PipelineMetrics metrics = stateful();
        metrics.consumerLag("events", 0, 1);
        metrics.error(ErrorCode.USER_HANDLER_SQL_FAILED, Phase.HANDLER_INVOKE);
        metrics.phase(Phase.SOURCE_COMMIT, 1);
        metrics.sinkFlushed(1, 1);
        metrics.stateDbSize(1);
        metrics.stateTableRows("agg", 1);
        assertThat(scrape().labels()).allSatisfy((family, labels) -> assertThat(labels).as(family).contains("pipeline"));
    }

    @Test
    void messagesReadCountsMessagesAndPayloadBytesAndTimesThePoll() {
        PipelineMetrics metrics = stateless();
        metrics.messagesRead(3, 120, 2_000_000);
        metrics.messagesRead(2, 80, 40_000);
        Exposition scraped = scrape();
        assertThat(scraped.value("message_count_messages_total{" + P + "}")).isEqualTo(5.0);
        assertThat(scraped.value("message_payload_bytes_total{" + P + "}")).isEqualTo(200.0);
        assertThat(scraped.value("source_read_latency_seconds_count{" + P + "}")).isEqualTo(2.0);
        assertThat(scraped.value("source_read_latency_seconds_sum{" + P + "}")).isEqualTo(0.00204);
        assertThat(scraped.value("source_read_latency_seconds_bucket{le=\"1.0E-4\"," + P + "}")).isEqualTo(1.0);
        assertThat(scraped.value("source_read_latency_seconds_bucket{le=\"0.0025\"," + P + "}")).isEqualTo(2.0);
    }

    @Test
    void handlerRowsReadCountsTheRowsTheSqlRanOver() {
        PipelineMetrics metrics = stateless();
        metrics.handlerRowsRead(7);
        metrics.handlerRowsRead(3);
        assertThat(scrape().value("handler_rows_read_total{" + P + "}")).isEqualTo(10.0);
    }

    @Test
    void eachPhaseIsTimedUnderItsOwnLabelFromItsFirstUse() {
        PipelineMetrics metrics = stateless();
        metrics.phase(Phase.HANDLER_INVOKE, 30_000_000_000L);
        metrics.phase(Phase.HANDLER_INVOKE, 1_000_000);
        metrics.phase(Phase.SINK_FLUSH, 300_000);
        Exposition scraped = scrape();
        assertThat(scraped.value("phase_duration_seconds_count{phase=\"handler.invoke\"," + P + "}")).isEqualTo(2.0);
        assertThat(scraped.value("phase_duration_seconds_sum{phase=\"handler.invoke\"," + P + "}")).isEqualTo(30.001);
        assertThat(scraped.value("phase_duration_seconds_bucket{le=\"30.0\",phase=\"handler.invoke\"," + P + "}")).isEqualTo(2.0);
        assertThat(scraped.value("phase_duration_seconds_bucket{le=\"10.0\",phase=\"handler.invoke\"," + P + "}")).isEqualTo(1.0);
        assertThat(scraped.value("phase_duration_seconds_count{phase=\"sink.flush\"," + P + "}")).isEqualTo(1.0);
        assertThat(scraped.series()).noneMatch(series -> series.contains("phase=\"source.read\""));
    }

    @Test
    void sinkWritesCountRowsAcceptedAndRowsWrittenApart() {
        PipelineMetrics metrics = stateless();
        metrics.sinkWritten(10, 0);
        metrics.sinkWritten(5, 15);
        Exposition scraped = scrape();
        assertThat(scraped.value("sink_rows_accepted_total{" + P + SINK + "}")).isEqualTo(15.0);
        assertThat(scraped.value("sink_rows_written_total{" + P + SINK + "}")).isEqualTo(15.0);
    }

    @Test
    void aWindowsAndTheDeadLetterSinksRowsAreCountedUnderTheirRoleAndTypeApartFromThePipelinesSink() {
        PipelineMetrics metrics = stateless();
        metrics.sinkWritten(7, 7);
        metrics.otherSinkRows("manager", "kafka", 4, 0);
        metrics.otherSinkRows("manager", "kafka", 0, 4);
        metrics.otherSinkRows("dlq", "console", 2, 1);
        Exposition scraped = scrape();
        assertThat(scraped.value("sink_rows_accepted_total{" + P + SINK + "}")).isEqualTo(7.0);
        assertThat(scraped.value("sink_rows_accepted_total{" + P + ",role=\"manager\",sink=\"kafka\"}")).isEqualTo(4.0);
        assertThat(scraped.value("sink_rows_written_total{" + P + ",role=\"manager\",sink=\"kafka\"}")).isEqualTo(4.0);
        assertThat(scraped.value("sink_rows_accepted_total{" + P + ",role=\"dlq\",sink=\"console\"}")).isEqualTo(2.0);
        assertThat(scraped.value("sink_rows_written_total{" + P + ",role=\"dlq\",sink=\"console\"}")).isEqualTo(1.0);
    }

    @Test
    void aFlushCountsOnceTimesItselfAndLeavesItsRowsInTheGauge() {
        PipelineMetrics metrics = stateless();
        metrics.sinkFlushed(40, 3_000_000);
        metrics.sinkFlushed(12, 1_000_000);
        Exposition scraped = scrape();
        assertThat(scraped.value("sink_flush_num_rows{" + P + "}")).isEqualTo(12.0);
        assertThat(scraped.types()).containsEntry("sink_flush_num_rows", "gauge");
        assertThat(scraped.value("sink_flush_count_flushes_total{" + P + OK + "}")).isEqualTo(2.0);
        assertThat(scraped.value("sink_flush_latency_seconds_count{" + P + "}")).isEqualTo(2.0);
        assertThat(scraped.value("sink_flush_latency_seconds_sum{" + P + "}")).isEqualTo(0.004);
        assertThat(scraped.value("sink_flush_latency_seconds_max{" + P + "}")).isEqualTo(0.003);
    }

    @Test
    void aSinkRetryCountsOne() {
        PipelineMetrics metrics = stateless();
        metrics.sinkRetry();
        metrics.sinkRetry();
        assertThat(scrape().value("sink_retry_count_total{" + P + SINK + "}")).isEqualTo(2.0);
    }

    @Test
    void aWindowsSinkRetryCountsUnderRoleManagerAndItsSinksType() {
        PipelineMetrics metrics = stateless();
        metrics.windowSinkRetry("postgres");
        metrics.windowSinkRetry("postgres");
        metrics.sinkRetry();
        Exposition scraped = scrape();
        assertThat(scraped.value("sink_retry_count_total{" + P + ",role=\"manager\",sink=\"postgres\"}")).isEqualTo(2.0);
        assertThat(scraped.value("sink_retry_count_total{" + P + SINK + "}")).isEqualTo(1.0);
    }

    @Test
    void aFailedSinkWriteOrFlushCountsAFlushWithResultErrorAndAFailedCommitACommitWithResultError() {
        PipelineMetrics metrics = stateful();
        metrics.sinkFlushed(3, 1_000_000);
        metrics.error(ErrorCode.SYSTEM_SINK_UNREACHABLE, Phase.SINK_FLUSH);
        metrics.error(ErrorCode.USER_SINK_KEY_NULL, Phase.SINK_WRITE);
        metrics.stateCommitted(1_000_000);
        metrics.error(ErrorCode.SYSTEM_ENGINE_FAILED, Phase.STATE_COMMIT);
        metrics.error(ErrorCode.USER_HANDLER_SQL_FAILED, Phase.HANDLER_INVOKE);
        Exposition scraped = scrape();
        assertThat(scraped.value("sink_flush_count_flushes_total{" + P + OK + "}")).isEqualTo(1.0);
        assertThat(scraped.value("sink_flush_count_flushes_total{" + P + ",result=\"error\"}")).isEqualTo(2.0);
        assertThat(scraped.value("state_commit_count_commits_total{" + P + OK + "}")).isEqualTo(1.0);
        assertThat(scraped.value("state_commit_count_commits_total{" + P + ",result=\"error\"}")).isEqualTo(1.0);
    }

    @Test
    void aProcessedBatchIsTimed() {
        PipelineMetrics metrics = stateless();
        metrics.batchProcessed(250_000_000);
        Exposition scraped = scrape();
        assertThat(scraped.value("batch_processing_latency_seconds_count{" + P + "}")).isEqualTo(1.0);
        assertThat(scraped.value("batch_processing_latency_seconds_bucket{le=\"0.1\"," + P + "}")).isZero();
        assertThat(scraped.value("batch_processing_latency_seconds_bucket{le=\"0.25\"," + P + "}")).isEqualTo(1.0);
    }

    @Test
    void errorsAreCountedByClassDomainCodeAndPhase() {
        PipelineMetrics metrics = stateless();
        metrics.error(ErrorCode.USER_HANDLER_PARSE_FAILED, Phase.HANDLER_WRITE);
        metrics.error(ErrorCode.USER_HANDLER_PARSE_FAILED, Phase.HANDLER_WRITE);
        metrics.error(ErrorCode.SYSTEM_SINK_WRITE_FAILED, Phase.SINK_FLUSH);
        Exposition scraped = scrape();
        assertThat(scraped.value("error_count_total{class=\"user\",code=\"user.handler.parse_failed\",domain=\"handler\","
                + "phase=\"handler.write\"," + P + "}")).isEqualTo(2.0);
        assertThat(scraped.value("error_count_total{class=\"system\",code=\"system.sink.write_failed\",domain=\"sink\","
                + "phase=\"sink.flush\"," + P + "}")).isEqualTo(1.0);
        assertThat(scraped.series()).filteredOn(series -> series.startsWith("error_count_total")).hasSize(2);
    }

    @Test
    void consumerLagIsOneGaugePerPartitionUpdatedInPlaceAndStampsWhenItWasObserved() {
        PipelineMetrics metrics = stateless();
        metrics.consumerLag("events", 0, 500);
        metrics.consumerLag("events", 11, 7);
        now.set(Instant.parse("2026-03-01T10:00:05.100Z"));
        metrics.consumerLag("events", 0, 20);
        metrics.consumerLag("audit", 0, 3);
        Exposition scraped = scrape();
        assertThat(scraped.value("consumer_lag_messages{partition=\"0\"," + P + ",topic=\"events\"}")).isEqualTo(20.0);
        assertThat(scraped.value("consumer_lag_messages{partition=\"11\"," + P + ",topic=\"events\"}")).isEqualTo(7.0);
        assertThat(scraped.value("consumer_lag_messages{partition=\"0\"," + P + ",topic=\"audit\"}")).isEqualTo(3.0);
        assertThat(scraped.series()).filteredOn(series -> series.startsWith("consumer_lag_messages")).hasSize(3);
        assertThat(scraped.value("consumer_lag_observed_timestamp_seconds{" + P + "}"))
                .isEqualTo((double) Instant.parse("2026-03-01T10:00:05Z").getEpochSecond());
    }

    @Test
    void aRevokedPartitionStopsShowingItsLastLagAndComesBackWhenReassigned() {
        PipelineMetrics metrics = stateless();
        metrics.consumerLag("events", 0, 500);
        metrics.consumerLag("events", 1, 9);
        metrics.partitionRevoked("events", 0);
        metrics.partitionRevoked("events", 4);
        metrics.partitionRevoked("other", 0);
        assertThat(scrape().series()).filteredOn(series -> series.startsWith("consumer_lag_messages"))
                .containsExactly("consumer_lag_messages{partition=\"1\"," + P + ",topic=\"events\"}");
        metrics.consumerLag("events", 0, 2);
        assertThat(scrape().value("consumer_lag_messages{partition=\"0\"," + P + ",topic=\"events\"}")).isEqualTo(2.0);
    }

    @Test
    void aNegativePartitionIsADefect() {
        PipelineMetrics metrics = stateless();
        assertThatThrownBy(() -> metrics.consumerLag("events", -1, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aPipelineWithAStatePathCountsAndTimesCommitsAndGaugesItsDatabase() {
        PipelineMetrics metrics = stateful();
        assertThat(scrape().value("state_commit_count_commits_total{" + P + OK + "}")).isZero();
        metrics.stateCommitted(4_000_000);
        metrics.stateDbSize(1_048_576);
        metrics.stateTableRows("agg", 24);
        metrics.stateTableRows("seen", 3);
        metrics.stateTableRows("agg", 25);
        Exposition scraped = scrape();
        assertThat(scraped.value("state_commit_count_commits_total{" + P + OK + "}")).isEqualTo(1.0);
        assertThat(scraped.value("state_commit_latency_seconds_sum{" + P + "}")).isEqualTo(0.004);
        assertThat(scraped.value("state_db_size_bytes{" + P + "}")).isEqualTo(1_048_576.0);
        assertThat(scraped.value("state_table_rows{" + P + ",table=\"agg\"}")).isEqualTo(25.0);
        assertThat(scraped.value("state_table_rows{" + P + ",table=\"seen\"}")).isEqualTo(3.0);
    }

    @Test
    void aPipelineWithoutAStatePathHasNoStateMetersAndRefusesStateReadings() {
        PipelineMetrics metrics = stateless();
        assertThat(scrape().types()).noneSatisfy((family, type) -> assertThat(family).startsWith("state_"));
        assertThatThrownBy(() -> metrics.stateCommitted(1)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> metrics.stateDbSize(1)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> metrics.stateTableRows("agg", 1)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void twoPipelinesShareARegistryApartByTheirTag() {
        try (PipelineMetrics orders = stateless(); PipelineMetrics audit = new PipelineMetrics(registry, "audit", "kafka", false, clock)) {
            orders.handlerRowsRead(1);
            audit.handlerRowsRead(5);
            Exposition scraped = scrape();
            assertThat(scraped.value("handler_rows_read_total{" + P + "}")).isEqualTo(1.0);
            assertThat(scraped.value("handler_rows_read_total{pipeline=\"audit\"}")).isEqualTo(5.0);
        }
    }

    @Test
    void aSecondPipelineOfTheSameNameIsRefusedUntilTheFirstIsClosed() {
        PipelineMetrics first = stateless();
        first.consumerLag("events", 0, 5);
        first.error(ErrorCode.SYSTEM_ENGINE_FAILED, Phase.HANDLER_INVOKE);
        assertThatThrownBy(this::stateless).isInstanceOf(IllegalStateException.class).hasMessageContaining("orders");
        first.close();
        assertThat(scrape().types()).isEmpty();
        PipelineMetrics second = stateless();
        second.consumerLag("events", 0, 1);
        assertThat(scrape().value("consumer_lag_messages{partition=\"0\"," + P + ",topic=\"events\"}")).isEqualTo(1.0);
    }

    @Test
    void recordingOnMetersThatExistAllocatesNothing() {
        PipelineMetrics metrics = stateful();
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        for (int warm = 0; warm < 20_000; warm++) {
            everyHotPathCall(metrics, warm);
        }
        long before = threads.getCurrentThreadAllocatedBytes();
        int calls = 50_000;
        for (int i = 0; i < calls; i++) {
            everyHotPathCall(metrics, i);
        }
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        // Not zero: the measurement itself and an occasional rotation of a timer's max window allocate a
        // little. One allocation per call would be tens of bytes per call.
        assertThat(allocated / calls).as("bytes allocated per round of calls, %d in all", allocated).isLessThan(1);
    }

    private static void everyHotPathCall(PipelineMetrics metrics, int i) {
        metrics.messagesRead(10, 1000, 50_000);
        metrics.handlerRowsRead(10);
        metrics.phase(Phase.HANDLER_INVOKE, 1_000_000);
        metrics.sinkWritten(10, 10);
        metrics.sinkFlushed(10, 2_000_000);
        metrics.sinkRetry();
        metrics.batchProcessed(5_000_000);
        metrics.error(ErrorCode.USER_HANDLER_PARSE_FAILED, Phase.HANDLER_WRITE);
        metrics.consumerLag("events", i & 3, i);
        metrics.stateCommitted(1_000_000);
        metrics.stateDbSize(i);
        metrics.stateTableRows("agg", i);
    }
}
