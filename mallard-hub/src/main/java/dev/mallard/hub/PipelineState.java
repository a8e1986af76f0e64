// SPDX-License-Identifier: Apache-2.0
package dev.mallard.hub;

/** Where a hosted pipeline is in its life, as {@code GET /v1/pipelines} shows it. */
public enum PipelineState {
    /** Its thread runs the configuration's commands and tables, or opens its source. */
    STARTING,
    /** It consumes. */
    RUNNING,
    /** A stop was asked: the batch it holds is written and committed, then it ends. */
    STOPPING,
    /** Stopped on request (or by the server's drain); {@code start} runs it again from its committed offsets. */
    STOPPED,
    /** It ended on an error, shown as its {@code last_error}; the server and the other pipelines go on. */
    FAILED
}
