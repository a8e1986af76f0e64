package dev.mallard.server.session;

import static java.util.Objects.requireNonNull;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Prepared statements a client closed, kept by their SQL text so that the session's next prepare of the same text
 * skips DuckDB's parse, bind and plan (the JDBC driver prepares every statement it runs, and closes it after). An
 * entry is good only while no statement without rows (a write, DDL, SET or USE) has run in any session since it was
 * prepared: {@code epoch} counts those, and an entry of another epoch is closed instead of reused. The least recently
 * kept entries beyond the capacity are closed. Not thread-safe: the session calls it under its lock.
 */
final class IdleStatements implements AutoCloseable {
    private record Entry(long epoch, AutoCloseable statement) {}

    private final int capacity;
    private final Map<String, Entry> entries = new LinkedHashMap<>();

    IdleStatements(int capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity must not be negative, was " + capacity);
        }
        this.capacity = capacity;
    }

    /** Keeps a statement prepared in {@code preparedAt}; it is closed at once when that is not {@code epoch}. */
    void keep(String sql, long preparedAt, AutoCloseable statement, long epoch) {
        requireNonNull(sql, "sql is null");
        requireNonNull(statement, "statement is null");
        if (preparedAt != epoch || capacity == 0) {
            closeQuietly(statement);
            return;
        }
        Entry replaced = entries.remove(sql);
        if (replaced != null) {
            closeQuietly(replaced.statement());
        }
        entries.put(sql, new Entry(preparedAt, statement));
        Iterator<Entry> oldest = entries.values().iterator();
        while (entries.size() > capacity) {
            closeQuietly(oldest.next().statement());
            oldest.remove();
        }
    }

    /** The statement kept for this text in this epoch, taken out; entries of older epochs are closed on the way. */
    <T> Optional<T> take(String sql, Class<T> type, long epoch) {
        Entry entry = entries.remove(sql);
        if (entry != null && entry.epoch() == epoch && type.isInstance(entry.statement())) {
            return Optional.of(type.cast(entry.statement()));
        }
        if (entry != null) {
            closeQuietly(entry.statement());
        }
        entries.values().removeIf(stale -> {
            if (stale.epoch() == epoch) {
                return false;
            }
            closeQuietly(stale.statement());
            return true;
        });
        return Optional.empty();
    }

    int size() {
        return entries.size();
    }

    @Override
    public void close() {
        entries.values().forEach(entry -> closeQuietly(entry.statement()));
        entries.clear();
    }

    private static void closeQuietly(AutoCloseable statement) {
        try {
            statement.close();
        } catch (Exception e) {
            // A prepared statement that cannot close holds nothing the connection's close does not free.
        }
    }
}
