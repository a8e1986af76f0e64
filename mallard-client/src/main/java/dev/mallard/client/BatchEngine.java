// SPDX-License-Identifier: Apache-2.0
package dev.mallard.client;

import static java.util.Objects.requireNonNull;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.nio.channels.Channels;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.zip.GZIPOutputStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * What both producers share: the open batch rows are appended to, the ordered line of sealed batches (in memory or
 * spilled), and the one sender thread that sends the line's head until it is answered, then the next.
 *
 * <p>One lock guards everything but the network call; the sender never holds it while sending. Batches are numbered
 * when sealed, from {@code max(now in microseconds, the last spilled id + 1)}, so numbers keep rising across restarts
 * of a producer with the same id without any state beyond the spill files.
 */
final class BatchEngine implements ArrowProducer {
    private static final System.Logger LOG = System.getLogger(BatchEngine.class.getName());

    private final Schema schema;
    private final ProducerOptions options;
    private final BatchTransport transport;
    private final BufferAllocator allocator;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final ArrayDeque<SealedBatch> line = new ArrayDeque<>();
    private final Optional<SpillDirectory> spill;
    private final Thread sender;

    // Guarded by lock.
    private VectorSchemaRoot open;
    private RowAppender appender;
    private int openRows;
    private long openBytes;
    private long openSinceNanos;
    private long nextBatchId;
    private long memoryBytes;
    private long retryAtNanos;
    private int failures;
    private boolean unreachable;
    private boolean closing;
    private boolean stopped;
    private String failure;
    private long rowsAccepted;
    private long rowsRefused;
    private long batchesSealed;
    private long batchesAcknowledged;
    private long rowsAcknowledged;
    private long batchesRejected;
    private long retries;
    private long busyAnswers;
    private long batchesSpilled;
    private long batchesLost;

