package dev.mallard.flow.sink.postgres;

import static java.util.Objects.requireNonNull;

import java.sql.SQLException;
import java.util.List;
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
                } else {
                    putEscaped(column.get(row));
                }
            }
            put((byte) '\n');
        }
        rows += rowCount;
    }

    private void putEscaped(byte[] value) throws SQLException {
        for (byte b : value) {
            switch (b) {
                case '\\' -> {
                    put((byte) '\\');
                    put((byte) '\\');
                }
                case '\t' -> {
                    put((byte) '\\');
                    put((byte) 't');
                }
                case '\n' -> {
                    put((byte) '\\');
                    put((byte) 'n');
                }
                case '\r' -> {
                    put((byte) '\\');
                    put((byte) 'r');
                }
                default -> put(b);
            }
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
