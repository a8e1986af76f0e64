// SPDX-License-Identifier: Apache-2.0
package dev.mallard.testkit;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/** Creates topics and waits until the broker serves them, so a client started next never sees them missing. */
final class Topics {
    static final Duration TIMEOUT = Duration.ofSeconds(30);

    private Topics() {}

    /**
     * Creates the topic unless it exists, with this many partitions or the broker's default, and the broker's default
     * replication factor; returns whether it created it.
     */
    static boolean ensure(Admin admin, String name, Optional<Integer> partitions) {
        partitions.filter(count -> count < 1).ifPresent(count -> {
            throw new IllegalArgumentException("partitions must be at least 1, was " + count);
        });
        boolean created;
        try {
            admin.createTopics(List.of(new NewTopic(name, partitions, Optional.empty()))).all().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            created = true;
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw failure("cannot create topic " + name, e.getCause());
            }
            created = false;
        } catch (TimeoutException e) {
            throw new MallardException(ErrorCode.SYSTEM_KAFKA_UNREACHABLE,
                    "creating topic " + name + " got no answer within " + TIMEOUT.toSeconds() + " s", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw failure("interrupted while creating topic " + name, e);
        }
        int count = awaitLeaders(admin, name);
        awaitLeadersServing(admin, name, count);
        return created;
    }

    /*
     * The metadata cache names a leader before that broker's replica manager has become one: a produce request then
     * gets NOT_LEADER_OR_FOLLOWER, and an idempotent producer whose first batch failed that way while later ones were
     * in flight can be stuck on OUT_OF_ORDER_SEQUENCE_NUMBER until its delivery timeout. ListOffsets is answered by
     * the leader's replica manager, so once it succeeds for every partition a producer's first batches land.
     */
    private static void awaitLeadersServing(Admin admin, String name, int partitions) {
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (int partition = 0; partition < partitions; partition++) {
            latest.put(new TopicPartition(name, partition), OffsetSpec.latest());
        }
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (true) {
            try {
                admin.listOffsets(latest).all().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                return;
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof org.apache.kafka.common.errors.RetriableException)) {
                    throw failure("cannot read the offsets of topic " + name, e.getCause());
                }
            } catch (TimeoutException e) {
                throw new MallardException(ErrorCode.SYSTEM_KAFKA_UNREACHABLE,
                        "reading the offsets of topic " + name + " got no answer within " + TIMEOUT.toSeconds() + " s", e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw failure("interrupted while waiting for topic " + name, e);
            }
            if (System.nanoTime() > deadline) {
                throw new MallardException(ErrorCode.SYSTEM_KAFKA_FAILED,
                        "the leaders of topic " + name + " do not serve it after " + TIMEOUT.toSeconds() + " s");
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw failure("interrupted while waiting for topic " + name, e);
            }
        }
    }

    /*
     * The controller acknowledges a new topic before the broker's metadata cache has it; until then producers and
     * consumers see UNKNOWN_TOPIC_OR_PARTITION. Admin describes from the broker's cache, so poll it.
     */
    /** Returns the topic's partition count once every partition has a leader. */
    private static int awaitLeaders(Admin admin, String name) {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (true) {
            try {
                TopicDescription description = admin.describeTopics(Set.of(name)).allTopicNames()
                        .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).get(name);
                if (description.partitions().stream().allMatch(partition -> partition.leader() != null && !partition.leader().isEmpty())) {
                    return description.partitions().size();
                }
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) {
                    throw failure("cannot describe topic " + name, e.getCause());
                }
            } catch (TimeoutException e) {
                throw new MallardException(ErrorCode.SYSTEM_KAFKA_UNREACHABLE,
                        "describing topic " + name + " got no answer within " + TIMEOUT.toSeconds() + " s", e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw failure("interrupted while waiting for topic " + name, e);
            }
            if (System.nanoTime() > deadline) {
                throw new MallardException(ErrorCode.SYSTEM_KAFKA_FAILED,
                        "topic " + name + " has partitions without a leader after " + TIMEOUT.toSeconds() + " s");
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw failure("interrupted while waiting for topic " + name, e);
            }
        }
    }

    private static MallardException failure(String what, Throwable cause) {
        return new MallardException(ErrorCode.SYSTEM_KAFKA_FAILED, what + ": " + EmbeddedKafka.rootMessage(cause), cause);
    }
}
