package dev.mallard.cli;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.flow.config.PipelineConfig;
import dev.mallard.flow.config.PipelineConfigReader;
import dev.mallard.flow.pipeline.DevInvoke;
import java.io.BufferedOutputStream;
import java.io.FileOutputStream;
import java.io.FileDescriptor;
import java.io.OutputStream;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

@Command(name = "dev", description = "Development tools: run a pipeline's SQL over a fixture.",
        subcommands = {DevCommand.Invoke.class})
final class DevCommand implements Runnable {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    @Command(name = "invoke", description = {
        "Run the config's commands and handler over a JSONL fixture as one batch and print the result rows,",
        "one JSON object per line. The sink is not touched, so it is safe on a production config."})
    static final class Invoke implements Callable<Integer> {
        @Parameters(index = "0", paramLabel = "<config>", description = "The pipeline configuration (YAML, Jinja template).")
        Path config;

        @Parameters(index = "1", paramLabel = "<fixture.jsonl>", description = "One JSON message per line; blank lines are skipped.")
        Path fixture;

        @Override
        public Integer call() throws Exception {
            ConfigEnvironment environment = ConfigEnvironment.fromSystem();
            PipelineConfigReader.Result result = new PipelineConfigReader(environment).read(config);
            result.warnings().forEach(warning -> System.err.println("warning: " + warning.format()));
            PipelineConfig pipeline = result.orThrow();
            OutputStream out = new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16);
            DevInvoke.run(pipeline, fixture, environment, out);
            out.flush();
            return 0;
        }
    }
}
