// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.session;

import static java.util.Objects.requireNonNull;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The prepared statements a session holds, in order of last use, at most {@code capacity} of them. Past the
 * capacity the least recently used statement that no call is executing or streaming from (none leased) is given
 * up: removed here and handed back to be closed. The ids of recently given-up handles are remembered so that a
 * later use can say why the handle is gone. Every method holds this object's monitor; closing happens outside it.
 */
final class PreparedStatements {
    /** How many given-up handles are remembered for the error message; older ones get the general message. */
    static final int REMEMBERED_EVICTIONS = 1024;

    private static final class Entry {
        final AutoCloseable value;
        int leases;
        boolean closeWhenReleased;

        Entry(AutoCloseable value) {
            this.value = value;
        }
    }

    private final int capacity;
    private final LinkedHashMap<String, Entry> entries = new LinkedHashMap<>(16, 0.75f, true);
    private final LinkedHashMap<String, Boolean> evicted = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
            return size() > REMEMBERED_EVICTIONS;
        }
    };

    PreparedStatements(int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be positive");
        }
        this.capacity = capacity;
    }

    int capacity() {
        return capacity;
    }

    synchronized void add(String handle, AutoCloseable value) {
        entries.put(requireNonNull(handle, "handle is null"), new Entry(requireNonNull(value, "value is null")));
    }

    /** The statement under the handle, now the most recently used. */
    synchronized Optional<Object> find(String handle) {
        Entry entry = entries.get(handle);
        return entry == null || entry.closeWhenReleased ? Optional.empty() : Optional.of(entry.value);
    }

    /** As {@link #find}, and the statement cannot be given up until {@link #release} is called as often. */
    synchronized Optional<Object> lease(String handle) {
        Entry entry = entries.get(handle);
        if (entry == null || entry.closeWhenReleased) {
            return Optional.empty();
        }
        entry.leases++;
        return Optional.of(entry.value);
    }

    /** Ends one lease; answers the statement when the client closed it meanwhile and this was its last lease. */
    synchronized Optional<AutoCloseable> release(String handle) {
        Entry entry = entries.get(handle);
        if (entry == null) {
            return Optional.empty();
        }
        entry.leases--;
        if (entry.closeWhenReleased && entry.leases == 0) {
            entries.remove(handle);
            return Optional.of(entry.value);
        }
        return Optional.empty();
    }

    /**
     * Removes the statement the client closed; answers it to be closed now, or empty when a lease holds it (it is
     * then answered by the {@link #release} that ends its last lease) or it was not here.
     */
    synchronized Optional<AutoCloseable> remove(String handle) {
        Entry entry = entries.get(handle);
        if (entry == null || entry.closeWhenReleased) {
            return Optional.empty();
        }
        if (entry.leases > 0) {
            entry.closeWhenReleased = true;
            return Optional.empty();
        }
        entries.remove(handle);
        return Optional.of(entry.value);
    }

    /**
     * Gives up the least recently used statements that are not leased until at most {@code capacity} remain (fewer
     * are given up when the rest are leased); answers them to be closed.
     */
    synchronized List<AutoCloseable> overflow() {
        List<AutoCloseable> out = new ArrayList<>();
        Iterator<Map.Entry<String, Entry>> oldestFirst = entries.entrySet().iterator();
        while (entries.size() > capacity && oldestFirst.hasNext()) {
            Map.Entry<String, Entry> next = oldestFirst.next();
            if (next.getValue().leases == 0) {
                oldestFirst.remove();
                evicted.put(next.getKey(), Boolean.TRUE);
                out.add(next.getValue().value);
            }
        }
        return out;
    }

    /** Whether the handle was given up to keep within the capacity (among the last {@link #REMEMBERED_EVICTIONS}). */
    synchronized boolean wasEvicted(String handle) {
        return evicted.containsKey(handle);
    }

    synchronized int size() {
        return entries.size();
    }

    /** Removes every statement, answering them to be closed (the session is closing). */
    synchronized List<AutoCloseable> clear() {
        List<AutoCloseable> all = new ArrayList<>();
        entries.values().forEach(entry -> all.add(entry.value));
        entries.clear();
        evicted.clear();
        return all;
    }
}
