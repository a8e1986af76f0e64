// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * The status strings the {@code dbsp_*} functions return, worded as DBSP for DuckDB's functions word them (its
 * API reference and extension source), so a script written for the seed reads the same answers. One place, so the
 * table in docs/views.md and the tests pin one spelling.
 */
final class ViewStatus {
    /** What {@code dbsp_spill(true)} bounds a sync to. */
    static final long DEFAULT_SPILL_BYTES = 256L * 1024 * 1024;

    private ViewStatus() {}

    static String created(String view, List<String> sources) {
        return "Created view: " + view + " (sources: " + String.join(", ", sources) + ")";
    }

    static String dropped() {
        return "Dropped";
    }

    /** {@code dropped}: the views dropped, the named one last. */
    static String droppedCascade(String view, List<String> dropped) {
        int dependents = dropped.size() - 1;
        return "Dropped " + view + (dependents > 0 ? " (and " + dependents + " dependent views)" : "");
    }

    static String syncedAll() {
        return "Synced all tracked tables";
    }

    static String synced(String table) {
        return "Synced: " + table;
    }

    static String tracking(String table, long columns) {
        return "Tracking table: " + table + " (" + columns + " columns)";
    }

    static String autoSync(boolean on) {
        return on ? "Auto-sync ENABLED: views will update on transaction commit"
                : "Auto-sync DISABLED: use dbsp_sync() for manual updates";
    }

    static String autoSyncIs(boolean on) {
        return "Auto-sync is " + (on ? "ENABLED" : "DISABLED");
    }

    static String autopersist(boolean on) {
        return on ? "Auto-persist ENABLED: views survive a clean connection reopen"
                : "Auto-persist DISABLED: views still persist (Mallard keeps them in the database file at every commit); "
                        + "use dbsp_save(path)/dbsp_load(path) to copy them elsewhere";
    }

    static String autopersistIs(boolean on) {
        return "Auto-persist is " + (on ? "ENABLED" : "DISABLED");
    }

    static String savedToFile(String path, int views) {
        return "Saved to file: " + path + " (" + views + " views)";
    }

    static String savedInDatabase(int views) {
        return "Saved views to mallard_views.views (" + views + " views; they are saved at every commit)";
    }

    static String loadedFromFile(String path, int views) {
        return "Loaded from file: " + path + " (" + views + " views)";
    }

    static String loadedFromDatabase(int views) {
        return "Loaded views from mallard_views.views (" + views + " views)";
    }

    static String spill(long bytes) {
        return bytes == 0 ? "Sync spill DISABLED: a sync uses DuckDB's own memory_limit"
                : "Sync spill ENABLED: a sync uses at most " + bytes + " bytes of memory and spills to DuckDB's temp_directory";
    }

    static String spillIs(long bytes) {
        return bytes == 0 ? "Sync spill is DISABLED" : "Sync spill is ENABLED (" + bytes + " bytes)";
    }

    static String parallel(int threads) {
        return threads == 0 ? "Parallel mode DISABLED: a sync's statements use DuckDB's own threads setting"
                : "Parallel mode ENABLED: a sync's statements run on " + threads + " DuckDB threads";
    }

    static String parallelIs(int threads) {
        return threads == 0 ? "Parallel mode is DISABLED" : "Parallel mode is ENABLED (" + threads + " threads)";
    }

    static String timing(boolean on) {
        return on ? "Timing ENABLED: each view's sync time is logged at INFO (view synced view=... took_ms=...)"
                : "Timing DISABLED";
    }

    static String timingIs(boolean on) {
        return "Timing is " + (on ? "ENABLED" : "DISABLED");
    }

    static String recursionLimit(long rounds, long seconds) {
        return "Recursion limit: " + rounds + " rounds, " + seconds + " s";
    }

    /** A boolean argument: {@code true}/{@code false} (any case), else a coded error naming the function. */
    static boolean bool(String function, String value) {
        return switch (value.toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new MallardException(ErrorCode.USER_SQL_INVALID, function + " takes true or false, got " + value);
        };
    }

    /**
     * {@code dbsp_spill}'s argument: {@code true} (256 MiB), {@code false} or {@code 0} (off), a number of bytes, or a
     * size with a unit ({@code '64MB'}, {@code '1 GiB'}: B, KB, MB, GB, KiB, MiB, GiB).
     */
    static long bytes(String value) {
        String text = value.trim().toLowerCase(Locale.ROOT);
        if (text.equals("true")) {
            return DEFAULT_SPILL_BYTES;
        }
        if (text.equals("false")) {
            return 0;
        }
        int end = 0;
        while (end < text.length() && (Character.isDigit(text.charAt(end)) || text.charAt(end) == '.')) {
            end++;
        }
        String unit = text.substring(end).trim();
        long scale = switch (unit) {
            case "", "b" -> 1L;
            case "kb" -> 1_000L;
            case "mb" -> 1_000_000L;
            case "gb" -> 1_000_000_000L;
            case "kib" -> 1L << 10;
            case "mib" -> 1L << 20;
            case "gib" -> 1L << 30;
            default -> -1L;
        };
        if (end == 0 || scale < 0) {
            throw new MallardException(ErrorCode.USER_SQL_INVALID, "dbsp_spill takes true, false, a number of bytes or a "
                    + "size such as '64MB' or '1GiB', got " + value);
        }
        try {
            return Math.round(Double.parseDouble(text.substring(0, end)) * scale);
        } catch (NumberFormatException e) {
            throw new MallardException(ErrorCode.USER_SQL_INVALID, "dbsp_spill: " + value + " is not a size", e);
        }
    }

    /** {@code dbsp_parallel}'s argument: {@code true} (the machine's processors), {@code false}, or a thread count. */
    static int threads(String value) {
        String text = value.trim().toLowerCase(Locale.ROOT);
        if (text.equals("true")) {
            return Runtime.getRuntime().availableProcessors();
        }
        if (text.equals("false")) {
            return 0;
        }
        try {
            return Integer.parseInt(text);
        } catch (NumberFormatException e) {
            throw new MallardException(ErrorCode.USER_SQL_INVALID, "dbsp_parallel takes true, false or a number of threads, "
                    + "got " + value, e);
        }
    }

    /**
     * A path given to {@code dbsp_save}/{@code dbsp_load} in SQL: relative to the working directory, without {@code ..}
     * (as the seed's), so a client of a server cannot write or read files elsewhere on it.
     */
    static Path relativePath(String function, String value) {
        Path path = Path.of(value);
        if (value.isBlank() || path.isAbsolute() || path.normalize().startsWith("..") || value.contains("..")) {
            throw new MallardException(ErrorCode.USER_SQL_INVALID, function + " takes a path relative to the working "
                    + "directory, without ..: got " + value + " (the Java API MaterializedViews.save/load takes any path)");
        }
        return path;
    }
}
