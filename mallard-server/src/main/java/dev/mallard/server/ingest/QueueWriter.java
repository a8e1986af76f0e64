// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.ingest;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlText;
import java.nio.file.Files;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One queue's writer: a platform thread that owns the queue's {@link IngestionWriter} (and so its DuckDB connection),
 * takes the received batches in order, writes those of one shape that fit {@code target_file_size} as one flush, and
 * completes each batch's future when its flush is committed. It also keeps what was committed per producer, so a
 * batch re-sent with a producer id and batch id already committed is acknowledged without being written again.
 */
final class QueueWriter implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(QueueWriter.class);
    /** Batch ids remembered per producer; an id at or below the oldest forgotten one counts as committed. */
    static final int REMEMBERED_BATCHES = 100_000;

    /** What a batch's producer is told. */
    record Ack(long rows, boolean duplicate) {}

    private record Pending(IngestionWriter.Received batch, CompletableFuture<Ack> done, Instant at) {}

    /** The batch ids of one producer that were committed. */
    private static final class Committed {
        final NavigableSet<Long> ids = new TreeSet<>();
        long forgottenUpTo = Long.MIN_VALUE;

        boolean contains(long id) {
            return id <= forgottenUpTo || ids.contains(id);
        }

        void add(long id) {
            ids.add(id);
            while (ids.size() > REMEMBERED_BATCHES) {
                forgottenUpTo = Math.max(forgottenUpTo, ids.pollFirst());
            }
        }
    }

    private final IngestionConfig.Queue queue;
    private final IngestionWriter writer;
    private final Clock clock;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition arrived = lock.newCondition();
    private final Deque<Pending> pending = new ArrayDeque<>();
    private final Map<String, Committed> committed = new HashMap<>();
    private final Thread thread;
    private final AtomicLong pendingBytes = new AtomicLong();
    private final QueueStats stats;
    private final java.util.function.LongConsumer released;
    private volatile boolean closed;

    /** @param released called with the bytes of each batch once it is written or refused (the server's pending count) */
    QueueWriter(IngestionConfig.Queue queue, IngestionWriter writer, Clock clock, java.util.function.LongConsumer released) {
        this.queue = requireNonNull(queue, "queue is null");
        this.writer = requireNonNull(writer, "writer is null");
        this.clock = requireNonNull(clock, "clock is null");
        requireNonNull(released, "released is null");
        this.released = released;
        this.stats = new QueueStats(clock);
        for (CommitLog.Commit commit : writer.recovered()) {
            remember(commit);
            stats.committed(commit, false);
        }
        this.thread = Thread.ofPlatform().name("ingest-" + queue.name()).daemon().start(this::run);
    }

    IngestionConfig.Queue queue() {
        return queue;
    }

    QueueStats stats() {
        return stats;
    }

    long pendingBytes() {
        return pendingBytes.get();
    }

    /** Whether this producer's batch was committed already. */
    boolean committed(String producer, long batchId) {
        if (producer.isEmpty() || batchId < 0) {
            return false;
        }
        lock.lock();
        try {
            Committed ids = committed.get(producer);
            return ids != null && ids.contains(batchId);
        } finally {
            lock.unlock();
        }
    }

    /** Queues a received batch; the future completes when it is committed, or fails with why it was not. */
    CompletableFuture<Ack> submit(IngestionWriter.Received batch) {
        CompletableFuture<Ack> done = new CompletableFuture<>();
        lock.lock();
        try {
            if (closed) {
                throw new MallardException(ErrorCode.SYSTEM_IO_FAILED, "ingestion queue " + queue.name() + " is closing; retry");
            }
            pendingBytes.addAndGet(batch.bytes());
            pending.addLast(new Pending(batch, done, clock.instant()));
            arrived.signalAll();
        } finally {
            lock.unlock();
        }
        return done;
    }

    private void run() {
        while (true) {
            List<Pending> flush;
            try {
                flush = next();
            } catch (InterruptedException e) {
                return;
            }
            if (flush == null) {
                return;
            }
            process(flush);
        }
    }

    /** The next flush: the oldest batch and those after it of its shape, up to the target size, once the flush interval has passed. */
    private List<Pending> next() throws InterruptedException {
        lock.lock();
        try {
            while (pending.isEmpty()) {
                if (closed) {
                    return null;
                }
                arrived.await(1, TimeUnit.SECONDS);
            }
            Duration interval = queue.flushInterval();
            while (!closed && !interval.isZero()) {
                Instant due = pending.peekFirst().at().plus(interval);
                long waitNanos = Duration.between(clock.instant(), due).toNanos();
                if (waitNanos <= 0 || bytesOfShape() >= queue.targetFileSize()) {
                    break;
                }
                arrived.awaitNanos(waitNanos);
            }
            List<Pending> flush = new ArrayList<>();
            Pending first = pending.pollFirst();
            flush.add(first);
            long bytes = first.batch().bytes();
            while (!pending.isEmpty() && pending.peekFirst().batch().shape().equals(first.batch().shape())
                    && bytes + pending.peekFirst().batch().bytes() <= queue.targetFileSize()) {
                Pending next = pending.pollFirst();
                bytes += next.batch().bytes();
                flush.add(next);
            }
            return flush;
        } finally {
            lock.unlock();
        }
    }

    private long bytesOfShape() {
        IngestionWriter.Shape shape = pending.peekFirst().batch().shape();
        long bytes = 0;
        for (Pending p : pending) {
            if (!p.batch().shape().equals(shape)) {
                break;
            }
            bytes += p.batch().bytes();
        }
        return bytes;
    }

    private void process(List<Pending> flush) {
        // Batches committed already, or twice in this flush, are acknowledged without being written again.
        List<Pending> fresh = new ArrayList<>();
        Map<String, Pending> firstOfKey = new HashMap<>();
        List<Pending[]> sameAs = new ArrayList<>();
        for (Pending p : flush) {
            IngestionWriter.Received batch = p.batch();
            if (batch.deduplicated() && committed(batch.producer(), batch.batchId())) {
                finish(p, null, new Ack(0, true));
                continue;
            }
            if (batch.deduplicated()) {
                String key = batch.producer() + '\n' + batch.batchId();
                Pending earlier = firstOfKey.putIfAbsent(key, p);
                if (earlier != null) {
                    sameAs.add(new Pending[] {p, earlier});
                    continue;
                }
            }
            fresh.add(p);
        }
        if (!fresh.isEmpty()) {
            write(fresh);
        }
        for (Pending[] pair : sameAs) {
            Pending later = pair[0];
            pair[1].done().whenComplete((ack, failure) -> finish(later, failure, failure == null ? new Ack(0, true) : null));
        }
    }

    private void write(List<Pending> flush) {
        List<IngestionWriter.Received> batches = flush.stream().map(Pending::batch).toList();
        CommitLog.Commit commit;
        try {
            commit = writer.write(batches);
        } catch (Exception e) {
            if (flush.size() > 1) {
                // One bad batch must not fail the others it was flushed with.
                for (Pending p : flush) {
                    write(List.of(p));
                }
                return;
            }
            LOG.debug("ingestion batch refused queue={} error={}", queue.name(), e.toString());
            finish(flush.getFirst(), refusal(e), null);
            return;
        }
        lock.lock();
        try {
            remember(commit);
        } finally {
            lock.unlock();
        }
        stats.committed(commit, true);
        LOG.debug("ingestion flush committed queue={} seq={} batches={} rows={} bytes={}", queue.name(), commit.seq(), commit.batches().size(),
                commit.rows(), commit.bytes());
        for (int i = 0; i < flush.size(); i++) {
            finish(flush.get(i), null, new Ack(commit.batches().get(i).rows(), false));
        }
    }

    private Throwable refusal(Exception e) {
        if (e instanceof MallardException) {
            return e;
        }
        // DuckDB refusing the stream or the queue's SQL over it is the batch's fault; anything else is the server's.
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof java.sql.SQLException) {
                return new MallardException(ErrorCode.USER_INGEST_BATCH_INVALID, "ingestion queue " + queue.name() + " cannot write the batch: "
                        + SqlText.firstLine(cause.getMessage()), e);
            }
        }
        return new MallardException(ErrorCode.SYSTEM_IO_FAILED, "ingestion queue " + queue.name() + " failed to write: " + SqlText.firstLine(String.valueOf(e)), e);
    }

    private void remember(CommitLog.Commit commit) {
        for (CommitLog.Batch batch : commit.batches()) {
            if (!batch.producer().isEmpty() && batch.batchId() >= 0) {
                committed.computeIfAbsent(batch.producer(), key -> new Committed()).add(batch.batchId());
            }
        }
    }

    private void finish(Pending p, Throwable failure, Ack ack) {
        try {
            Files.deleteIfExists(p.batch().spool());
        } catch (java.io.IOException e) {
            LOG.warn("cannot delete a spooled batch file={} error={}", p.batch().spool(), e.toString());
        }
        pendingBytes.addAndGet(-p.batch().bytes());
        released.accept(p.batch().bytes());
        if (failure != null) {
            p.done().completeExceptionally(failure);
        } else {
            p.done().complete(ack);
        }
    }

    Optional<Instant> lastBatchAt() {
        return stats.lastBatchAt();
    }

    @Override
    public void close() {
        lock.lock();
        try {
            closed = true;
            arrived.signalAll();
        } finally {
            lock.unlock();
        }
        try {
            thread.join(TimeUnit.SECONDS.toMillis(30));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        lock.lock();
        try {
            for (Pending p : pending) {
                finish(p, new MallardException(ErrorCode.SYSTEM_IO_FAILED, "ingestion queue " + queue.name() + " closed before writing; retry"), null);
            }
            pending.clear();
        } finally {
            lock.unlock();
        }
        writer.close();
    }
}
