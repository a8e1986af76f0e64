// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.hosted;

import java.nio.file.Path;
import java.util.List;

/**
 * What the server hosts beside its listeners: the pipeline configurations it runs ({@code pipelines}) and the users
 * who may stop and start them whatever the access mode ({@code pipeline_admins}).
 */
public record HostedConfig(List<Path> pipelines, List<String> pipelineAdmins) {
    public static final HostedConfig NONE = new HostedConfig(List.of(), List.of());

    public HostedConfig {
        pipelines = List.copyOf(pipelines);
        pipelineAdmins = List.copyOf(pipelineAdmins);
    }

    /** The same, with {@code more} pipelines after these (the command line's {@code --pipeline} after the file's). */
    public HostedConfig withPipelines(List<Path> more) {
        List<Path> all = new java.util.ArrayList<>(pipelines);
        all.addAll(more);
        return new HostedConfig(all, pipelineAdmins);
    }
}
