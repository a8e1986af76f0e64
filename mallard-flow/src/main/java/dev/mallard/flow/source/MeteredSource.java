// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.source;

import dev.mallard.core.metrics.MetricsRegistry;

/** A source with series of its own (docs/sources.md), registered once the pipeline's registry exists. */
public interface MeteredSource {
    /** Registers the source's meters, tagged {@code pipeline=<name>}; called once, right after the source opens. */
    void registerMeters(MetricsRegistry registry, String pipeline);
}
