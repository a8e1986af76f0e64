// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.metrics;

/**
 * The stages of a batch, as the {@code phase} label of {@code phase_duration} and {@code error_count}
 * names them. The labels are SQLFlow's, so dashboards and DLQ records read the same in both.
 */
public enum Phase {
    SOURCE_READ("source.read"),
    HANDLER_WRITE("handler.write"),
    HANDLER_INVOKE("handler.invoke"),
    SINK_WRITE("sink.write"),
    SINK_FLUSH("sink.flush"),
    STATE_COMMIT("state.commit"),
    SOURCE_COMMIT("source.commit");

    private final String label;

    Phase(String label) {
        this.label = label;
    }

    /** The label value, e.g. {@code handler.invoke}. */
    public String label() {
        return label;
    }
}
