// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlText;
import java.sql.Connection;
import java.util.List;

/**
 * What a sync may use of the database ({@code dbsp_spill}, {@code dbsp_parallel}) and whether it logs its views'
 * timings ({@code DBSP_TIMING}). DuckDB's {@code memory_limit} and {@code threads} are settings of the database
 * instance, not of a connection, so a sync sets them when it starts and puts the previous values back when it ends:
 * a statement another connection runs during the sync works under the same bound.
 */
final class SyncSettings {
    /** The environment variable that turns timing on for every attachment ({@code 1}, {@code true} or {@code on}). */
    static final String TIMING_ENVIRONMENT = "DBSP_TIMING";
    /** The smallest spill bound accepted: below it DuckDB cannot hold a sync's hash tables' first partitions. */
    static final long MIN_SPILL_BYTES = 16L * 1024 * 1024;

    private volatile long spillBytes;
    private volatile int threads;
    private volatile boolean timing;

    SyncSettings(String timingEnvironment) {
        this.timing = timingEnvironment != null && List.of("1", "true", "on", "yes")
                .contains(timingEnvironment.trim().toLowerCase(java.util.Locale.ROOT));
    }

    void spill(long bytes) {
        if (bytes != 0 && bytes < MIN_SPILL_BYTES) {
            throw new MallardException(ErrorCode.USER_SQL_INVALID, "dbsp_spill needs at least " + MIN_SPILL_BYTES
                    + " bytes (16 MiB), or 0 / false for DuckDB's own memory_limit; got " + bytes);
        }
        this.spillBytes = bytes;
    }

    long spillBytes() {
        return spillBytes;
    }

    void threads(int threads) {
        if (threads < 0 || threads > 1024) {
            throw new MallardException(ErrorCode.USER_SQL_INVALID, "dbsp_parallel takes 0 to 1024 threads (0 / false: "
                    + "DuckDB's own threads setting), got " + threads);
        }
        this.threads = threads;
    }

    int threads() {
        return threads;
    }

    void timing(boolean on) {
        this.timing = on;
    }

    boolean timing() {
        return timing;
    }

    /** Sets the bounds for one sync on the views' connection; closing it restores the database's own values. */
    Applied apply(Connection connection) {
        long bytes = spillBytes;
        int count = threads;
        String memory = null;
        String previousThreads = null;
        if (bytes > 0) {
            memory = Sql.strings(connection, "SELECT current_setting('memory_limit')").get(0);
            Sql.update(connection, "SET memory_limit = '" + bytes + "B'");
        }
        if (count > 0) {
            previousThreads = Sql.strings(connection, "SELECT current_setting('threads')::VARCHAR").get(0);
            Sql.update(connection, "SET threads = " + count);
        }
        return new Applied(connection, memory, previousThreads);
    }

    record Applied(Connection connection, String memory, String threads) implements AutoCloseable {
        @Override
        public void close() {
            if (memory != null) {
                // DuckDB shows the limit rounded (18.8 GiB): the default comes back exactly by RESET, a limit of the
                // user's by its shown value.
                Sql.update(connection, "RESET memory_limit");
                if (!memory.equals(Sql.strings(connection, "SELECT current_setting('memory_limit')").get(0))) {
                    Sql.update(connection, "SET memory_limit = " + SqlText.literal(memory));
                }
            }
            if (threads != null) {
                Sql.update(connection, "SET threads = " + Long.parseLong(threads));
            }
        }
    }
}
