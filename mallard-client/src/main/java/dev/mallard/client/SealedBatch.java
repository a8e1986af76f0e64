// SPDX-License-Identifier: Apache-2.0
package dev.mallard.client;

import static java.util.Objects.requireNonNull;

import java.nio.file.Path;
import java.util.Optional;

/**
 * A closed, numbered batch: an Arrow IPC stream (gzipped when {@code gzip}), held in memory or in a spill file.
 *
 * @param payload the bytes when in memory; empty when spilled
 * @param file the spill file when spilled; empty when in memory
 */
record SealedBatch(long batchId, int rows, long bytes, boolean gzip, Optional<byte[]> payload, Optional<Path> file) {
    SealedBatch {
        requireNonNull(payload, "payload is null");
        requireNonNull(file, "file is null");
        if (payload.isPresent() == file.isPresent()) {
            throw new IllegalArgumentException("a batch is either in memory or in a spill file");
        }
    }

    static SealedBatch inMemory(long batchId, int rows, boolean gzip, byte[] payload) {
        return new SealedBatch(batchId, rows, payload.length, gzip, Optional.of(payload), Optional.empty());
    }

    boolean spilled() {
        return file.isPresent();
    }
}