    BatchEngine(Schema schema, ProducerOptions options, BatchTransport transport) {
        this.schema = requireNonNull(schema, "schema is null");
        this.options = requireNonNull(options, "options is null");
        this.transport = requireNonNull(transport, "transport is null");
        if (schema.getFields().isEmpty()) {
            throw new IllegalArgumentException("the schema has no columns");
        }
        this.allocator = new RootAllocator();
        long firstId = TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis());
        try {
            if (options.spillDirectory().isPresent()) {
                SpillDirectory directory = new SpillDirectory(options.spillDirectory().get(), options.producerId(), options.maxSpillBytes());
                for (SealedBatch batch : directory.recover()) {
                    line.addLast(batch);
                    firstId = Math.max(firstId, batch.batchId() + 1);
                }
                if (!line.isEmpty()) {
                    LOG.log(Level.INFO, "replaying spilled batches producer={0} batches={1} directory={2}",
                            options.producerId(), line.size(), directory.directory());
                }
                this.spill = Optional.of(directory);
            } else {
                this.spill = Optional.empty();
            }
        } catch (IOException e) {
            allocator.close();
            throw new UncheckedIOException("cannot use the spill directory " + options.spillDirectory().get() + ": " + e.getMessage(), e);
        }
        this.nextBatchId = firstId;
        newOpenBatch();
        this.sender = new Thread(this::sendLoopOrFail, "mallard-producer-" + options.producerId());
        sender.setDaemon(true);
        sender.start();
    }

    @Override
    public Schema schema() {
        return schema;
    }

    @Override
    public String producerId() {
        return options.producerId();
    }

    @Override
    public void addRow(Object... values) {
        requireNonNull(values, "values is null");
        if (values.length != schema.getFields().size()) {
            throw new IllegalArgumentException("a row has " + schema.getFields().size() + " values in schema order, got " + values.length);
        }
        refuseOwnThreads();
        lock.lock();
        try {
            awaitRoom(1);
            openBytes += appender.append(openRows, values);
            openRows++;
            afterAppend(1);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void send(VectorSchemaRoot rows) {
        requireNonNull(rows, "rows is null");
        if (!rows.getSchema().equals(schema)) {
            throw new IllegalArgumentException("the rows' schema " + rows.getSchema() + " is not the producer's " + schema);
        }
        int count = rows.getRowCount();
        long perRow = count == 0 ? 0 : Math.max(1, rows.getFieldVectors().stream().mapToLong(FieldVector::getBufferSize).sum() / count);
        refuseOwnThreads();
        lock.lock();
        try {
            for (int row = 0; row < count; row++) {
                awaitRoom(1);
                List<FieldVector> to = open.getFieldVectors();
                List<FieldVector> from = rows.getFieldVectors();
                for (int c = 0; c < to.size(); c++) {
                    to.get(c).copyFromSafe(row, openRows, from.get(c));
                }
                openRows++;
                openBytes += perRow;
                afterAppend(1);
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public boolean flush(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        lock.lock();
        try {
            if (openRows > 0) {
                seal();
            }
            long target = nextBatchId - 1;
            while (!line.isEmpty() && line.peekFirst().batchId() <= target) {
                long left = deadline - System.nanoTime();
                if (left <= 0 || stopped) {
                    return false;
                }
                changed.awaitNanos(left);
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public ProducerStats stats() {
        lock.lock();
        try {
            return new ProducerStats(rowsAccepted, rowsRefused, batchesSealed, batchesAcknowledged, rowsAcknowledged, batchesRejected,
                    retries, busyAnswers, batchesSpilled, batchesLost, line.size(), memoryBytes + openBytes,
                    spill.map(SpillDirectory::bytes).orElse(0L));
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void close() {
        lock.lock();
        try {
            if (closing) {
                return;
            }
            closing = true;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        boolean interrupted = false;
        try {
            sender.join(options.closeTimeout().toMillis());
            if (sender.isAlive()) {
                lock.lock();
                try {
                    stopped = true;
                    changed.signalAll();
                } finally {
                    lock.unlock();
                }
                sender.interrupt();
                sender.join(TimeUnit.SECONDS.toMillis(10));
            }
        } catch (InterruptedException e) {
            interrupted = true;
        }
        lock.lock();
        try {
            stopped = true;
            if (openRows > 0) {
                seal();
            }
            keepWhatIsLeft();
            open.close();
        } finally {
            lock.unlock();
        }
        transport.close();
        allocator.close();
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * A row from the producer's own work (a library logging while a batch is sealed or sent, into an appender that
     * ships through this producer) would corrupt the batch being sealed or wait on the thread that makes room.
     */
    private void refuseOwnThreads() {
        if (lock.isHeldByCurrentThread() || Thread.currentThread() == sender) {
            throw new IllegalStateException("producer " + options.producerId() + " cannot take rows from its own sealing or sending");
        }
    }

    // ---- appending (lock held) ----

    private void awaitRoom(int rows) {
        if (closing) {
            throw new IllegalStateException("the producer " + options.producerId() + " is closed");
        }
        if (failure != null) {
            throw new IllegalStateException("the producer " + options.producerId() + " stopped sending: " + failure);
        }
        long deadline = System.nanoTime() + options.maxBlock().toNanos();
        while (full()) {
            if (options.overflow() == ProducerOptions.Overflow.REFUSE) {
                rowsRefused += rows;
                throw new ProducerFullException(fullMessage());
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                rowsRefused += rows;
                throw new ProducerFullException(fullMessage() + " for " + options.maxBlock());
            }
            try {
                changed.awaitNanos(left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                rowsRefused += rows;
                throw new ProducerFullException("interrupted while waiting for room in producer " + options.producerId());
            }
            if (closing) {
                throw new IllegalStateException("the producer " + options.producerId() + " is closed");
            }
        }
    }

    private boolean full() {
        if (memoryBytes + openBytes < options.maxBufferedBytes()) {
            return false;
        }
        // A batch sealed now can go to disk instead of memory.
        return spill.isEmpty() || !spill.get().hasRoomFor(Math.max(openBytes, 1));
    }

    private String fullMessage() {
        return "producer " + options.producerId() + " is full: " + (memoryBytes + openBytes) + " bytes buffered of maxBufferedBytes "
                + options.maxBufferedBytes() + (spill.isPresent() ? " and the spill directory is at maxSpillBytes " + options.maxSpillBytes() : "")
                + " while " + transport.target() + " has not acknowledged them";
    }

    private void afterAppend(int rows) {
        if (openRows == rows) {
            openSinceNanos = System.nanoTime();
            changed.signalAll();
        }
        rowsAccepted += rows;
        if (openRows >= options.maxBatchRows() || openBytes >= options.maxBatchBytes()) {
            seal();
        }
    }

    private void newOpenBatch() {
        open = VectorSchemaRoot.create(schema, allocator);
        open.allocateNew();
        appender = new RowAppender(open);
        openRows = 0;
        openBytes = 0;
    }

    /** Closes the open batch, numbers it, and puts it at the end of the line, in memory or in the spill directory. */
    private void seal() {
        open.setRowCount(openRows);
        byte[] payload;
        try {
            payload = serialize(open, transport.gzipPayloads());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the batch as an Arrow stream: " + e.getMessage(), e);
        }
        int rows = openRows;
        open.close();
        newOpenBatch();
        SealedBatch batch = SealedBatch.inMemory(nextBatchId++, rows, transport.gzipPayloads(), payload);
        batchesSealed++;
        boolean toDisk = spill.isPresent() && (unreachable || memoryBytes + payload.length > options.maxBufferedBytes())
                && spill.get().hasRoomFor(payload.length);
        line.addLast(toDisk ? spillOrKeep(batch) : batch);
        if (!line.peekLast().spilled()) {
            memoryBytes += payload.length;
        }
        changed.signalAll();
    }

    private SealedBatch spillOrKeep(SealedBatch batch) {
        try {
            SealedBatch spilled = spill.get().write(batch);
            batchesSpilled++;
            return spilled;
        } catch (IOException e) {
            LOG.log(Level.WARNING, "cannot spill batch producer={0} batch={1}: {2}", options.producerId(), batch.batchId(), e.getMessage());
            return batch;
        }
    }

    /** Moves every batch waiting in memory to the spill directory, as far as it has room; keeps the line's order. */
    private void spillMemory() {
        if (spill.isEmpty() || memoryBytes == 0) {
            return;
        }
        List<SealedBatch> kept = new ArrayList<>(line.size());
        for (SealedBatch batch : line) {
            if (!batch.spilled() && spill.get().hasRoomFor(batch.bytes())) {
                SealedBatch moved = spillOrKeep(batch);
                if (moved.spilled()) {
                    memoryBytes -= batch.bytes();
                }
                kept.add(moved);
            } else {
                kept.add(batch);
            }
        }
        line.clear();
        line.addAll(kept);
        changed.signalAll();
    }

    private void keepWhatIsLeft() {
        spillMemory();
        long lost = line.stream().filter(b -> !b.spilled()).count();
        if (lost > 0) {
            batchesLost += lost;
            long rows = line.stream().filter(b -> !b.spilled()).mapToLong(SealedBatch::rows).sum();
            LOG.log(Level.WARNING, "closed with unacknowledged batches producer={0} batches={1} rows={2} target={3}",
                    options.producerId(), lost, rows, transport.target());
        }
        long kept = line.stream().filter(SealedBatch::spilled).count();
        if (kept > 0) {
            LOG.log(Level.INFO, "closed with spilled batches to replay producer={0} batches={1}", options.producerId(), kept);
        }
        line.clear();
        memoryBytes = 0;
    }

    static byte[] serialize(VectorSchemaRoot root, boolean gzip) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(Math.max(1024, (int) Math.min(Integer.MAX_VALUE - 8,
                root.getFieldVectors().stream().mapToLong(FieldVector::getBufferSize).sum() + 1024)));
        try (OutputStream out = gzip ? new GZIPOutputStream(bytes, 1 << 16) : bytes;
                ArrowStreamWriter writer = new ArrowStreamWriter(root, null, Channels.newChannel(out))) {
            writer.start();
            writer.writeBatch();
            writer.end();
        }
        return bytes.toByteArray();
    }

    // ---- sending (the sender thread) ----

    /** A sender that dies of a bug stops the producer loudly rather than leaving rows to pile up unsent. */
    private void sendLoopOrFail() {
        try {
            sendLoop();
        } catch (RuntimeException | Error e) {
            LOG.log(Level.ERROR, "producer " + options.producerId() + " stopped sending", e);
            lock.lock();
            try {
                failure = e.toString();
                stopped = true;
                changed.signalAll();
            } finally {
                lock.unlock();
            }
            throw e;
        }
    }

    private void sendLoop() {
        while (true) {
            SealedBatch head;
            lock.lock();
            try {
                head = nextToSend();
                if (head == null) {
                    return;
                }
            } catch (InterruptedException e) {
                return;
            } finally {
                lock.unlock();
            }
            SendOutcome outcome;
            try {
                byte[] payload = head.payload().isPresent() ? head.payload().get() : spill.get().read(head);
                outcome = transport.send(head.batchId(), payload, head.gzip());
            } catch (InterruptedException e) {
                outcome = SendOutcome.unreachable(Optional.empty(), "interrupted");
            } catch (IOException e) {
                outcome = SendOutcome.rejected("the spill file " + head.file().orElseThrow() + " cannot be read: " + e.getMessage());
            } catch (RuntimeException e) {
                outcome = SendOutcome.unreachable(Optional.empty(), e.toString());
            }
            lock.lock();
            try {
                answered(head, outcome);
            } finally {
                lock.unlock();
            }
        }
    }

    /** Waits until the line's head may be sent; seals the open batch when it is old enough. Null when done. */
    private SealedBatch nextToSend() throws InterruptedException {
        while (true) {
            long now = System.nanoTime();
            if (openRows > 0 && (closing || now - openSinceNanos >= options.maxBatchDelay().toNanos())) {
                seal();
            }
            if (stopped) {
                return null;
            }
            if (!line.isEmpty() && now - retryAtNanos >= 0) {
                return line.peekFirst();
            }
            if (closing && line.isEmpty() && openRows == 0) {
                return null;
            }
            long wait = Long.MAX_VALUE;
            if (openRows > 0) {
                wait = Math.min(wait, openSinceNanos + options.maxBatchDelay().toNanos() - now);
            }
            if (!line.isEmpty()) {
                wait = Math.min(wait, retryAtNanos - now);
            }
            if (wait == Long.MAX_VALUE) {
                changed.await();
            } else if (wait > 0) {
                changed.awaitNanos(wait);
            }
        }
    }

    private void answered(SealedBatch sent, SendOutcome outcome) {
        switch (outcome.kind()) {
            case ACKNOWLEDGED, REJECTED -> {
                SealedBatch head = line.peekFirst();
                if (head != null && head.batchId() == sent.batchId()) {
                    line.pollFirst();
                    forget(head);
                }
                if (outcome.kind() == SendOutcome.Kind.ACKNOWLEDGED) {
                    batchesAcknowledged++;
                    rowsAcknowledged += sent.rows();
                } else {
                    batchesRejected++;
                    LOG.log(Level.WARNING, "batch rejected and dropped producer={0} batch={1} rows={2} target={3}: {4}",
                            options.producerId(), sent.batchId(), sent.rows(), transport.target(), outcome.detail());
                }
                if (unreachable) {
                    LOG.log(Level.INFO, "server reachable again producer={0} target={1}", options.producerId(), transport.target());
                }
                unreachable = false;
                failures = 0;
                retryAtNanos = System.nanoTime();
            }
            case BUSY, UNREACHABLE -> {
                retries++;
                failures++;
                if (outcome.kind() == SendOutcome.Kind.BUSY) {
                    busyAnswers++;
                } else {
                    if (!unreachable) {
                        LOG.log(Level.WARNING, "server unreachable, retrying{0} producer={1} target={2}: {3}",
                                spill.isPresent() ? " and spilling" : "", options.producerId(), transport.target(), outcome.detail());
                    }
                    unreachable = true;
                    spillMemory();
                }
                Duration wait = outcome.retryAfter().orElseGet(this::backoff);
                retryAtNanos = System.nanoTime() + wait.toNanos();
            }
        }
        changed.signalAll();
    }

    private void forget(SealedBatch batch) {
        if (batch.spilled()) {
            try {
                spill.get().delete(batch);
            } catch (IOException e) {
                LOG.log(Level.WARNING, "cannot delete spill file {0}: {1}", batch.file().orElseThrow(), e.getMessage());
            }
        } else {
            memoryBytes -= batch.bytes();
        }
    }

    /** Exponential from initialBackoff, capped at maxBackoff, with up to a fifth taken off at random. */
    private Duration backoff() {
        long max = options.maxBackoff().toNanos();
        long wait = (long) Math.min(max, options.initialBackoff().toNanos() * Math.pow(2, Math.min(failures - 1, 62)));
        long jitter = wait / 5 == 0 ? 0 : ThreadLocalRandom.current().nextLong(wait / 5);
        return Duration.ofNanos(wait - jitter);
    }
}
