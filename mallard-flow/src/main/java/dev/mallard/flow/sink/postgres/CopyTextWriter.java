// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink.postgres;

import static java.util.Objects.requireNonNull;

import java.sql.SQLException;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.VariableWidthFieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.postgresql.copy.CopyIn;

/**
 * Writes Arrow batches of text columns to a COPY in Postgres's text format: tab between columns, newline after
 * each row, {@code \N} for NULL, and backslash, tab, newline and carriage return escaped. Bytes go out in chunks,
 * never a whole batch at once.
 */
final class CopyTextWriter {
    private static final int CHUNK = 1 << 18;

    private final CopyIn copy;
    private final byte[] buffer = new byte[CHUNK];
    /** One value's bytes, copied out of its Arrow buffer. */
    private byte[] scratch = new byte[256];
    private int used;
    private long rows;

    CopyTextWriter(CopyIn copy) {
        this.copy = requireNonNull(copy, "copy is null");
    }

    void write(VectorSchemaRoot root) throws SQLException {
        List<VariableWidthFieldVector> columns = root.getFieldVectors().stream().map(vector -> {
            if (vector instanceof VariableWidthFieldVector text) {
                return text;
            }
            throw new IllegalStateException("column " + vector.getName() + " was not rendered as text: " + vector.getField().getType());
        }).toList();
        int rowCount = root.getRowCount();
        for (int row = 0; row < rowCount; row++) {
            for (int c = 0; c < columns.size(); c++) {
                if (c > 0) {
                    put((byte) '\t');
                }
                VariableWidthFieldVector column = columns.get(c);
                if (column.isNull(row)) {
                    put((byte) '\\');
                    put((byte) 'N');
                } else if (column instanceof BaseVariableWidthVector plain) {
                    // Straight from the Arrow buffer: no array per value.
                    ArrowBuf offsets = plain.getOffsetBuffer();
                    int start = offsets.getInt((long) row * BaseVariableWidthVector.OFFSET_WIDTH);
                    int end = offsets.getInt((long) (row + 1) * BaseVariableWidthVector.OFFSET_WIDTH);
                    putEscaped(plain.getDataBuffer(), start, end - start);
                } else {
                    byte[] value = column.get(row);
                    putEscaped(value, value.length);
                }
            }
            put((byte) '\n');
        }
        rows += rowCount;
    }

    private void putEscaped(ArrowBuf data, long start, int length) throws SQLException {
        if (scratch.length < length) {
            scratch = new byte[Math.max(length, 2 * scratch.length)];
        }
        data.getBytes(start, scratch, 0, length);
        putEscaped(scratch, length);
    }

    /** The value's bytes, runs without a special byte copied whole. */
    private void putEscaped(byte[] value, int length) throws SQLException {
        int from = 0;
        for (int i = 0; i < length; i++) {
            byte escaped = switch (value[i]) {
                case '\\' -> '\\';
                case '\t' -> 't';
                case '\n' -> 'n';
                case '\r' -> 'r';
                default -> 0;
            };
            if (escaped != 0) {
                putAll(value, from, i - from);
                put((byte) '\\');
                put(escaped);
                from = i + 1;
            }
        }
        putAll(value, from, length - from);
    }

    private void putAll(byte[] bytes, int offset, int length) throws SQLException {
        while (length > 0) {
            if (used == buffer.length) {
                drain();
            }
            int n = Math.min(length, buffer.length - used);
            System.arraycopy(bytes, offset, buffer, used, n);
            used += n;
            offset += n;
            length -= n;
        }
    }

    private void put(byte b) throws SQLException {
        if (used == buffer.length) {
            drain();
        }
        buffer[used++] = b;
    }

    private void drain() throws SQLException {
        if (used > 0) {
            copy.writeToCopy(buffer, 0, used);
            used = 0;
        }
    }

    /** Sends what is buffered and ends the COPY; returns the rows Postgres took. */
    long finish() throws SQLException {
        drain();
        long copied = copy.endCopy();
        if (copied != rows) {
            throw new SQLException("COPY took " + copied + " rows of the " + rows + " sent");
        }
        return copied;
    }
}
