// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink;

import dev.mallard.flow.source.Source.Partition;
import dev.mallard.flow.state.PipelineIdentity;
import java.util.Map;

/**
 * Where a pipeline delivers each batch's result. {@link #write} hands a batch over; {@link #flush} returns
 * once everything written is durable at the destination, so offsets may be committed after it.
 */
public interface Sink extends AutoCloseable {
    void write(ResultTable batch);

    void flush();

    /**
     * The source positions (next offsets) the batch about to be written reaches, given before {@link #write}. A sink
     * that commits them in the same transaction as the rows (Iceberg's snapshot) reports them back through
     * {@link #committedPositions}; others ignore them.
     */
    default void positions(PipelineIdentity pipeline, Map<Partition, Long> nextOffsets) {}

    /**
     * The positions this sink's destination committed with the pipeline's rows, per partition: after a crash between
     * the sink's commit and the offsets' commit they are ahead of the state's, and reading resumes from them.
     */
    default Map<Partition, Long> committedPositions(PipelineIdentity pipeline) {
        return Map.of();
    }

    @Override
    default void close() {}
}
