// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink;

import static java.util.Objects.requireNonNull;

import dev.mallard.flow.source.Source.Partition;
import dev.mallard.flow.state.PipelineIdentity;
import java.util.Map;

/** A sink around another that hands every call on; a subclass overrides what it adds to (retries, counts). */
abstract class ForwardingSink implements Sink {
    protected final Sink sink;

    ForwardingSink(Sink sink) {
        this.sink = requireNonNull(sink, "sink is null");
    }

    @Override
    public void write(ResultTable batch) {
        sink.write(batch);
    }

    @Override
    public void flush() {
        sink.flush();
    }

    @Override
    public void positions(PipelineIdentity pipeline, Map<Partition, Long> nextOffsets) {
        sink.positions(pipeline, nextOffsets);
    }

    @Override
    public Map<Partition, Long> committedPositions(PipelineIdentity pipeline) {
        return sink.committedPositions(pipeline);
    }

    @Override
    public void close() {
        sink.close();
    }
}
