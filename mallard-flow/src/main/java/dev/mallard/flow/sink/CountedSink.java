// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink;

import static java.util.Objects.requireNonNull;

/**
 * A sink whose rows are counted: those handed to it when written, those delivered when its flush returns (the
 * {@code sink_rows_accepted} and {@code sink_rows_written} of a window's or the dead-letter sink).
 */
public final class CountedSink extends ForwardingSink {
    /** Told the rows of each write, then of each flush that returned. */
    public interface Rows {
        void counted(long accepted, long written);
    }

    private final Rows rows;
    private long unflushed;

    public CountedSink(Sink sink, Rows rows) {
        super(sink);
        this.rows = requireNonNull(rows, "rows is null");
    }

    @Override
    public void write(ResultTable batch) {
        sink.write(batch);
        unflushed += batch.rows();
        rows.counted(batch.rows(), 0);
    }

    @Override
    public void flush() {
        sink.flush();
        long delivered = unflushed;
        unflushed = 0;
        if (delivered > 0) {
            rows.counted(0, delivered);
        }
    }
}
