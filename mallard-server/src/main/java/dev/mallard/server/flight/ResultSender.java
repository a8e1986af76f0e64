// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.flight;

import dev.mallard.server.session.ResultStream;
import java.io.IOException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightProducer.ServerStreamListener;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Sends a result to a DoGet listener one batch at a time: the next batch is read from DuckDB only once the client's
 * transport is ready for it, so a slow client holds back DuckDB instead of filling the server's memory.
 */
final class ResultSender {
    private ResultSender() {}

    /** What a stream sent: rows, and the bytes of its batches' Arrow buffers (what went to gRPC, before framing). */
    record Sent(long rows, long bytes) {}

    static Sent send(ResultStream result, ServerStreamListener listener) throws IOException {
        return send(result, listener, () -> {}, () -> false);
    }

    /**
     * As {@link #send(ResultStream, ServerStreamListener)}, also running {@code onClientCancel} when the client
     * cancels the call, and ending the stream with CANCELLED before the next batch once {@code cancelled} says so.
     */
    static Sent send(ResultStream result, ServerStreamListener listener, Runnable onClientCancel, BooleanSupplier cancelled) throws IOException {
        try (dev.mallard.server.rows.RowWindow.Rows rows = dev.mallard.server.rows.RowWindow.ALL.over(result, null)) {
            return send(rows, listener, onClientCancel, cancelled);
        }
    }

    /** As {@link #send(ResultStream, ServerStreamListener, Runnable, BooleanSupplier)}, for the rows of a window of a result. */
    static Sent send(dev.mallard.server.rows.RowWindow.Rows result, ServerStreamListener listener, Runnable onClientCancel, BooleanSupplier cancelled)
            throws IOException {
        Semaphore ready = new Semaphore(0);
        listener.setOnReadyHandler(ready::release);
        listener.setOnCancelHandler(() -> {
            ready.release();
            onClientCancel.run();
        });
        VectorSchemaRoot root = result.root();
        // The batch's buffers go to gRPC without a copy; the next loadNextBatch imports new buffers rather than
        // overwriting these, and the message keeps its references until it is written.
        listener.setUseZeroCopy(true);
        if (!DictionaryDecoding.needed(root.getSchema())) {
            listener.start(root);
            return stream(result, listener, ready, cancelled, root, () -> root.getRowCount());
        }
        BufferAllocator allocator = root.getFieldVectors().get(0).getAllocator();
        try (VectorSchemaRoot decoded = DictionaryDecoding.target(root, result.dictionaries(), allocator)) {
            listener.start(decoded);
            return stream(result, listener, ready, cancelled, decoded, () -> {
                DictionaryDecoding.fill(root, result.dictionaries(), decoded);
                return decoded.getRowCount();
            });
        }
    }

    /** Loads each batch when the client is ready, prepares it ({@code batch} answers its row count) and sends it. */
    private static Sent stream(dev.mallard.server.rows.RowWindow.Rows result, ServerStreamListener listener, Semaphore ready, BooleanSupplier cancelled,
            VectorSchemaRoot sent, java.util.function.IntSupplier batch) throws IOException {
        long rows = 0;
        long bytes = 0;
        while (!listener.isCancelled()) {
            if (cancelled.getAsBoolean()) {
                listener.error(CallStatus.CANCELLED.withDescription("the query was cancelled on request (CancelFlightInfo) while its "
                        + "result was being sent").toRuntimeException());
                return new Sent(rows, bytes);
            }
            if (!awaitReady(listener, ready)) {
                break;
            }
            if (!result.loadNextBatch()) {
                break;
            }
            rows += batch.getAsInt();
            for (org.apache.arrow.vector.FieldVector vector : sent.getFieldVectors()) {
                bytes += vector.getBufferSize();
            }
            listener.putNext();
        }
        if (!listener.isCancelled()) {
            listener.completed();
        }
        return new Sent(rows, bytes);
    }

    private static boolean awaitReady(ServerStreamListener listener, Semaphore ready) {
        while (!listener.isReady()) {
            if (listener.isCancelled()) {
                return false;
            }
            try {
                // The ready handler wakes us; the timeout only guards against a missed signal.
                ready.tryAcquire(50, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }
}
