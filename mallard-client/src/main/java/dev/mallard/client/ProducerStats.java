// SPDX-License-Identifier: Apache-2.0
package dev.mallard.client;

/**
 * A producer's counters.
 *
 * @param rowsAccepted rows taken by {@code addRow}/{@code send}
 * @param rowsRefused rows refused with {@link ProducerFullException}
 * @param batchesSealed batches closed and numbered
 * @param batchesAcknowledged batches the server acknowledged (a resend it recognised counts once)
 * @param rowsAcknowledged rows in the acknowledged batches
 * @param batchesRejected batches the server refused for good (4xx other than 401/408/429), dropped
 * @param retries attempts that failed and were retried
 * @param busyAnswers answers that asked to slow down (HTTP 429, Flight RESOURCE_EXHAUSTED)
 * @param batchesSpilled batches written to the spill directory
 * @param batchesLost batches neither acknowledged nor spilled when the producer closed
 * @param pendingBatches batches waiting to be sent now
 * @param bufferedBytes bytes of batches waiting in memory, and of the open batch
 * @param spilledBytes bytes of batches waiting in the spill directory
 */
public record ProducerStats(
        long rowsAccepted,
        long rowsRefused,
        long batchesSealed,
        long batchesAcknowledged,
        long rowsAcknowledged,
        long batchesRejected,
        long retries,
        long busyAnswers,
        long batchesSpilled,
        long batchesLost,
        long pendingBatches,
        long bufferedBytes,
        long spilledBytes) {}
