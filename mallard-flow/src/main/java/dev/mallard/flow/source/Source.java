// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.source;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Where a pipeline's messages come from. One pipeline thread calls it; {@link #commit} is called only after
 * the batch holding those positions has been handled, written, flushed and (with a state path) committed.
 */
public interface Source extends AutoCloseable {
    /**
     * Up to {@code max} messages, waiting at most {@code timeout} when none are ready; may return fewer or none.
     */
    List<Message> poll(Duration timeout, int max);

    /**
     * Why the source cannot reach its service now (its brokers do not answer, or refuse the security settings),
     * empty while it can. Read from other threads (/healthz).
     */
    default Optional<String> unreachable() {
        return Optional.empty();
    }

    /**
     * Records that everything before these positions is processed. Keys are {@code topic} and partition,
     * values the next offset to read (the last processed offset + 1).
     */
    void commit(Map<Partition, Long> nextOffsets);

    /**
     * {@link #commit} with a note stored beside the positions (Kafka's commit metadata), which the next owner of a
     * partition reads through {@link #takeAssignedMetadata()}. Sources without such a place ignore it.
     */
    default void commit(Map<Partition, Long> nextOffsets, String metadata) {
        commit(nextOffsets);
    }

    /**
     * Records that everything before these positions is processed by this process, whatever {@link #commit} stores
     * (a window commits lower positions). A partition a rebalance takes away and gives straight back continues from
     * here, not from the committed position.
     */
    default void processed(Map<Partition, Long> nextOffsets) {}

    /** The notes committed with the positions of partitions assigned since the last call. */
    default Map<Partition, String> takeAssignedMetadata() {
        return Map.of();
    }

    /**
     * The partitions taken from this reader since the last call (a consumer group rebalance). Messages of them
     * that were read but not yet processed belong to whoever reads the partition next, which may be this reader
     * again from its last committed position: a caller gathering a batch drops them, or it would hold them twice.
     */
    default Set<Partition> takeRevoked() {
        return Set.of();
    }

    /**
     * The partitions a rebalance gave to another group member since the last call, of those this reader had
     * processed records from: unlike {@link #takeRevoked}, not the ones it was given straight back.
     */
    default Set<Partition> takeMovedAway() {
        return Set.of();
    }

    /**
     * Reads these partitions again from these positions (next offsets), dropping what was read ahead of them. Only
     * sources whose partitions can move ({@link #takeMovedAway}) are asked.
     */
    default void rewind(Map<Partition, Long> positions) {
        if (!positions.isEmpty()) {
            throw new IllegalStateException(this + " cannot read its partitions again");
        }
    }

    /** The answer of a source that cannot tell: every partition asked about is read to its end. */
    java.util.function.Function<Set<Partition>, Map<Partition, Boolean>> ALWAYS_READ_TO_END = partitions -> {
        Map<Partition, Boolean> answer = new java.util.HashMap<>();
        partitions.forEach(partition -> answer.put(partition, true));
        return answer;
    };

    /**
     * Whether each of these partitions is read to its end: true when nothing is left to read, false when records
     * wait that the caller has not been given. A partition missing from the answer could not be asked about (a
     * broker that does not answer). Sources that cannot tell say true for every partition.
     */
    default Map<Partition, Boolean> readToEnd(Set<Partition> partitions) {
        return ALWAYS_READ_TO_END.apply(partitions);
    }

    /** The partitions this reader holds now, when the source knows (a consumer group member does). */
    default Optional<Set<Partition>> assignment() {
        return Optional.empty();
    }

    /** A topic partition: the unit of ordering and of offsets. */
    record Partition(String topic, int partition) {
        @Override
        public String toString() {
            return topic + "[" + partition + "]";
        }
    }

    @Override
    void close();
}
