// SPDX-License-Identifier: Apache-2.0
package dev.mallard.client;

/** Sends one sealed batch to the server and says how it went; HTTP and Flight implement it. */
interface BatchTransport extends AutoCloseable {
    /**
     * Sends the Arrow IPC stream {@code payload} (gzipped when {@code gzip}) as batch {@code batchId}. Never throws for a
     * failed send: the outcome says whether to retry.
     */
    SendOutcome send(long batchId, byte[] payload, boolean gzip) throws InterruptedException;

    /** Whether this transport wants payloads gzipped when they are sealed. */
    boolean gzipPayloads();

    /** Where batches go, for logs. */
    String target();

    @Override
    void close();
}
