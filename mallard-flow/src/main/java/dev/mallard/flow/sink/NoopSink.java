// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink;

/** Discards results: for benchmarks and for pipelines whose handler only updates state. */
public final class NoopSink implements Sink {
    @Override
    public void write(ResultTable batch) {}

    @Override
    public void flush() {}
}
