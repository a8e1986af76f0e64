// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.testkit.EmbeddedKafka;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "kafka", description = {
    "Run a single-node Kafka broker (KRaft, PLAINTEXT on 127.0.0.1) in this process until interrupted.",
    "Prints `kafka ready at 127.0.0.1:<port>` on stdout once clients can connect; stops cleanly on SIGINT or SIGTERM."})
final class DevKafkaCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--port", defaultValue = "9092", paramLabel = "<port>",
            description = "The client port on 127.0.0.1; 0 picks a free one. Default: ${DEFAULT-VALUE}.")
    int port;

    @Option(names = "--dir", paramLabel = "<path>",
            description = "Keep topics and records in this directory across runs. Default: a temporary directory, deleted on exit.")
    Path dir;

    @Option(names = "--partitions", defaultValue = "1", paramLabel = "<n>",
            description = "Partitions of a topic created without a count (num.partitions). Default: ${DEFAULT-VALUE}.")
    int partitions;

    @Override
    public Integer call() throws InterruptedException {
        if (port < 0 || port > 65_535) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "--port must be 0 to 65535, was " + port);
        }
        if (partitions < 1) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "--partitions must be at least 1, was " + partitions);
        }
        EmbeddedKafka.Options options = EmbeddedKafka.Options.defaults().withPort(port).withDefaultPartitions(partitions);
        if (dir != null) {
            options = options.withDataDir(dir);
        }
        EmbeddedKafka kafka = EmbeddedKafka.start(options);
        // Signals end the JVM through its shutdown hooks; this one stops the broker so its logs are closed cleanly.
        Runtime.getRuntime().addShutdownHook(new Thread(kafka::close, "mallard-kafka-shutdown"));
        spec.commandLine().getOut().println("kafka ready at " + kafka.bootstrapServers());
        spec.commandLine().getOut().flush();
        new CountDownLatch(1).await();
        return 0;
    }
}
