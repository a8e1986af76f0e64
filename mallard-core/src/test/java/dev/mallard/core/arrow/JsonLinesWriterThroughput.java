// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.arrow;

import java.io.OutputStream;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;

/**
 * A rough throughput check, not a benchmark and not a test: exports five million rows and writes them as JSON
 * lines to a stream that discards them, printing rows per second end to end and for each of the two parts
 * (DuckDB running the query and exporting Arrow batches; JsonLinesWriter writing them). Run with the test classpath and {@code --add-opens=java.base/java.nio=ALL-UNNAMED}.
 */
public final class JsonLinesWriterThroughput {
    private static final String QUERY = "SELECT i, i*1.5 AS d, 'city' || (i%100) AS s,"
            + " TIMESTAMPTZ '2020-01-01' + to_seconds(i) AS t FROM range(5000000) r(i)";
    private static final int BATCH_ROWS = 64 * 1024;

    private JsonLinesWriterThroughput() {}

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        try (Connection connection = DriverManager.getConnection("jdbc:duckdb:");
                BufferAllocator allocator = new RootAllocator()) {
            for (int round = 1; round <= rounds; round++) {
                CountingNullStream out = new CountingNullStream();
                JsonLinesWriter writer = new JsonLinesWriter(out);
                long rows = 0;
                long exportNanos = 0;
                long writeNanos = 0;
                long start = System.nanoTime();
                try (Statement statement = connection.createStatement();
                        ResultSet rs = statement.executeQuery(QUERY);
                        ArrowReader reader = ArrowExport.export(rs, allocator, BATCH_ROWS)) {
                    exportNanos += System.nanoTime() - start;
                    while (true) {
                        long t0 = System.nanoTime();
                        boolean more = reader.loadNextBatch();
                        long t1 = System.nanoTime();
                        exportNanos += t1 - t0;
                        if (!more) {
                            break;
                        }
                        rows += writer.write(reader.getVectorSchemaRoot(), reader);
                        writeNanos += System.nanoTime() - t1;
                    }
                    long t2 = System.nanoTime();
                    writer.flush();
                    writeNanos += System.nanoTime() - t2;
                }
                long totalNanos = System.nanoTime() - start;
                System.out.printf("round %d: %,.0f rows/s end to end (query and export %,.0f rows/s, JSON writing %,.0f rows/s);"
                                + " %,d rows, %,.1f MB, %.0f bytes/row%n",
                        round, rows * 1e9 / totalNanos, rows * 1e9 / exportNanos, rows * 1e9 / writeNanos, rows,
                        out.bytes / 1e6, (double) out.bytes / rows);
            }
        }
    }

    /** Discards what it is given and counts the bytes. */
    private static final class CountingNullStream extends OutputStream {
        long bytes;

        @Override
        public void write(int b) {
            bytes++;
        }

        @Override
        public void write(byte[] b, int off, int len) {
            bytes += len;
        }
    }
}
