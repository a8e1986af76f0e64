// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.flow.config.PipelineConfig;
import dev.mallard.flow.config.PipelineConfigReader;
import dev.mallard.flow.pipeline.PipelineRunner;
import dev.mallard.testkit.EmbeddedKafka;
import dev.mallard.testkit.EventGenerator;
import dev.mallard.testkit.Progress;
import dev.mallard.testkit.Publisher;
import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "demo", description = {
    "Run the main job on one machine with nothing installed: a broker, test events and a count-by-city pipeline.",
    "Starts a Kafka broker in this process, publishes SQLFlow-shaped test events, runs a count-by-city pipeline",
    "over them and prints its output."})
final class DemoCommand implements Callable<Integer> {
    static final String TOPIC = "mallard-demo-events";

    @Option(names = "--messages", defaultValue = "10000", paramLabel = "N", description = "Events to publish and count (default ${DEFAULT-VALUE}).")
    long messages;

    @Option(names = "--batch-size", defaultValue = "5000", paramLabel = "N", description = "The pipeline's batch_size (default ${DEFAULT-VALUE}).")
    int batchSize;

    @Override
    public Integer call() throws IOException {
        if (messages < 1 || batchSize < 1) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "--messages and --batch-size must be at least 1");
        }
        PrintStream err = System.err;
        err.println("demo: starting a Kafka broker in this process...");
        try (EmbeddedKafka kafka = EmbeddedKafka.start(EmbeddedKafka.Options.defaults().withPort(0))) {
            kafka.createTopic(TOPIC, 3);
            try (Publisher publisher = Publisher.connect(kafka.bootstrapServers(), Progress.onTerminal())) {
                long published = publisher.publish(TOPIC, EventGenerator.userActions(7), messages);
                err.println("demo: published " + published + " events to " + TOPIC + " at " + kafka.bootstrapServers());
            }
            ConfigEnvironment environment = ConfigEnvironment.from(Map.of(
                    "MALLARD_DEMO_BROKERS", kafka.bootstrapServers(),
                    "MALLARD_DEMO_TOPIC", TOPIC,
                    "MALLARD_DEMO_BATCH_SIZE", Integer.toString(batchSize)));
            PipelineConfig config = new PipelineConfigReader(environment).read("demo.yml", template()).orThrow();
            err.println("demo: running the pipeline (StructuredBatch, count by city, batch_size " + batchSize + "); each batch prints its rows:");
            OutputStream out = new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16);
            long started = System.nanoTime();
            PipelineRunner.Outcome outcome;
            try (PipelineRunner runner = new PipelineRunner(config, environment, new PipelineRunner.Options(messages, out, Optional.empty()))) {
                outcome = runner.run();
            }
            out.flush();
            double seconds = (System.nanoTime() - started) / 1e9;
            err.printf("demo: %d messages in %.2f s (%.0f msgs/s), %d errors; try `./mallard run` on examples/ next%n",
                    outcome.messagesConsumed(), seconds, outcome.messagesConsumed() / seconds, outcome.numErrors());
        }
        return 0;
    }

    private static String template() throws IOException {
        try (InputStream in = DemoCommand.class.getResourceAsStream("demo.yml")) {
            if (in == null) {
                throw new MallardException(ErrorCode.SYSTEM_INTERNAL, "demo.yml is missing from the build");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
