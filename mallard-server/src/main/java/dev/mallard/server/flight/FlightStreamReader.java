// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.flight;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/** The batches of an incoming DoPut stream as an {@link ArrowReader}, so DuckDB can scan them as they arrive. */
final class FlightStreamReader extends ArrowReader {
    private final FlightStream stream;
    private long rows;

    FlightStreamReader(BufferAllocator allocator, FlightStream stream) {
        super(allocator);
        this.stream = requireNonNull(stream, "stream is null");
    }

    @Override
    public boolean loadNextBatch() throws IOException {
        if (!stream.next()) {
            return false;
        }
        // The stream reuses its root for the next message; hand DuckDB a batch of its own.
        try (ArrowRecordBatch batch = new VectorUnloader(stream.getRoot()).getRecordBatch()) {
            loadRecordBatch(batch);
        }
        rows += stream.getRoot().getRowCount();
        return true;
    }

    long rows() {
        return rows;
    }

    @Override
    public long bytesRead() {
        return 0;
    }

    @Override
    protected void closeReadSource() {
        // The FlightStream belongs to the call; Flight closes it.
    }

    @Override
    protected Schema readSchema() {
        Schema schema = stream.getSchema();
        if (schema.getFields().stream().anyMatch(field -> field.getDictionary() != null)) {
            throw new IllegalArgumentException("dictionary-encoded columns cannot be ingested yet; send them decoded");
        }
        return schema;
    }
}
