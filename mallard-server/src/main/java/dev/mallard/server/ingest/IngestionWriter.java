// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.ingest;

import static java.util.Objects.requireNonNull;

import java.nio.file.Path;
import java.util.List;

/**
 * Where a queue's flushes go: the files are written and registered so that, when {@link #write} returns, they are
 * durable and readers see all of a flush or none of it. The Parquet warehouse ({@link WarehouseWriter}) is the one that
 * runs here; a DuckLake writer (files registered with {@code ducklake_add_data_files}, watermarks inserted in the same
 * transaction) would be a second, but the ducklake extension cannot be installed on this machine.
 */
interface IngestionWriter extends AutoCloseable {
    /** The registrations committed so far (after a restart: those the crash left, each made visible). */
    List<CommitLog.Commit> recovered();

    /** Writes, registers and makes visible one flush; when it returns the flush is committed. */
    CommitLog.Commit write(List<Received> batches) throws Exception;

    @Override
    void close();

    /**
     * One batch received and spooled, waiting to be written.
     *
     * @param spool the Arrow IPC stream as received, in the queue's temp directory
     * @param producer the {@code x-dd-producer-id}, empty when none was given
     * @param batchId the {@code x-dd-producer-batch-id}, {@code -1} when none was given
     * @param shape how the batch is laid out; only batches of one shape share a flush
     */
    record Received(Path spool, String producer, long batchId, long bytes, Shape shape) {
        public Received {
            requireNonNull(spool, "spool is null");
            requireNonNull(producer, "producer is null");
            requireNonNull(shape, "shape is null");
        }

        boolean deduplicated() {
            return !producer.isEmpty() && batchId >= 0;
        }
    }

    /** A batch's partition columns, sort order and file format (the queue's, or the request's headers). */
    record Shape(List<String> partition, List<String> sortOrder, String format) {
        public Shape {
            partition = List.copyOf(partition);
            sortOrder = List.copyOf(sortOrder);
            requireNonNull(format, "format is null");
        }
    }
}
