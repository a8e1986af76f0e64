// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.flow.config.PipelineConfig;
import dev.mallard.flow.config.PipelineConfigReader;
import dev.mallard.flow.pipeline.DevInvoke;
import java.io.BufferedOutputStream;
import java.io.FileOutputStream;
import java.io.FileDescriptor;
import java.io.OutputStream;
import java.nio.file.Path;
import dev.mallard.core.engine.Engine;
import dev.mallard.flow.source.Message;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

@Command(name = "dev", description = "Development tools: run a pipeline's SQL over a fixture, run a Kafka broker, publish test events.",
        subcommands = {DevCommand.Invoke.class, DevKafkaCommand.class, DevPublishCommand.class})
final class DevCommand implements Runnable {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    @Command(name = "invoke", description = {
        "Run the config's commands and handler over a JSONL fixture as one batch and print the result rows.",
        "Rows are printed one JSON object per line. The sink is not touched, so it is safe on a production config."})
    static final class Invoke implements Callable<Integer> {
        @picocli.CommandLine.Mixin
        ConfigFile configFile = new ConfigFile();

        @Parameters(index = "1", arity = "0..1", paramLabel = "<fixture.jsonl>", description = "One JSON message per line; blank lines are skipped.")
        Path secondPositional;

        @Override
        public Integer call() throws Exception {
            // With -c the fixture is the only positional argument, so it lands where the config would otherwise be.
            boolean configByOption = configFile.option != null && secondPositional == null;
            Path config = configByOption ? configFile.option : configFile.path("dev invoke");
            Path fixture = configByOption ? configFile.positional : secondPositional;
            if (fixture == null) {
                throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "name the fixture after the configuration:"
                        + " mallard dev invoke <config> <fixture.jsonl> or mallard dev invoke -c <config> <fixture.jsonl>");
            }
            // DuckDB's native library and the fixture load while the template renders and the schema checks:
            // they are independent, and a short command is mostly start-up.
            CompletableFuture<Engine> engine = CompletableFuture.supplyAsync(Engine::inMemory);
            CompletableFuture<List<Message>> batch = CompletableFuture.supplyAsync(() -> DevInvoke.readFixture(fixture));
            try {
                ConfigEnvironment environment = ConfigEnvironment.fromSystem();
                PipelineConfigReader.Result result = new PipelineConfigReader(environment).read(config);
                result.warnings().forEach(warning -> System.err.println("warning: " + warning.format()));
                PipelineConfig pipeline = result.orThrow();
                OutputStream out = new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16);
                DevInvoke.run(join(engine), pipeline, join(batch), environment, out);
                out.flush();
                return 0;
            } finally {
                engine.thenAccept(Engine::close);
            }
        }

        private static <T> T join(CompletableFuture<T> future) {
            try {
                return future.join();
            } catch (CompletionException e) {
                if (e.getCause() instanceof RuntimeException cause) {
                    throw cause;
                }
                throw e;
            }
        }
    }
}
