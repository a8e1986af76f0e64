// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.rows;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.server.config.AccessMode;
import dev.mallard.server.session.ResultStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.util.TransferPair;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;

/**
 * DazzleDuck's {@code x-dd-limit} and {@code x-dd-offset}: on a READ_ONLY server the rows of a query from the
 * offset-th on, at most limit of them, as the query with {@code LIMIT limit OFFSET offset} around it answers. The
 * window is cut from the result as it streams, so no SQL is rewritten. A COMPLETE server refuses them, as
 * DazzleDuck's does. Both listeners read them: HTTP from headers or parameters, Flight from call headers.
 *
 * @param limit rows at most; negative for no limit
 * @param offset rows skipped first
 */
public record RowWindow(long limit, long offset) {
    public static final String LIMIT = "x-dd-limit";
    public static final String OFFSET = "x-dd-offset";
    public static final RowWindow ALL = new RowWindow(-1, 0);

    public static RowWindow resolve(Optional<String> limit, Optional<String> offset, AccessMode mode) {
        long rows = limit.map(value -> whole(LIMIT, value)).orElse(-1L);
        long skipped = offset.map(value -> whole(OFFSET, value)).orElse(0L);
        if (rows <= 0 && skipped <= 0) {
            return ALL;
        }
        if (mode != AccessMode.READ_ONLY) {
            String header = rows > 0 ? LIMIT : OFFSET;
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "Limit header '" + header + "' is not supported by this producer: this"
                    + " server is " + mode + " and applies " + LIMIT + " and " + OFFSET + " on READ_ONLY servers only; put LIMIT/OFFSET in the query");
        }
        return new RowWindow(rows > 0 ? rows : -1, Math.max(0, skipped));
    }

    private static long whole(String name, String value) {
        try {
            return Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, name + " must be a whole number of rows, not '" + value + "'");
        }
    }

    /** Batches as a writer reads them. */
    public interface Rows extends AutoCloseable {
        VectorSchemaRoot root() throws IOException;

        DictionaryProvider dictionaries();

        boolean loadNextBatch() throws IOException;

        @Override
        void close();
    }

    /** The stream's rows within this window; the stream stays the caller's to close. */
    public Rows over(ResultStream stream, BufferAllocator allocator) {
        requireNonNull(stream, "stream is null");
        if (this.equals(ALL)) {
            return new Rows() {
                @Override
                public VectorSchemaRoot root() throws IOException {
                    return stream.root();
                }

                @Override
                public DictionaryProvider dictionaries() {
                    return stream.reader();
                }

                @Override
                public boolean loadNextBatch() throws IOException {
                    return stream.loadNextBatch();
                }

                @Override
                public void close() {}
            };
        }
        return new Windowed(stream, requireNonNull(allocator, "allocator is null"), limit, offset);
    }

    /** Moves each batch's rows inside the window into a root of its own. */
    private static final class Windowed implements Rows {
        private final ResultStream stream;
        private final BufferAllocator allocator;
        private final long limit;
        private long toSkip;
        private long emitted;
        private VectorSchemaRoot target;
        private List<TransferPair> transfers;

        Windowed(ResultStream stream, BufferAllocator allocator, long limit, long offset) {
            this.stream = stream;
            this.allocator = allocator;
            this.limit = limit;
            this.toSkip = offset;
        }

        @Override
        public VectorSchemaRoot root() throws IOException {
            if (target == null) {
                VectorSchemaRoot source = stream.root();
                transfers = new ArrayList<>();
                List<FieldVector> vectors = new ArrayList<>();
                for (FieldVector vector : source.getFieldVectors()) {
                    TransferPair pair = vector.getTransferPair(allocator);
                    transfers.add(pair);
                    vectors.add((FieldVector) pair.getTo());
                }
                target = new VectorSchemaRoot(source.getSchema().getFields(), vectors, 0);
            }
            return target;
        }

        @Override
        public DictionaryProvider dictionaries() {
            return stream.reader();
        }

        @Override
        public boolean loadNextBatch() throws IOException {
            VectorSchemaRoot out = root();
            while (limit < 0 || emitted < limit) {
                if (!stream.loadNextBatch()) {
                    return false;
                }
                int count = stream.root().getRowCount();
                int skip = (int) Math.min(count, toSkip);
                toSkip -= skip;
                long take = count - skip;
                if (limit >= 0) {
                    take = Math.min(take, limit - emitted);
                }
                if (take == 0) {
                    continue;
                }
                for (TransferPair pair : transfers) {
                    pair.splitAndTransfer(skip, (int) take);
                }
                out.setRowCount((int) take);
                emitted += take;
                return true;
            }
            return false;
        }

        @Override
        public void close() {
            if (target != null) {
                target.close();
            }
        }
    }
}
