// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Within this JVM, whether a database's view catalog may have changed since an attachment last read it, known
 * without a query. Every attachment of one database shares the signal of its catalog's instance id; one that
 * changes the catalog marks the signal changing before its transaction writes and counts the change once the
 * transaction ended. A DuckDB file is open for writing in one process only, so no other process changes the
 * catalog while this one holds it. A false alarm (a rolled-back change, two databases copied from one file)
 * only makes a writer poll.
 */
final class ViewRegistrySignal {
    private static final ConcurrentHashMap<String, ViewRegistrySignal> SIGNALS = new ConcurrentHashMap<>();

    private final AtomicLong changes = new AtomicLong();
    /**
     * Held while an attachment maintains the database (a sync, a create, a drop, a check): one at a time in this JVM, so
     * two connections' syncs never race for the same delta logs and state rows (a write-write conflict that would
     * abort one of them). Never held while a user's statement runs.
     */
    private final ReentrantLock maintenance = new ReentrantLock();
    private final AtomicInteger changing = new AtomicInteger();

    private ViewRegistrySignal() {}

    /** The signal of the catalog with that instance id. */
    static ViewRegistrySignal of(String instance) {
        return SIGNALS.computeIfAbsent(instance, i -> new ViewRegistrySignal());
    }

    /**
     * The open transactions of this JVM's {@code jdbc:mallard:} connections on the database (one token each), and per
     * view creation the ones that were open when it committed: their writes before they saw the new capture triggers
     * went uncaptured, so once all of them ended a consistency check is due.
     */
    private final Set<Object> openTransactions = ConcurrentHashMap.newKeySet();
    private final ConcurrentLinkedQueue<Set<Object>> watches = new ConcurrentLinkedQueue<>();

    void transactionStarted(Object token) {
        openTransactions.add(token);
    }

    void transactionEnded(Object token) {
        openTransactions.remove(token);
    }

    /** Capture of a table started: the transactions open now may write it unseen until they end. */
    void watchOpenTransactions() {
        Set<Object> open = Set.copyOf(openTransactions);
        if (!open.isEmpty()) {
            watches.add(open);
        }
    }

    /** Whether some capture start still waits for transactions that were open when it committed. */
    boolean watching() {
        return !watches.isEmpty();
    }

    /** Whether every transaction of some capture start ended (each such start is reported once). */
    boolean checkDue() {
        boolean due = false;
        for (Set<Object> watch : watches) {
            if (watch.stream().noneMatch(openTransactions::contains) && watches.remove(watch)) {
                due = true;
            }
        }
        return due;
    }

    ReentrantLock maintenance() {
        return maintenance;
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
