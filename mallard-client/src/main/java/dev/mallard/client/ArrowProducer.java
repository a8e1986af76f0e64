// SPDX-License-Identifier: Apache-2.0
package dev.mallard.client;

import java.time.Duration;
import java.util.List;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Pushes rows of one Arrow schema into one ingestion queue. Rows are gathered into batches (by rows, bytes and time,
 * see {@link ProducerOptions}); each batch gets the next number of this producer's batch sequence and is sent, in
 * order, one at a time, with the producer id and that number, so a batch sent again after a timeout, a restart or a
 * replay from the spill directory is written once by the server. Safe for several threads.
 *
 * <p>Implementations: {@link HttpArrowProducer} ({@code POST /v1/ingest}) and {@link FlightArrowProducer}
 * (Flight {@code DoPut} of a {@code CommandStatementIngest} with the {@code ingestion_queue} option).
 */
public interface ArrowProducer extends AutoCloseable {
    /** The schema every row must have. */
    Schema schema();

    /** The id sent as {@code x-dd-producer-id} with every batch. */
    String producerId();

    /**
     * Adds one row, its values in schema order (see {@link ProducerOptions} for the Java type each Arrow type takes).
     *
     * @throws ProducerFullException when the producer's buffer is full and it refuses, or blocked longer than allowed
     * @throws IllegalStateException after {@link #close()}
     */
    void addRow(Object... values);

    /** Adds one row from a list of values in schema order. */
    default void addRow(List<?> values) {
        addRow(values.toArray());
    }

    /**
     * Adds every row of {@code rows}, whose schema must equal {@link #schema()}; the rows are copied, so the caller
     * keeps ownership of {@code rows}. Any Arrow type the schema holds can be sent this way.
     */
    void send(VectorSchemaRoot rows);

    /**
     * Closes the open batch and waits, at most {@code timeout}, until every batch closed so far has been answered
     * (acknowledged, or rejected as {@link ProducerStats#batchesRejected()} counts).
     *
     * @return true when all were answered within the timeout
     */
    boolean flush(Duration timeout) throws InterruptedException;

    /** Counters since this producer was created. */
    ProducerStats stats();

    /**
     * Sends what is buffered, waiting at most {@link ProducerOptions#closeTimeout()}; batches still unsent then stay in
     * the spill directory (replayed by the next producer with the same id) or, without one, are counted as
     * {@link ProducerStats#batchesLost()}.
     */
    @Override
    void close();
}
