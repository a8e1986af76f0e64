// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.window;

import static java.util.Objects.requireNonNull;

import dev.mallard.flow.source.Message;
import dev.mallard.flow.source.Source.Partition;
import java.util.List;
import java.util.Map;

/**
 * What passes between a batch and its windows. The pipeline calls the windows and reads these answers; a window
 * never calls the pipeline: it states what it let through, where its watermark went, what is due to close, what
 * to commit to the source and what to read again, and the pipeline acts on it.
 */
public final class WindowHandOver {
    private WindowHandOver() {}

    /** Late records of one batch, by outcome ({@code window_late_rows_total}). */
    public record Late(long refused, long future, long recomputed, long finalized) {
        public static final Late NONE = new Late(0, 0, 0, 0);

        public Late plus(Late other) {
            return new Late(refused + other.refused, future + other.future, recomputed + other.recomputed, finalized + other.finalized);
        }
    }

    /** The records of a batch a window lets through, stamped with their event time, and what it refused. */
    public record Admitted(List<Message> messages, Late late) {
        public Admitted {
            messages = List.copyOf(messages);
            requireNonNull(late, "late is null");
        }
    }

    /**
     * Where the watermark is after a batch's rows were placed (in the batch's transaction), and whether buckets are
     * due to close once that transaction committed.
     */
    public record Placed(long watermark, boolean closeDue) {}

    /** What to commit to the source: per partition the position (held back by retained buckets) and the metadata. */
    public record Commit(Map<Partition, Long> positions, String metadata) {
        public Commit {
            positions = Map.copyOf(positions);
            requireNonNull(metadata, "metadata is null");
        }
    }

    /** One close: the buckets published (closed for the first time, and republished), the rows they held, and W. */
    public record Closed(long buckets, long republished, long rows, long upTo) {
        public static final Closed NOTHING = new Closed(0, 0, 0, Watermark.NONE);

        public boolean published() {
            return rows > 0;
        }
    }

    /** After a rebalance: per partition still held, the position to read it again from. */
    public record Rewind(Map<Partition, Long> positions) {
        public Rewind {
            positions = Map.copyOf(positions);
        }
    }
}
