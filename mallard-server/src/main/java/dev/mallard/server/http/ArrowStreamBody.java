package dev.mallard.server.http;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.server.session.ResultStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import org.apache.arrow.compression.CommonsCompressionFactory;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.compression.CompressionCodec;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.compression.NoCompressionCodec;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.ipc.WriteChannel;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.IpcOption;
import org.apache.arrow.vector.ipc.message.MessageSerializer;

/**
 * A result as an Arrow IPC stream body. With compression, record batches are compressed on the compressing threads
 * while the request's thread reads the next batches from DuckDB and writes the compressed ones, in order: one thread
 * compressing batch after batch was most of an HTTP Arrow read's time. At most {@code inFlight} batches wait.
 */
final class ArrowStreamBody {
    /**
     * ZSTD's level. Level 1 rather than Arrow's default 3: on 10M rows of integers, doubles, text and timestamps it
     * wrote 79.8 MB instead of 82.1 MB in 1.5-1.8 s instead of 1.9-2.1 s (one thread, curl as the client).
     */
    static final int ZSTD_LEVEL = 1;

    private final ExecutorService compressors;
    private final int inFlight;

    /** @param inFlight batches read from DuckDB and not yet written, at least 1 */
    ArrowStreamBody(ExecutorService compressors, int inFlight) {
        this.compressors = requireNonNull(compressors, "compressors is null");
        if (inFlight < 1) {
            throw new IllegalArgumentException("inFlight must be at least 1, was " + inFlight);
        }
        this.inFlight = inFlight;
    }

    void write(ResultStream rows, OutputStream out, CompressionUtil.CodecType compression) throws IOException {
        VectorSchemaRoot root = rows.root();
        boolean dictionaries = root.getSchema().getFields().stream().anyMatch(field -> field.getDictionary() != null);
        if (compression == CompressionUtil.CodecType.NO_COMPRESSION || dictionaries || root.getFieldVectors().isEmpty()) {
            // Nothing to compress, or dictionary batches, which Arrow's own writer keeps in step with the record batches.
            writeInOneThread(rows, root, out, compression);
            return;
        }
        CompressionCodec codec = CommonsCompressionFactory.INSTANCE.createCodec(compression, ZSTD_LEVEL);
        BufferAllocator allocator = root.getFieldVectors().get(0).getAllocator();
        WriteChannel channel = new WriteChannel(Channels.newChannel(out));
        MessageSerializer.serialize(channel, root.getSchema(), IpcOption.DEFAULT);
        Deque<Future<ArrowRecordBatch>> pending = new ArrayDeque<>();
        try {
            while (rows.loadNextBatch()) {
                // Retains the batch's buffers: the next loadNextBatch imports new ones instead of overwriting these.
                ArrowRecordBatch batch = new VectorUnloader(root).getRecordBatch();
                try {
                    pending.add(compressors.submit(() -> compressed(batch, codec, allocator)));
                } catch (RejectedExecutionException e) {
                    batch.close();
                    throw new MallardException(ErrorCode.SYSTEM_INTERNAL, "the server is stopping; the result was cut short", e);
                }
                if (pending.size() >= inFlight) {
                    writeOldest(pending, channel);
                }
            }
            while (!pending.isEmpty()) {
                writeOldest(pending, channel);
            }
            ArrowStreamWriter.writeEndOfStream(channel, IpcOption.DEFAULT);
        } finally {
            discard(pending);
        }
    }

    private static void writeInOneThread(ResultStream rows, VectorSchemaRoot root, OutputStream out, CompressionUtil.CodecType compression)
            throws IOException {
        try (ArrowStreamWriter writer = new ArrowStreamWriter(root, rows.reader(), Channels.newChannel(out), IpcOption.DEFAULT,
                compression == CompressionUtil.CodecType.NO_COMPRESSION ? NoCompressionCodec.Factory.INSTANCE : CommonsCompressionFactory.INSTANCE,
                compression, Optional.of(ZSTD_LEVEL))) {
            writer.start();
            while (rows.loadNextBatch()) {
                writer.writeBatch();
            }
            writer.end();
        }
    }

    /** The batch with each buffer compressed (as Arrow's writer would), the uncompressed batch released. */
    private static ArrowRecordBatch compressed(ArrowRecordBatch batch, CompressionCodec codec, BufferAllocator allocator) {
        try (batch) {
            List<ArrowBuf> buffers = new ArrayList<>(batch.getBuffers().size());
            try {
                for (ArrowBuf buffer : batch.getBuffers()) {
                    // compress releases the reference it is given; the batch keeps its own until it closes.
                    buffer.getReferenceManager().retain();
                    buffers.add(codec.compress(allocator, buffer));
                }
            } catch (RuntimeException e) {
                buffers.forEach(ArrowBuf::close);
                throw e;
            }
            return new ArrowRecordBatch(batch.getLength(), batch.getNodes(), buffers, CompressionUtil.createBodyCompression(codec),
                    batch.getVariadicBufferCounts(), true, false);
        }
    }

    private static void writeOldest(Deque<Future<ArrowRecordBatch>> pending, WriteChannel channel) throws IOException {
        try (ArrowRecordBatch batch = await(pending.removeFirst())) {
            MessageSerializer.serialize(channel, batch, IpcOption.DEFAULT);
        }
    }

    private static ArrowRecordBatch await(Future<ArrowRecordBatch> batch) {
        try {
            return batch.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new MallardException(ErrorCode.SYSTEM_INTERNAL, "interrupted while compressing an Arrow record batch", e);
        } catch (ExecutionException e) {
            throw new MallardException(ErrorCode.SYSTEM_INTERNAL, "compressing an Arrow record batch failed: " + e.getCause(), e.getCause());
        }
    }

    /** Releases the batches of a body that ended early (the client went away, or DuckDB failed). */
    private static void discard(Deque<Future<ArrowRecordBatch>> pending) {
        boolean interrupted = false;
        for (Future<ArrowRecordBatch> batch : pending) {
            while (true) {
                try {
                    batch.get().close();
                    break;
                } catch (InterruptedException e) {
                    // A compression takes milliseconds; its buffers are released before the interrupt is passed on.
                    interrupted = true;
                } catch (ExecutionException e) {
                    // Its buffers were released when it failed.
                    break;
                }
            }
        }
        pending.clear();
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
