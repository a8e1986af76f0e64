// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.pipeline;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.core.engine.Engine;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.metrics.MetricsRegistry;
import dev.mallard.flow.config.PipelineConfig;
import dev.mallard.flow.handler.Handler;
import dev.mallard.flow.handler.Handlers;
import dev.mallard.flow.handler.RecordColumns;
import dev.mallard.flow.sink.ConsoleSink;
import dev.mallard.flow.source.Message;
import dev.mallard.flow.window.Windows;
import dev.mallard.views.MaterializedViews;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@code mallard dev invoke}: runs a configuration's commands and handler over a JSONL fixture as one batch
 * and prints the result rows as JSON lines. The configured sink is never touched, so it is safe on a
 * production configuration. State paths are ignored: the run is in memory.
 */
public final class DevInvoke {
    private DevInvoke() {}

    public static long run(PipelineConfig config, Path fixture, ConfigEnvironment environment, OutputStream out) {
        try (Engine engine = Engine.inMemory()) {
            return run(engine, config, readFixture(fixture), environment, out);
        }
    }

    /** Runs on an engine the caller opened (the CLI opens it while the config is still being read). */
    public static long run(Engine engine, PipelineConfig config, List<Message> batch, ConfigEnvironment environment, OutputStream out) {
        Optional<MaterializedViews> views = PipelineSetup.run(config, engine.connection());
        RecordColumns records = RecordColumns.of(config.pipeline().source());
        try (Handler handler = Handlers.create(config.pipeline().handler(), records, engine.connection(), environment);
                ConsoleSink console = new ConsoleSink(out, engine.allocator());
                MetricsRegistry registry = new MetricsRegistry();
                Windows windows = Windows.open(config, engine, sink -> new ConsoleSink(out, engine.allocator()), registry)) {
            if (windows.isEmpty()) {
                return new BatchProcessor(handler, console).process(batch);
            }
            // Windows: their late-record rule, the batch, then every bucket closed and printed, as if the topic
            // had gone quiet. The windows' own sinks are not touched either.
            List<Message> admitted = windows.admit(batch, System.nanoTime(), ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now())).messages();
            long rows = new BatchProcessor(handler, console).process(admitted);
            if (windows.placed(admitted, System.nanoTime())) {
                windows.closeBuckets();
            }
            windows.closeEverything();
            windows.pollAll(System.nanoTime());
            return rows;
        } finally {
            views.ifPresent(MaterializedViews::close);
        }
    }

    /** One message per line; the split is on raw bytes so no line is decoded twice. */
    public static List<Message> readFixture(Path fixture) {
        byte[] bytes;
        try (InputStream in = Files.newInputStream(fixture)) {
            bytes = in.readAllBytes();
        } catch (NoSuchFileException e) {
            throw new MallardException(ErrorCode.USER_CONFIG_NOT_FOUND, "fixture " + fixture + " does not exist");
        } catch (IOException e) {
            throw new MallardException(ErrorCode.USER_CONFIG_NOT_FOUND, "cannot read fixture " + fixture + ": " + e.getMessage());
        }
        String name = fixture.getFileName().toString();
        List<Message> messages = new ArrayList<>();
        int start = 0;
        long line = 0;
        for (int i = 0; i <= bytes.length; i++) {
            if (i == bytes.length || bytes[i] == '\n') {
                int end = i > start && bytes[i - 1] == '\r' ? i - 1 : i;
                if (end > start || i < bytes.length) {
                    byte[] value = new byte[end - start];
                    System.arraycopy(bytes, start, value, 0, value.length);
                    messages.add(Message.ofLine(name, line, value));
                }
                line++;
                start = i + 1;
            }
        }
        return messages;
    }
}
