package dev.mallard.server.datasets;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The response cache shared by the datasets that opt in: answers by key, each kept one TTL from the moment its
 * query started, and all together at most {@code maxBytes} (expired entries are dropped first, then the least
 * recently used). Concurrent identical requests run one query: the first is the {@code miss}, the others wait
 * for it and are {@code shared}. The query runs detached from its callers, so it is stored even when they all
 * left; a failure is handed to every waiting caller and never stored.
 *
 * <p>The lock guards only the map's bookkeeping; no query runs under it.
 */
final class DatasetCache {
    enum Outcome {
        HIT, MISS, SHARED;

        String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** A cache key: the dataset, the grain, the statement text as it runs (after the access gate) and its bound values. */
    record Key(String dataset, String grain, String sql, List<Object> values) {}

    /** An answer's rows as JSON ({@code [...]}), how many, and when its query started ({@code nanoTime}). */
    record Rows(byte[] json, long count, long startedNanos) {
        long bytes() {
            return json.length + 128L;
        }
    }

    record Answer(Rows rows, Outcome outcome) {}

    private final long maxBytes;
    private final Executor fills;
    private final LongSupplier nanos;
    private final Object lock = new Object();
    private final LinkedHashMap<Key, Stored> entries = new LinkedHashMap<>(64, 0.75f, true);
    private final Map<Key, CompletableFuture<Rows>> filling = new ConcurrentHashMap<>();
    private final AtomicLong evictions = new AtomicLong();
    private long bytes;

    private record Stored(Rows rows, long expiresNanos) {}

    DatasetCache(long maxBytes, Executor fills, LongSupplier nanos) {
        if (maxBytes <= 0) {
            throw new IllegalArgumentException("maxBytes must be positive");
        }
        this.maxBytes = maxBytes;
        this.fills = requireNonNull(fills, "fills is null");
        this.nanos = requireNonNull(nanos, "nanos is null");
    }

    /** @param query runs the statement; called at most once per key while no live entry holds it */
    Answer get(Key key, Duration ttl, Supplier<Rows> query) {
        long now = nanos.getAsLong();
        synchronized (lock) {
            Stored stored = entries.get(key);
            if (stored != null) {
                if (stored.expiresNanos - now > 0) {
                    return new Answer(stored.rows, Outcome.HIT);
                }
                remove(key);
            }
        }
        CompletableFuture<Rows> mine = new CompletableFuture<>();
        CompletableFuture<Rows> running = filling.putIfAbsent(key, mine);
        if (running != null) {
            return new Answer(await(running), Outcome.SHARED);
        }
        synchronized (lock) {
            // A fill may have stored this key between the look-up above and this one becoming the key's fill.
            Stored stored = entries.get(key);
            if (stored != null && stored.expiresNanos - nanos.getAsLong() > 0) {
                filling.remove(key, mine);
                mine.complete(stored.rows);
                return new Answer(stored.rows, Outcome.HIT);
            }
        }
        fills.execute(() -> {
            Rows rows;
            try {
                rows = query.get();
                store(key, rows, rows.startedNanos() + ttl.toNanos());
            } catch (Throwable failure) {
                filling.remove(key, mine);
                mine.completeExceptionally(failure);
                return;
            }
            // Out of the fills before its callers hear: a request after this one finds the stored entry, or a new fill.
            filling.remove(key, mine);
            mine.complete(rows);
        });
        return new Answer(await(mine), Outcome.MISS);
    }

    private static Rows await(CompletableFuture<Rows> fill) {
        try {
            return fill.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for a dataset query", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new IllegalStateException(e.getCause());
        }
    }

    private void store(Key key, Rows rows, long expiresNanos) {
        if (rows.bytes() > maxBytes) {
            return;
        }
        synchronized (lock) {
            remove(key);
            entries.put(key, new Stored(rows, expiresNanos));
            bytes += rows.bytes();
            if (bytes > maxBytes) {
                long now = nanos.getAsLong();
                for (Iterator<Map.Entry<Key, Stored>> it = entries.entrySet().iterator(); it.hasNext() && bytes > maxBytes; ) {
                    Map.Entry<Key, Stored> entry = it.next();
                    if (entry.getValue().expiresNanos - now <= 0) {
                        bytes -= entry.getValue().rows.bytes();
                        it.remove();
                        evictions.incrementAndGet();
                    }
                }
                for (Iterator<Map.Entry<Key, Stored>> it = entries.entrySet().iterator(); it.hasNext() && bytes > maxBytes; ) {
                    Map.Entry<Key, Stored> entry = it.next();
                    bytes -= entry.getValue().rows.bytes();
                    it.remove();
                    evictions.incrementAndGet();
                }
            }
        }
    }

    private void remove(Key key) {
        Stored old = entries.remove(key);
        if (old != null) {
            bytes -= old.rows.bytes();
        }
    }

    long bytes() {
        synchronized (lock) {
            return bytes;
        }
    }

    int entries() {
        synchronized (lock) {
            return entries.size();
        }
    }

    long evictions() {
        return evictions.get();
    }

    long maxBytes() {
        return maxBytes;
    }
}
