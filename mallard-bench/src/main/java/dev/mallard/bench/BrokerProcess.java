// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import static java.util.Objects.requireNonNull;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code mallard dev kafka} in a process of its own, so that the broker's threads, heap and garbage collection are
 * never counted as a measured consumer's. It picks a free port and names it on its ready line.
 */
final class BrokerProcess implements AutoCloseable {
    static final String NAME = "broker";
    private static final Pattern READY = Pattern.compile("kafka ready at (\\S+)");
    private static final Duration STOP_GRACE = Duration.ofSeconds(30);

    private final ChildJvm jvm;
    private final Process process;
    private final String bootstrapServers;

    private BrokerProcess(ChildJvm jvm, Process process, String bootstrapServers) {
        this.jvm = jvm;
        this.process = process;
        this.bootstrapServers = bootstrapServers;
    }

    /** Starts the broker and waits for its ready line. */
    static BrokerProcess start(ChildJvm jvm, Path cliJar, Duration timeout) {
        requireNonNull(jvm, "jvm is null");
        requireNonNull(cliJar, "cliJar is null");
        requireNonNull(timeout, "timeout is null");
        Process process = jvm.startCli(NAME, cliJar, List.of("dev", "kafka", "--port", "0"));
        CompletableFuture<String> ready = new CompletableFuture<>();
        Thread.ofVirtual().name("broker-stdout").start(() -> {
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = lines.readLine()) != null) {
                    Matcher matcher = READY.matcher(line);
                    if (matcher.find()) {
                        ready.complete(matcher.group(1));
                    }
                }
                ready.completeExceptionally(new IllegalStateException("the broker exited without a ready line"));
            } catch (IOException e) {
                ready.completeExceptionally(e);
            }
        });
        try {
            return new BrokerProcess(jvm, process, ready.get(timeout.toMillis(), TimeUnit.MILLISECONDS));
        } catch (ExecutionException | TimeoutException e) {
            jvm.stop(process, STOP_GRACE);
            throw new IllegalStateException("the broker did not start within " + timeout.toSeconds() + " s" + jvm.tail(NAME), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            jvm.stop(process, STOP_GRACE);
            throw new IllegalStateException("interrupted while the broker started", e);
        }
    }

    String bootstrapServers() {
        return bootstrapServers;
    }

    /** The broker's CPU time so far, or -1 where the platform does not say. */
    long cpuNanos() {
        return ProcessCpu.of(process.toHandle());
    }

    /** SIGTERM, which the broker answers by shutting down cleanly and deleting its temporary data. */
    @Override
    public void close() {
        jvm.stop(process, STOP_GRACE);
    }
}
