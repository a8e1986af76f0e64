// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.testkit.EventGenerator;
import dev.mallard.testkit.Progress;
import dev.mallard.testkit.Publisher;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "publish", description = {
    "Publish generated test events, or each non-blank line of a file, to a Kafka topic.",
    "Creates the topic if it is missing. Prints `published <n> messages to <topic>`. Progress shows on stderr",
    "when it is a terminal."})
final class DevPublishCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--topic", required = true, paramLabel = "<topic>", description = "The topic to publish to.")
    String topic;

    @Option(names = {"--messages", "--num-messages"}, paramLabel = "<n>",
            description = "How many events to generate; with --from-file, the most lines to publish. Required without --from-file.")
    Long numMessages;

    @Option(names = "--brokers", defaultValue = "127.0.0.1:9092", paramLabel = "<host:port,...>",
            description = "Bootstrap servers. Default: ${DEFAULT-VALUE}.")
    String brokers;

    @Option(names = "--fixture", defaultValue = EventGenerator.USER_ACTION, paramLabel = "<name>",
            description = "The generated events' shape; ${DEFAULT-VALUE} is the one there is (its city alternates New York, Baltimore).")
    String fixture;

    @Option(names = "--from-file", paramLabel = "<file.jsonl>", description = "Publish each non-blank line of this file instead, as it is.")
    Path fromFile;

    @Option(names = "--partitions", paramLabel = "<n>",
            description = "Partitions of the topic when it is created here. Default: the broker's num.partitions.")
    Integer partitions;

    @Option(names = "--seed", defaultValue = "0", paramLabel = "<n>",
            description = "Seed of the generated events; the same seed publishes the same events. Default: ${DEFAULT-VALUE}.")
    long seed;

    @Override
    public Integer call() {
        validate();
        // Before connecting: a wrong fixture or a missing file should not wait on a broker to be reported.
        Optional<EventGenerator> events = fromFile == null ? Optional.of(EventGenerator.fixture(fixture, seed)) : Optional.empty();
        try (Publisher publisher = Publisher.connect(brokers, Progress.onTerminal())) {
            publisher.ensureTopic(topic, Optional.ofNullable(partitions));
            long published = events.isPresent()
                    ? publisher.publish(topic, events.get(), numMessages)
                    : publisher.publishLines(topic, fromFile, numMessages == null ? Long.MAX_VALUE : numMessages);
            spec.commandLine().getOut().println("published " + published + " messages to " + topic);
            spec.commandLine().getOut().flush();
        }
        return 0;
    }

    private void validate() {
        if (fromFile == null && numMessages == null) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "--messages (or --num-messages) is required unless --from-file is given");
        }
        if (numMessages != null && numMessages < 0) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "--messages must not be negative, was " + numMessages);
        }
        if (partitions != null && partitions < 1) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "--partitions must be at least 1, was " + partitions);
        }
        if (fromFile != null && !Files.isReadable(fromFile)) {
            throw new MallardException(ErrorCode.USER_CONFIG_NOT_FOUND, fromFile + " does not exist or cannot be read");
        }
    }
}
