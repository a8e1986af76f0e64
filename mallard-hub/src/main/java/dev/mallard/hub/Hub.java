// SPDX-License-Identifier: Apache-2.0
package dev.mallard.hub;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.flow.config.PipelineConfig;
import dev.mallard.flow.config.PipelineConfigReader;
import dev.mallard.flow.pipeline.PipelineRunner;
import dev.mallard.server.config.AccessMode;
import dev.mallard.server.hosted.HostContext;
import dev.mallard.server.hosted.Hosted;
import io.helidon.webserver.http.HttpRouting;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.OutputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The hub: the pipelines a {@code mallard server} runs on its own database, each on a thread and a DuckDB connection
 * of its own, with its commands, handler tables, views and (with {@code state}) its offsets in that database. It
 * serves {@code /v1/pipelines}, adds the pipelines to {@code /health} (degraded while one has failed) and their series
 * to {@code /metrics} (each with its {@code pipeline} label), and drains every pipeline when the server closes.
 */
public final class Hub implements Hosted {
    private static final Logger LOG = LoggerFactory.getLogger(Hub.class);

    private final Map<String, HostedPipeline> pipelines;
    private final AccessMode accessMode;
    private final Set<String> admins;
    private final HostContext context;
    private volatile boolean drained = true;

    private Hub(Map<String, HostedPipeline> pipelines, HostContext context) {
        this.pipelines = pipelines;
        this.context = context;
        this.accessMode = context.accessMode();
        this.admins = Set.copyOf(context.config().pipelineAdmins());
    }

    /**
     * Reads every pipeline of the context's configuration and starts each on its own thread; a configuration that does
     * not read, or two pipelines of one name, stop the server's start.
     */
    public static Hub start(HostContext context) {
        return start(context, ConfigEnvironment.fromSystem());
    }

    /** As {@link #start(HostContext)}, the pipelines' templates read against {@code environment}. */
    public static Hub start(HostContext context, ConfigEnvironment environment) {
        requireNonNull(context, "context is null");
        requireNonNull(environment, "environment is null");
        OutputStream console = new FileOutputStream(FileDescriptor.out);
        Map<String, HostedPipeline> pipelines = new LinkedHashMap<>();
        for (Path file : context.config().pipelines()) {
            PipelineConfigReader.Result result = new PipelineConfigReader(environment).read(file);
            result.warnings().forEach(warning -> LOG.warn("pipeline configuration warning file={} warning={}", file, warning.format()));
            PipelineConfig config = result.orThrow();
            String name = config.pipeline().name();
            if (pipelines.containsKey(name)) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "two hosted pipelines are named " + name + " (the second in " + file
                        + "); a hub needs each pipeline.name once, since it names the pipeline's routes, series and offsets");
            }
            pipelines.put(name, new HostedPipeline(config, environment, host(context, config), console));
        }
        Hub hub = new Hub(pipelines, context);
        for (HostedPipeline pipeline : pipelines.values()) {
            io.micrometer.core.instrument.Gauge.builder("mallard_hub_pipeline_failed", pipeline,
                            p -> p.status().state() == PipelineState.FAILED ? 1 : 0)
                    .description("1 while the hosted pipeline is FAILED (GET /v1/pipelines/{name} shows its error), else 0")
                    .tags("pipeline", pipeline.name()).register(context.metrics().meters());
        }
        pipelines.values().forEach(HostedPipeline::start);
        LOG.info("hub started pipelines={}", pipelines.keySet());
        return hub;
    }

    /**
     * Where the pipeline runs: the server's database and meters; its offsets in a schema of its own, unless the server's
     * database is the pipeline's own state file ({@code mallard run --serve}), where they stay as {@code mallard run} keeps them.
     */
    private static PipelineRunner.Host host(HostContext context, PipelineConfig config) {
        Optional<Path> database = context.database().file().map(file -> file.toAbsolutePath().normalize());
        Optional<Path> state = config.pipeline().statePath().map(path -> Path.of(path).toAbsolutePath().normalize());
        boolean ownFile = database.isPresent() && database.equals(state);
        return new PipelineRunner.Host(context.database(), context.metrics(),
                ownFile ? Optional.empty() : Optional.of(PipelineRunner.offsetsSchema(config.pipeline().name())));
    }

    /** The hosted pipelines, in the order they were configured. */
    public List<PipelineStatus> pipelines() {
        List<PipelineStatus> all = new ArrayList<>();
        pipelines.values().forEach(pipeline -> all.add(pipeline.status()));
        return all;
    }

    /** @throws MallardException {@code user.pipeline.not_found} when no hosted pipeline has that name */
    public PipelineStatus pipeline(String name) {
        return find(name).status();
    }

    /** Asks the pipeline to stop (it commits the batch it holds first) and answers its state. */
    public PipelineStatus stop(String name) {
        HostedPipeline pipeline = find(name);
        pipeline.stop();
        return pipeline.status();
    }

    /** Starts a stopped or failed pipeline again, from the offsets it committed. */
    public PipelineStatus start(String name) {
        HostedPipeline pipeline = find(name);
        pipeline.start();
        return pipeline.status();
    }

    /** Whether {@code username} may stop and start pipelines: any user in COMPLETE mode, else the {@code pipeline_admins}. */
    public boolean mayControl(String username) {
        return accessMode == AccessMode.COMPLETE || admins.contains(username);
    }

    private HostedPipeline find(String name) {
        HostedPipeline pipeline = pipelines.get(name);
        if (pipeline == null) {
            throw new MallardException(ErrorCode.USER_PIPELINE_NOT_FOUND, "no pipeline named " + name + " runs in this server; GET /v1/pipelines lists "
                    + (pipelines.isEmpty() ? "none" : String.join(", ", pipelines.keySet())));
        }
        return pipeline;
    }

    @Override
    public void routes(HttpRouting.Builder routes) {
        new PipelinesApi(this, context).routes(routes);
    }

    @Override
    public boolean health(ObjectNode body) {
        ObjectNode states = body.putObject("pipelines");
        boolean healthy = true;
        for (PipelineStatus status : pipelines()) {
            ObjectNode entry = states.putObject(status.name());
            entry.put("state", status.state().name());
            status.lastError().ifPresent(error -> entry.putObject("last_error").put("code", error.code()).put("message", error.message()));
            healthy &= status.state() != PipelineState.FAILED;
        }
        return healthy;
    }

    /** Whether the last {@link #close} saw every pipeline commit what it held within its drain deadline. */
    public boolean drainedInTime() {
        return drained;
    }

    /** Stops every pipeline at once and waits for each, at most its {@code drain_deadline_seconds}. */
    @Override
    public void close() {
        pipelines.values().forEach(HostedPipeline::stop);
        boolean all = true;
        for (HostedPipeline pipeline : pipelines.values()) {
            if (!pipeline.awaitEnd(pipeline.drainDeadlineSeconds())) {
                all = false;
                LOG.error("{}: pipeline {} did not write and commit its batch within {} s; it will be read again on restart",
                        ErrorCode.SYSTEM_DRAIN_INCOMPLETE.code(), pipeline.name(), pipeline.drainDeadlineSeconds());
            }
        }
        drained = all;
        pipelines.values().forEach(HostedPipeline::release);
        LOG.info("hub stopped drained={}", all);
    }

    /** The hub as a server's hosting: {@code MallardServer.start(config, Hub.hosting())}. */
    public static Hosted.Factory hosting() {
        return Hub::start;
    }
}
