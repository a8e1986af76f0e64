// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.datasets;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
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
 * <p>A hit takes no lock: a concurrent map's read and a recency stamp. The lock guards only the byte count and
 * eviction, on a store; no query runs under it.
 */
final class DatasetCache {
    enum Outcome {
        HIT, MISS, SHARED;

        private final byte[] label = name().toLowerCase(java.util.Locale.ROOT).getBytes(java.nio.charset.StandardCharsets.US_ASCII);

        String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }

        byte[] labelBytes() {
            return label;
        }
    }

    /**
     * A cache key: the dataset, the grain, the window the answer reports, the statement text as it runs (after the
     * access gate) and its bound values.
     */
    record Key(String dataset, String grain, Object window, String sql, List<Object> values) {
        Key(String dataset, String grain, String sql, List<Object> values) {
            this(dataset, grain, "", sql, values);
        }
    }

    /**
     * An answer's rows as JSON ({@code [...]}), how many, when its query started ({@code nanoTime}), and the
     * answer's serialised head (every field before {@code cache}), so a hit writes bytes and encodes nothing.
     */
    record Rows(byte[] json, long count, long startedNanos, byte[] head) {
        Rows(byte[] json, long count, long startedNanos) {
            this(json, count, startedNanos, new byte[0]);
        }

        Rows withHead(byte[] head) {
            return new Rows(json, count, startedNanos, head);
        }

        long bytes() {
            return json.length + head.length + 128L;
        }
    }

    record Answer(Rows rows, Outcome outcome) {}

    private final long maxBytes;
    private final Executor fills;
    private final LongSupplier nanos;
    private final Object lock = new Object();
    private final ConcurrentHashMap<Key, Stored> entries = new ConcurrentHashMap<>(64);
    private final Map<Key, CompletableFuture<Rows>> filling = new ConcurrentHashMap<>();
    private final AtomicLong evictions = new AtomicLong();
    private final AtomicLong uses = new AtomicLong();
    private long bytes;

    private static final class Stored {
        final Rows rows;
        final long expiresNanos;
        volatile long used;

        Stored(Rows rows, long expiresNanos, long used) {
            this.rows = rows;
            this.expiresNanos = expiresNanos;
            this.used = used;
        }
    }

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
        Stored stored = entries.get(key);
        if (stored != null) {
            if (stored.expiresNanos - nanos.getAsLong() > 0) {
                stored.used = uses.incrementAndGet();
                return new Answer(stored.rows, Outcome.HIT);
            }
            synchronized (lock) {
                if (entries.remove(key, stored)) {
                    bytes -= stored.rows.bytes();
                }
            }
        }
        CompletableFuture<Rows> mine = new CompletableFuture<>();
        CompletableFuture<Rows> running = filling.putIfAbsent(key, mine);
        if (running != null) {
            return new Answer(await(running), Outcome.SHARED);
        }
        // A fill may have stored this key between the look-up above and this one becoming the key's fill.
        Stored again = entries.get(key);
        if (again != null && again.expiresNanos - nanos.getAsLong() > 0) {
            filling.remove(key, mine);
            mine.complete(again.rows);
            again.used = uses.incrementAndGet();
            return new Answer(again.rows, Outcome.HIT);
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
            Stored old = entries.put(key, new Stored(rows, expiresNanos, uses.incrementAndGet()));
            if (old != null) {
                bytes -= old.rows.bytes();
            }
            bytes += rows.bytes();
            if (bytes > maxBytes) {
                evict();
            }
        }
    }

    /** Under the lock: expired entries first, then the least recently used, until the cache fits. */
    private void evict() {
        long now = nanos.getAsLong();
        List<Map.Entry<Key, Stored>> live = new ArrayList<>(entries.size());
        for (Map.Entry<Key, Stored> entry : entries.entrySet()) {
            if (entry.getValue().expiresNanos - now <= 0) {
                drop(entry);
            } else {
                live.add(entry);
            }
        }
        live.sort(Comparator.comparingLong(entry -> entry.getValue().used));
        for (Iterator<Map.Entry<Key, Stored>> it = live.iterator(); it.hasNext() && bytes > maxBytes; ) {
            drop(it.next());
        }
    }

    private void drop(Map.Entry<Key, Stored> entry) {
        if (entries.remove(entry.getKey(), entry.getValue())) {
            bytes -= entry.getValue().rows.bytes();
            evictions.incrementAndGet();
        }
    }

    long bytes() {
        synchronized (lock) {
            return bytes;
        }
    }

    int entries() {
        return entries.size();
    }

    long evictions() {
        return evictions.get();
    }

    long maxBytes() {
        return maxBytes;
    }
}
