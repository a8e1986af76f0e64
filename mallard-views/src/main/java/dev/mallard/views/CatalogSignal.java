package dev.mallard.views;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Within this JVM, whether a database's view catalog may have changed since an attachment last read it, known
 * without a query. Every attachment of one database shares the signal of its catalog's instance id; one that
 * changes the catalog marks the signal changing before its transaction writes and counts the change once the
 * transaction ended. A DuckDB file is open for writing in one process only, so no other process changes the
 * catalog while this one holds it. A false alarm (a rolled-back change, two databases copied from one file)
 * only makes a writer poll.
 */
final class CatalogSignal {
    private static final ConcurrentHashMap<String, CatalogSignal> SIGNALS = new ConcurrentHashMap<>();

    private final AtomicLong changes = new AtomicLong();
    private final AtomicInteger changing = new AtomicInteger();

    private CatalogSignal() {}

    /** The signal of the catalog with that instance id. */
    static CatalogSignal of(String instance) {
        return SIGNALS.computeIfAbsent(instance, i -> new CatalogSignal());
    }

    /** A transaction is about to change the catalog. */
    void changing() {
        changing.incrementAndGet();
    }

    /** The transaction that called {@link #changing} ended (committed or rolled back). */
    void changed() {
        changes.incrementAndGet();
        changing.decrementAndGet();
    }

    /** Read before a query of the catalog: the stamp the catalog read is current as of. */
    long stamp() {
        return changes.get();
    }

    /** Whether no change is under way and none ended since {@code stamp} was taken. */
    boolean unchangedSince(long stamp) {
        return changing.get() == 0 && changes.get() == stamp;
    }
}
