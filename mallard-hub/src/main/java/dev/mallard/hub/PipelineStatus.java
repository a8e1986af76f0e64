// SPDX-License-Identifier: Apache-2.0
package dev.mallard.hub;

import static java.util.Objects.requireNonNull;

import java.time.Instant;
import java.util.Optional;

/**
 * One hosted pipeline as the pipelines API shows it.
 *
 * @param source the source's type and what it reads, such as {@code kafka:events}
 * @param lag the Kafka consumer lag summed over the assigned partitions after the last batch; empty for another source or before a batch
 * @param messagesPerSecond messages processed per second over the last few seconds
 */
public record PipelineStatus(String name, PipelineState state, String source, Optional<Long> lag, Optional<Instant> lastBatchAt, long batches,
        long messages, long errors, double messagesPerSecond, Optional<Failure> lastError) {
    public PipelineStatus {
        requireNonNull(name, "name is null");
        requireNonNull(state, "state is null");
        requireNonNull(source, "source is null");
        requireNonNull(lag, "lag is null");
        requireNonNull(lastBatchAt, "lastBatchAt is null");
        requireNonNull(lastError, "lastError is null");
    }

    /** Why a pipeline failed: an error code of the registry and its (redacted) message. */
    public record Failure(String code, String message) {
        public Failure {
            requireNonNull(code, "code is null");
            requireNonNull(message, "message is null");
        }
    }
}
