// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.arrow.ArrowExport;
import dev.mallard.core.arrow.JsonLinesWriter;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.io.OutputStream;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;

/** Prints each result row as one JSON object per line (the default sink, and {@code dev invoke}'s output). */
public final class ConsoleSink implements Sink {
    private static final int BATCH_ROWS = 8192;

    private final JsonLinesWriter writer;
    private final BufferAllocator allocator;

    public ConsoleSink(OutputStream out, BufferAllocator allocator) {
        this.writer = new JsonLinesWriter(requireNonNull(out, "out is null"));
        this.allocator = requireNonNull(allocator, "allocator is null");
    }

    @Override
    public void write(ResultTable batch) {
        try (Statement statement = batch.connection().createStatement();
                ResultSet rows = statement.executeQuery("SELECT * FROM " + batch.name());
                ArrowReader reader = ArrowExport.export(rows, allocator, BATCH_ROWS)) {
            writer.writeAll(reader);
        } catch (SQLException | java.io.IOException e) {
            throw new MallardException(ErrorCode.SYSTEM_SINK_WRITE_FAILED, "console sink: cannot read the batch: " + e.getMessage(), e);
        }
    }

    @Override
    public void flush() {
        try {
            writer.flush();
        } catch (java.io.IOException e) {
            throw new MallardException(ErrorCode.SYSTEM_SINK_WRITE_FAILED, "console sink: cannot write to stdout: " + e.getMessage(), e);
        }
    }
}
