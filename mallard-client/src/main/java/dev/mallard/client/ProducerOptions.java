// SPDX-License-Identifier: Apache-2.0
package dev.mallard.client;

import static java.util.Objects.requireNonNull;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * How a producer batches, buffers, retries and spills; the same for HTTP and Flight. Checked when built.
 *
 * <p>Values {@code addRow} takes, by Arrow type: Bool {@code Boolean}; Int(8..64) any {@code Number}; FloatingPoint
 * any {@code Number}; Utf8 any object (its {@code toString()}); Binary {@code byte[]}; Date(DAY)
 * {@code LocalDate}; Timestamp (any unit, with or without zone) {@code Instant} or a {@code Long} in the column's
 * unit; Decimal {@code BigDecimal}; Map(Utf8, Utf8) a {@code java.util.Map}; {@code null} for a null. Other types go
 * through {@link ArrowProducer#send(org.apache.arrow.vector.VectorSchemaRoot)}.
 *
 * @param producerId sent as {@code x-dd-producer-id}; letters, digits, '.', '_' and '-'. Keep it stable across
 *     restarts of the application to have the spill directory replayed
 * @param maxBatchRows a batch is closed when it holds this many rows
 * @param maxBatchBytes ... or when its Arrow buffers hold about this many bytes (keep it under the server's body limit)
 * @param maxBatchDelay ... or when its first row is this old
 * @param maxBufferedBytes memory for closed batches not yet acknowledged; with the open batch, a producer holds at
 *     most this plus {@code maxBatchBytes}
 * @param overflow what a full producer does with a new row
 * @param maxBlock with {@link Overflow#BLOCK}, how long a row waits for room before {@link ProducerFullException}
 * @param spillDirectory where batches go while the server is unreachable or memory is full; empty for none
 * @param maxSpillBytes the most the spill directory holds for this producer
 * @param requestTimeout how long one send waits for the server's answer
 * @param initialBackoff the wait after the first failed attempt; doubled per failure (with jitter) up to maxBackoff
 * @param maxBackoff the longest wait between attempts, unless the server's Retry-After asks for longer
 * @param closeTimeout how long {@code close()} waits for buffered batches to be acknowledged
 * @param partitionBy sent as {@code x-dd-partition} (Hive partition columns); empty for the queue's own
 * @param sortOrder sent as {@code x-dd-sort-order}; empty for the queue's own
 * @param format sent as {@code x-dd-format} ({@code parquet}, ...); empty for the queue's own
 */
public record ProducerOptions(
        String producerId,
        int maxBatchRows,
        long maxBatchBytes,
        Duration maxBatchDelay,
        long maxBufferedBytes,
        Overflow overflow,
        Duration maxBlock,
        Optional<Path> spillDirectory,
        long maxSpillBytes,
        Duration requestTimeout,
        Duration initialBackoff,
        Duration maxBackoff,
        Duration closeTimeout,
        List<String> partitionBy,
        List<String> sortOrder,
        Optional<String> format) {
    public static final int DEFAULT_MAX_BATCH_ROWS = 10_000;
    public static final long DEFAULT_MAX_BATCH_BYTES = 4L << 20;
    public static final Duration DEFAULT_MAX_BATCH_DELAY = Duration.ofSeconds(1);
    public static final long DEFAULT_MAX_BUFFERED_BYTES = 64L << 20;
    public static final Overflow DEFAULT_OVERFLOW = Overflow.BLOCK;
    public static final Duration DEFAULT_MAX_BLOCK = Duration.ofSeconds(30);
    public static final long DEFAULT_MAX_SPILL_BYTES = 1L << 30;
    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(30);
    public static final Duration DEFAULT_INITIAL_BACKOFF = Duration.ofMillis(100);
    public static final Duration DEFAULT_MAX_BACKOFF = Duration.ofSeconds(30);
    public static final Duration DEFAULT_CLOSE_TIMEOUT = Duration.ofSeconds(30);

    private static final Pattern PRODUCER_ID = Pattern.compile("[A-Za-z0-9._-]{1,128}");

    /** What a producer whose buffer (and spill directory) is full does with a new row. */
    public enum Overflow {
        /** The calling thread waits for room, at most {@code maxBlock}, then gets {@link ProducerFullException}. */
        BLOCK,
        /** The row is refused at once with {@link ProducerFullException} (and counted in {@code rowsRefused}). */
        REFUSE
    }

    public ProducerOptions {
        requireNonNull(producerId, "producerId is null");
        requireNonNull(maxBatchDelay, "maxBatchDelay is null");
        requireNonNull(overflow, "overflow is null");
        requireNonNull(maxBlock, "maxBlock is null");
        requireNonNull(spillDirectory, "spillDirectory is null");
        requireNonNull(requestTimeout, "requestTimeout is null");
        requireNonNull(initialBackoff, "initialBackoff is null");
        requireNonNull(maxBackoff, "maxBackoff is null");
        requireNonNull(closeTimeout, "closeTimeout is null");
        partitionBy = List.copyOf(requireNonNull(partitionBy, "partitionBy is null"));
        sortOrder = List.copyOf(requireNonNull(sortOrder, "sortOrder is null"));
        requireNonNull(format, "format is null");
        if (!PRODUCER_ID.matcher(producerId).matches()) {
            throw new IllegalArgumentException("producerId '" + producerId + "' must be 1 to 128 letters, digits, '.', '_' or '-'");
        }
        positive("maxBatchRows", maxBatchRows);
        positive("maxBatchBytes", maxBatchBytes);
        positive("maxBufferedBytes", maxBufferedBytes);
        positive("maxSpillBytes", maxSpillBytes);
        positive("maxBatchDelay", maxBatchDelay);
        positive("requestTimeout", requestTimeout);
        positive("initialBackoff", initialBackoff);
        positive("closeTimeout", closeTimeout);
        if (maxBlock.isNegative()) {
            throw new IllegalArgumentException("maxBlock must not be negative");
        }
        if (maxBackoff.compareTo(initialBackoff) < 0) {
            throw new IllegalArgumentException("maxBackoff " + maxBackoff + " is shorter than initialBackoff " + initialBackoff);
        }
    }

    private static void positive(String name, long value) {
        if (value <= 0) {
            throw new IllegalArgumentException(name + " must be positive, got " + value);
        }
    }

    private static void positive(String name, Duration value) {
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(name + " must be positive, got " + value);
        }
    }

    /** The defaults, with a random producer id. */
    public static ProducerOptions defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Builds {@link ProducerOptions}; every setter's default is the matching {@code DEFAULT_} constant. */
    public static final class Builder {
        private String producerId = "producer-" + java.util.UUID.randomUUID();
        private int maxBatchRows = DEFAULT_MAX_BATCH_ROWS;
        private long maxBatchBytes = DEFAULT_MAX_BATCH_BYTES;
        private Duration maxBatchDelay = DEFAULT_MAX_BATCH_DELAY;
        private long maxBufferedBytes = DEFAULT_MAX_BUFFERED_BYTES;
        private Overflow overflow = DEFAULT_OVERFLOW;
        private Duration maxBlock = DEFAULT_MAX_BLOCK;
        private Optional<Path> spillDirectory = Optional.empty();
        private long maxSpillBytes = DEFAULT_MAX_SPILL_BYTES;
        private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;
        private Duration initialBackoff = DEFAULT_INITIAL_BACKOFF;
        private Duration maxBackoff = DEFAULT_MAX_BACKOFF;
        private Duration closeTimeout = DEFAULT_CLOSE_TIMEOUT;
        private List<String> partitionBy = List.of();
        private List<String> sortOrder = List.of();
        private Optional<String> format = Optional.empty();

        private Builder() {}

        public Builder producerId(String producerId) { this.producerId = producerId; return this; }
        public Builder maxBatchRows(int maxBatchRows) { this.maxBatchRows = maxBatchRows; return this; }
        public Builder maxBatchBytes(long maxBatchBytes) { this.maxBatchBytes = maxBatchBytes; return this; }
        public Builder maxBatchDelay(Duration maxBatchDelay) { this.maxBatchDelay = maxBatchDelay; return this; }
        public Builder maxBufferedBytes(long maxBufferedBytes) { this.maxBufferedBytes = maxBufferedBytes; return this; }
        public Builder overflow(Overflow overflow) { this.overflow = overflow; return this; }
        public Builder maxBlock(Duration maxBlock) { this.maxBlock = maxBlock; return this; }
        public Builder spillDirectory(Path spillDirectory) { this.spillDirectory = Optional.of(spillDirectory); return this; }
        public Builder maxSpillBytes(long maxSpillBytes) { this.maxSpillBytes = maxSpillBytes; return this; }
        public Builder requestTimeout(Duration requestTimeout) { this.requestTimeout = requestTimeout; return this; }
        public Builder initialBackoff(Duration initialBackoff) { this.initialBackoff = initialBackoff; return this; }
        public Builder maxBackoff(Duration maxBackoff) { this.maxBackoff = maxBackoff; return this; }
        public Builder closeTimeout(Duration closeTimeout) { this.closeTimeout = closeTimeout; return this; }
        public Builder partitionBy(List<String> partitionBy) { this.partitionBy = partitionBy; return this; }
        public Builder sortOrder(List<String> sortOrder) { this.sortOrder = sortOrder; return this; }
        public Builder format(String format) { this.format = Optional.of(format); return this; }

        public ProducerOptions build() {
            return new ProducerOptions(producerId, maxBatchRows, maxBatchBytes, maxBatchDelay, maxBufferedBytes, overflow, maxBlock,
                    spillDirectory, maxSpillBytes, requestTimeout, initialBackoff, maxBackoff, closeTimeout, partitionBy, sortOrder, format);
        }
    }
}
