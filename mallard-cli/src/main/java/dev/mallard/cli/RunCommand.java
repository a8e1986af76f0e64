// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.ExitCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.flow.config.PipelineConfig;
import dev.mallard.flow.config.PipelineConfigReader;
import dev.mallard.flow.pipeline.PipelineRunner;
import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import dev.mallard.server.config.ServerConfig;
import dev.mallard.server.config.ServerConfigReader;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "run", description = {
    "Run a pipeline: consume, batch, run the handler, write and flush the sink, commit.",
    "SIGTERM or SIGINT drains: the buffered batch is written and committed, then the process exits 0",
    "(15 when that takes longer than pipeline.drain_deadline_seconds).",
    "With --serve the pipeline runs inside a server instead (the hub, docs/hub.md): its views and tables are served",
    "over Flight SQL and HTTP as each batch commits."})
final class RunCommand implements Callable<Integer> {
    private static final Logger LOG = LoggerFactory.getLogger(RunCommand.class);

    @picocli.CommandLine.Mixin
    ConfigFile configFile = new ConfigFile();

    @Option(names = {"--messages", "--max-msgs", "--max-msgs-to-process"}, paramLabel = "N", defaultValue = "0",
            description = "Stop after N messages, running the final partial batch; 0 runs until stopped.")
    long maxMessages;

    @Option(names = "--metrics", paramLabel = "prometheus",
            description = "Serve /metrics (Prometheus), /healthz and, with a state path, /stats while the pipeline runs.")
    String metrics;

    @Option(names = "--metrics-port", paramLabel = "PORT", defaultValue = "8000", description = "The port for --metrics (default ${DEFAULT-VALUE}).")
    int metricsPort;

    @Option(names = "--stats-json", paramLabel = "PATH", description = "Write {\"messages_consumed\":N,\"num_errors\":N} here at exit.")
    Path statsJson;

    @Option(names = "--serve", paramLabel = "<server.yml>", arity = "0..1", fallbackValue = "",
            description = "Run the pipeline inside a server hosting just it, configured by this file (optional) and --conf;"
                    + " without a database key the server's database is the pipeline's state.path.")
    String serve;

    @Option(names = "--conf", paramLabel = "key=value", description = "With --serve: set or override one server key, repeatable (as mallard server --conf).")
    List<String> serverOverrides = new ArrayList<>();

    @Override
    public Integer call() throws Exception {
        Path config = configFile.path("run");
        if (serve != null) {
            return serve(config);
        }
        if (!serverOverrides.isEmpty()) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "--conf sets server keys and needs --serve");
        }
        if (metrics != null && !metrics.equals("prometheus")) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "--metrics takes prometheus, not " + metrics);
        }
        ConfigEnvironment environment = ConfigEnvironment.fromSystem();
        PipelineConfigReader.Result result = new PipelineConfigReader(environment).read(config);
        result.warnings().forEach(warning -> System.err.println("warning: " + warning.format()));
        PipelineConfig pipeline = result.orThrow();
        OutputStream out = new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16);
        PipelineRunner runner = new PipelineRunner(pipeline, environment, new PipelineRunner.Options(maxMessages, out,
                metrics == null ? java.util.Optional.empty() : java.util.Optional.of(metricsPort)));

        AtomicReference<RuntimeException> failure = new AtomicReference<>();
        Thread pipelineThread = Thread.ofPlatform().name("pipeline").unstarted(() -> {
            try {
                runner.run();
            } catch (RuntimeException e) {
                failure.set(e);
            }
        });
        AtomicBoolean finished = new AtomicBoolean();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> drain(runner, pipelineThread, finished, failure, out,
                pipeline.pipeline().drainDeadlineSeconds()), "drain"));
        pipelineThread.start();
        pipelineThread.join();
        finished.set(true);
        out.flush();
        writeStats(runner);
        if (failure.get() != null) {
            throw failure.get();
        }
        return 0;
    }

    /**
     * {@code --serve}: a server hosting this one pipeline. Without a {@code database} key, its database is the pipeline's
     * state file (warehouse: that file's directory, with its {@code storage_compatibility}), so the pipeline keeps its
     * offsets where {@code mallard run} keeps them.
     */
    private int serve(Path pipelineFile) throws InterruptedException {
        if (maxMessages != 0 || metrics != null || statsJson != null) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "--serve runs until stopped and serves the server's /metrics;"
                    + " drop --messages, --metrics and --stats-json");
        }
        ConfigEnvironment environment = ConfigEnvironment.fromSystem();
        PipelineConfig pipeline = new PipelineConfigReader(environment).read(pipelineFile).orThrow();
        List<String> overrides = new ArrayList<>(serverOverrides);
        Optional<Path> serverFile = serve.isBlank() ? Optional.empty() : Optional.of(Path.of(serve));
        ServerConfig settings = new ServerConfigReader(environment).read(serverFile, overrides);
        boolean databaseGiven = overrides.stream().anyMatch(o -> o.trim().startsWith("database=")) || settings.database().isPresent();
        if (!databaseGiven && pipeline.pipeline().statePath().isPresent()) {
            Path state = Path.of(pipeline.pipeline().statePath().get()).toAbsolutePath().normalize();
            overrides.add("warehouse=" + state.getParent());
            overrides.add("database=" + state.getFileName());
            if (!pipeline.pipeline().storageCompatibility().isLatest() && settings.storageCompatibility().isLatest()) {
                overrides.add("storage_compatibility=" + pipeline.pipeline().storageCompatibility().version());
            }
            settings = new ServerConfigReader(environment).read(serverFile, overrides);
        }
        return ServerCommand.serve(settings.withHosted(settings.hosted().withPipelines(List.of(pipelineFile))));
    }

    /**
     * On SIGTERM/SIGINT: stop consuming, let the pipeline write and commit what it holds, exit 0 or 15. A signal that
     * lands before the pipeline thread has started is a drain of nothing (exit 0), not the JVM's own 143. After the run
     * finished, the main thread's exit stands.
     */
    private void drain(PipelineRunner runner, Thread pipelineThread, AtomicBoolean finished, AtomicReference<RuntimeException> failure,
            OutputStream out, int deadlineSeconds) {
        if (finished.get()) {
            return;
        }
        LOG.info("stop requested: draining deadline_seconds={}", deadlineSeconds);
        runner.requestStop();
        try {
            pipelineThread.join(deadlineSeconds * 1000L);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        int exit;
        if (pipelineThread.isAlive()) {
            LOG.error("{}: the buffered batch was not written and committed within {} s; it will be read again on restart",
                    ErrorCode.SYSTEM_DRAIN_INCOMPLETE.code(), deadlineSeconds);
            exit = ExitCode.INCOMPLETE_DRAIN.code();
        } else if (failure.get() instanceof MallardException e) {
            System.err.println("error: " + e.describe());
            exit = e.errorCode().exitCode().code();
        } else {
            exit = failure.get() == null ? ExitCode.OK.code() : ExitCode.SYSTEM_FAULT.code();
        }
        try {
            out.flush();
            writeStats(runner);
        } catch (IOException e) {
            LOG.warn("could not write at exit error={}", e.toString());
        }
        System.err.flush();
        // halt: exit() from a shutdown hook would wait for this very hook.
        Runtime.getRuntime().halt(exit);
    }

    private void writeStats(PipelineRunner runner) throws IOException {
        if (statsJson != null) {
            Files.writeString(statsJson, runner.outcome().toJson() + "\n");
        }
    }
}
