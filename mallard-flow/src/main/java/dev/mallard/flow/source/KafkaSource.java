// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.source;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.flow.kafka.KafkaClientSettings;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Kafka topic subscription in a consumer group. Offsets are committed only through {@link #commit},
 * never automatically, and only up to what the pipeline processed, never to where the consumer read ahead.
 * With durable state the pipeline's own offsets win: they are applied as partitions are assigned.
 */
public final class KafkaSource implements Source {
    private static final Logger LOG = LoggerFactory.getLogger(KafkaSource.class);
    private static final Duration COMMIT_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration END_OFFSETS_TIMEOUT = Duration.ofSeconds(3);
    // While no record arrives, how often the brokers are asked for metadata (a request that always goes to a broker)
    // to tell an idle topic from brokers that do not answer, and how long each ask may take.
    private static final Duration PROBE_EVERY = Duration.ofSeconds(5);
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);
    private static final int DEFAULT_UNREACHABLE_DEADLINE_SECONDS = 60;

    private final KafkaConsumer<byte[], byte[]> consumer;
    private final ArrayDeque<ConsumerRecord<byte[], byte[]>> buffered = new ArrayDeque<>();
    private final String where;
    // The offsets last handed to commit and not yet known to be committed: made durable in close() and when a
    // partition is revoked, so an asynchronous commit in flight is never what a restart depends on.
    private final Map<TopicPartition, OffsetAndMetadata> pending = new HashMap<>();
    private final Set<Partition> revoked = new HashSet<>();
    private final Map<Partition, String> assignedMetadata = new HashMap<>();
    // Where this process got to per partition, and those of partitions a rebalance just took: an eager rebalance
    // revokes every partition and gives most straight back, and the consumer would then restart them at the committed
    // position, which a window keeps lower than what was processed.
    private final Map<Partition, Long> processed = new HashMap<>();
    private final Map<Partition, Long> justRevoked = new HashMap<>();
    private final Set<Partition> movedAway = new HashSet<>();
    private final String brokers;
    private final Duration unreachableDeadline;
    private long lastProbeNanos;
    private long unreachableSinceNanos;
    private volatile String unreachableCause;

    /**
     * @param storedOffsets the next offset per partition recorded in the pipeline's state, applied on assignment
     */
    public KafkaSource(JsonNode block, int maxPollRecords, Function<Partition, java.util.Optional<Long>> storedOffsets) {
        this(block, maxPollRecords, storedOffsets, false, java.util.Optional.empty());
    }

    /**
     * @param stateOwnsOffsets true with a state file: it is the only record of what was processed, so a partition it
     *     has no offset for starts where auto_offset_reset says (its beginning, by default), never at the group's
     *     committed offset, which may be ahead of the state (a state file restored from a backup, say)
     * @param instanceId a static group membership id: a restarted process with the same id takes over its
     *     partitions at once, instead of waiting for the crashed member's session to expire
     */
    public KafkaSource(JsonNode block, int maxPollRecords, Function<Partition, java.util.Optional<Long>> storedOffsets,
            boolean stateOwnsOffsets, java.util.Optional<String> instanceId) {
        requireNonNull(block, "block is null");
        requireNonNull(storedOffsets, "storedOffsets is null");
        this.where = "pipeline.source.kafka";
        Properties properties = KafkaClientSettings.common(block, where);
        this.brokers = String.join(",", KafkaClientSettings.brokers(block));
        this.unreachableDeadline = Duration.ofSeconds(block.path("unreachable_deadline_seconds").asInt(DEFAULT_UNREACHABLE_DEADLINE_SECONDS));
        // Every blocking call without a timeout of its own (committed offsets on assignment, positions) is bounded.
        properties.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, Long.toString(Math.min(30_000, unreachableDeadline.toMillis())));
        this.lastProbeNanos = System.nanoTime() - PROBE_EVERY.toNanos();
        properties.put(ConsumerConfig.GROUP_ID_CONFIG, block.path("group_id").asText());
        properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, block.path("auto_offset_reset").asText("earliest"));
        boolean latest = "latest".equals(block.path("auto_offset_reset").asText("earliest"));
        properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        properties.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, Integer.toString(Math.max(1, maxPollRecords)));
        JsonNode fetch = block.path("fetch");
        properties.put(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, Integer.toString(fetch.path("max_bytes").asInt(4 << 20)));
        properties.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, Integer.toString(fetch.path("max_partition_bytes").asInt(1 << 20)));
        properties.put(ConsumerConfig.CLIENT_ID_CONFIG, "mallard-" + block.path("group_id").asText());
        instanceId.ifPresent(id -> properties.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, id));
        this.consumer = KafkaClientSettings.consumer(properties, block, where, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        List<String> topics = new ArrayList<>();
        block.path("topics").forEach(topic -> topics.add(topic.asText()));
        consumer.subscribe(topics, new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                // Records read ahead from a revoked partition belong to its next owner.
                buffered.removeIf(record -> partitions.contains(new TopicPartition(record.topic(), record.partition())));
                justRevoked.clear();
                for (TopicPartition partition : partitions) {
                    Partition key = new Partition(partition.topic(), partition.partition());
                    revoked.add(key);
                    Long position = processed.remove(key);
                    if (position != null) {
                        justRevoked.put(key, position);
                    }
                }
                Map<TopicPartition, OffsetAndMetadata> leaving = new HashMap<>();
                for (TopicPartition partition : partitions) {
                    OffsetAndMetadata offset = pending.remove(partition);
                    if (offset != null) {
                        leaving.put(partition, offset);
                    }
                }
                commitNow(leaving);
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                try {
                    consumer.committed(Set.copyOf(partitions)).forEach((partition, committed) -> {
                        if (committed != null && !committed.metadata().isEmpty()) {
                            assignedMetadata.put(new Partition(partition.topic(), partition.partition()), committed.metadata());
                        }
                    });
                } catch (KafkaException e) {
                    LOG.warn("cannot read the committed metadata of newly assigned partitions error={}", e.toString());
                }
                List<TopicPartition> unknown = new ArrayList<>();
                for (TopicPartition partition : partitions) {
                    Partition key = new Partition(partition.topic(), partition.partition());
                    Long mine = justRevoked.remove(key);
                    java.util.Optional<Long> stored = storedOffsets.apply(key);
                    if (mine != null) {
                        // Given straight back: continue where this process got to (its window rows and state match).
                        consumer.seek(partition, mine);
                        processed.put(key, mine);
                    } else if (stored.isPresent()) {
                        LOG.info("resuming from the state file's offset topic={} partition={} offset={}", partition.topic(), partition.partition(), stored.get());
                        consumer.seek(partition, stored.get());
                        // The state holds what was processed up to there: if a rebalance moves the partition away
                        // before this run reads it, that state (a window's rows) is still this process's to hand over.
                        processed.put(key, stored.get());
                    } else if (stateOwnsOffsets) {
                        unknown.add(partition);
                    }
                }
                // A partition that went to another member and comes back later starts from what the group committed.
                movedAway.addAll(justRevoked.keySet());
                justRevoked.clear();
                if (!unknown.isEmpty()) {
                    LOG.info("the state file has no offset for these partitions; starting them per auto_offset_reset={} partitions={}",
                            latest ? "latest" : "earliest", unknown);
                    if (latest) {
                        consumer.seekToEnd(unknown);
                    } else {
                        consumer.seekToBeginning(unknown);
                    }
                }
            }
        });
    }

    @Override
    public List<Message> poll(Duration timeout, int max) {
        if (buffered.isEmpty()) {
            try {
                consumer.poll(timeout).forEach(buffered::add);
                if (!buffered.isEmpty()) {
                    answered();
                } else if (System.nanoTime() - lastProbeNanos >= PROBE_EVERY.toNanos()) {
                    probe();
                }
            } catch (org.apache.kafka.common.errors.AuthenticationException e) {
                notAnswered("the brokers refused the security settings (" + e.getMessage() + "); check " + where
                        + ".security_protocol, .ssl and .sasl");
            } catch (KafkaException e) {
                throw new MallardException(ErrorCode.SYSTEM_SOURCE_FAILED, "kafka source: " + e.getMessage(), e);
            }
            String cause = unreachableCause;
            if (cause != null && System.nanoTime() - unreachableSinceNanos >= unreachableDeadline.toNanos()) {
                throw new MallardException(ErrorCode.SYSTEM_SOURCE_UNREACHABLE, "kafka source: the brokers " + brokers
                        + " did not answer for " + unreachableDeadline.toSeconds() + " s (" + where
                        + ".unreachable_deadline_seconds): " + cause);
            }
        }
        List<Message> messages = new ArrayList<>(Math.min(max, buffered.size()));
        while (messages.size() < max && !buffered.isEmpty()) {
            ConsumerRecord<byte[], byte[]> record = buffered.poll();
            messages.add(new Message(record.topic(), record.partition(), record.offset(), record.key(),
                    record.value() == null ? new byte[0] : record.value()));
        }
        return messages;
    }

    /** Asks a broker for metadata, bounded: the answer, or its absence, is the source's reachability. */
    private void probe() {
        lastProbeNanos = System.nanoTime();
        try {
            consumer.listTopics(PROBE_TIMEOUT);
            answered();
        } catch (org.apache.kafka.common.errors.AuthenticationException e) {
            notAnswered("the brokers refused the security settings (" + e.getMessage() + "); check " + where
                    + ".security_protocol, .ssl and .sasl");
        } catch (org.apache.kafka.common.errors.TimeoutException e) {
            notAnswered("no broker answered within " + PROBE_TIMEOUT.toSeconds() + " s (is one listening at " + brokers + "?)");
        } catch (KafkaException e) {
            notAnswered(e.toString());
        }
    }

    private void answered() {
        if (unreachableCause != null) {
            LOG.info("kafka source reaches its brokers again brokers={} after_seconds={}", brokers,
                    Duration.ofNanos(System.nanoTime() - unreachableSinceNanos).toSeconds());
            unreachableCause = null;
        }
    }

    private void notAnswered(String cause) {
        if (unreachableCause == null) {
            unreachableSinceNanos = System.nanoTime();
            LOG.warn("kafka source cannot reach its brokers brokers={} deadline_seconds={} cause={}", brokers,
                    unreachableDeadline.toSeconds(), cause);
        }
        unreachableCause = cause;
    }

    @Override
    public java.util.Optional<String> unreachable() {
        return java.util.Optional.ofNullable(unreachableCause);
    }

    /**
     * Commits asynchronously: the next batch is read while the broker records this one. Offsets only ever move
     * forward, a later commit covers an earlier one that failed, and {@link #close()} and a revocation commit
     * what is still pending synchronously, so the only cost of a lost asynchronous commit is a redelivery that
     * the at-least-once contract (and, with a state path, the state file's own offsets) already covers.
     */
    @Override
    public void commit(Map<Partition, Long> nextOffsets) {
        commit(nextOffsets, "");
    }

    @Override
    public void commit(Map<Partition, Long> nextOffsets, String metadata) {
        if (nextOffsets.isEmpty()) {
            return;
        }
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        nextOffsets.forEach((partition, offset) -> offsets.put(new TopicPartition(partition.topic(), partition.partition()),
                new OffsetAndMetadata(offset, metadata)));
        pending.putAll(offsets);
        try {
            consumer.commitAsync(offsets, (committed, error) -> {
                if (error == null) {
                    committed.forEach(pending::remove); // only where no newer offset is pending
                } else {
                    LOG.warn("asynchronous offset commit failed; the next commit covers it error={}", error.toString());
                }
            });
        } catch (KafkaException e) {
            LOG.warn("offset commit failed; the batch may be redelivered error={}", e.toString());
        }
    }

    private void commitNow(Map<TopicPartition, OffsetAndMetadata> offsets) {
        if (offsets.isEmpty()) {
            return;
        }
        try {
            consumer.commitSync(offsets, COMMIT_TIMEOUT);
        } catch (KafkaException e) {
            // The batch is processed; a failed commit means it may be read again after a restart, which the
            // state file's offsets (when there is one) already cover.
            LOG.warn("offset commit failed; the batch may be redelivered error={}", e.toString());
        }
    }

    @Override
    public void processed(Map<Partition, Long> nextOffsets) {
        processed.putAll(nextOffsets);
    }

    @Override
    public Set<Partition> takeMovedAway() {
        if (movedAway.isEmpty()) {
            return Set.of();
        }
        Set<Partition> taken = Set.copyOf(movedAway);
        movedAway.clear();
        return taken;
    }

    @Override
    public void rewind(Map<Partition, Long> positions) {
        buffered.removeIf(record -> positions.containsKey(new Partition(record.topic(), record.partition())));
        positions.forEach((partition, offset) -> {
            consumer.seek(new TopicPartition(partition.topic(), partition.partition()), offset);
            processed.put(partition, offset);
        });
    }

    @Override
    public Map<Partition, String> takeAssignedMetadata() {
        if (assignedMetadata.isEmpty()) {
            return Map.of();
        }
        Map<Partition, String> taken = Map.copyOf(assignedMetadata);
        assignedMetadata.clear();
        return taken;
    }

    @Override
    public Set<Partition> takeRevoked() {
        if (revoked.isEmpty()) {
            return Set.of();
        }
        Set<Partition> taken = Set.copyOf(revoked);
        revoked.clear();
        return taken;
    }

    @Override
    public java.util.Optional<Set<Partition>> assignment() {
        Set<Partition> held = new HashSet<>();
        for (TopicPartition partition : consumer.assignment()) {
            held.add(new Partition(partition.topic(), partition.partition()));
        }
        return java.util.Optional.of(held);
    }

    /**
     * Asks the partitions' leaders for their end offsets and compares them with what this reader handed out. A
     * partition whose leader does not answer within a few seconds is left out of the answer.
     */
    @Override
    public Map<Partition, Boolean> readToEnd(Set<Partition> partitions) {
        Map<Partition, Boolean> answer = new HashMap<>();
        Map<TopicPartition, Partition> asked = new HashMap<>();
        Set<TopicPartition> held = consumer.assignment();
        for (Partition partition : partitions) {
            TopicPartition topicPartition = new TopicPartition(partition.topic(), partition.partition());
            if (held.contains(topicPartition)) {
                asked.put(topicPartition, partition);
            }
        }
        if (asked.isEmpty()) {
            return answer;
        }
        try {
            Map<TopicPartition, Long> ends = consumer.endOffsets(asked.keySet(), END_OFFSETS_TIMEOUT);
            for (Map.Entry<TopicPartition, Long> end : ends.entrySet()) {
                Partition partition = asked.get(end.getKey());
                boolean unreadBuffered = buffered.stream().anyMatch(record -> record.partition() == partition.partition()
                        && record.topic().equals(partition.topic()));
                long position = consumer.position(end.getKey(), END_OFFSETS_TIMEOUT);
                answer.put(partition, !unreadBuffered && position >= end.getValue());
            }
        } catch (KafkaException e) {
            LOG.warn("cannot ask the brokers how far the partitions go partitions={} error={}", asked.values(), e.toString());
        }
        return answer;
    }

    /** Messages per partition not yet read, for the consumer_lag gauge. */
    public Map<Partition, Long> lag() {
        Map<Partition, Long> lag = new HashMap<>();
        for (TopicPartition partition : consumer.assignment()) {
            consumer.currentLag(partition).ifPresent(value -> lag.put(new Partition(partition.topic(), partition.partition()), value));
        }
        return lag;
    }

    @Override
    public void close() {
        try {
            commitNow(Map.copyOf(pending));
            pending.clear();
        } catch (RuntimeException e) {
            LOG.warn("final offset commit failed; the last batch may be redelivered error={}", e.toString());
        }
        consumer.close(org.apache.kafka.clients.consumer.CloseOptions.timeout(Duration.ofSeconds(5)));
    }

    @Override
    public String toString() {
        return where;
    }
}
