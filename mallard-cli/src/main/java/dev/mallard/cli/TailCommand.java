// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.flow.config.PipelineConfig;
import dev.mallard.flow.config.PipelineConfigReader;
import dev.mallard.flow.pipeline.PipelineRunner;
import dev.mallard.flow.source.Message;
import dev.mallard.flow.source.Source;
import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "tail", description = {
    "Print every message of a config's source, one per line, with no handler or sink. Commits no offsets."})
final class TailCommand implements Callable<Integer> {
    @picocli.CommandLine.Mixin
    ConfigFile configFile = new ConfigFile();

    @Option(names = {"--messages", "--max-msgs"}, paramLabel = "N", defaultValue = "0", description = "Stop after N messages; 0 runs until stopped.")
    long maxMessages;

    @Override
    public Integer call() throws Exception {
        PipelineConfig pipeline = new PipelineConfigReader(ConfigEnvironment.fromSystem()).read(configFile.path("tail")).orThrow();
        OutputStream out = new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16);
        long printed = 0;
        try (Source source = PipelineRunner.openSource(pipeline, partition -> Optional.empty())) {
            while (maxMessages == 0 || printed < maxMessages) {
                int want = (int) Math.min(1000, maxMessages == 0 ? 1000 : maxMessages - printed);
                for (Message message : source.poll(Duration.ofMillis(500), want)) {
                    out.write(message.value());
                    out.write('\n');
                    printed++;
                }
                out.flush();
            }
        } catch (java.io.IOException e) {
            throw new MallardException(ErrorCode.SYSTEM_IO_FAILED, "cannot write to stdout: " + e.getMessage(), e);
        }
        return 0;
    }
}
