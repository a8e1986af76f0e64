// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Starts the other JVMs of {@code bench pipeline} with the flags the {@code ./mallard} launcher gives mallard: the
 * broker, and the workers it measures. Workers also get {@code MALLARD_JAVA_OPTS}, as {@code ./mallard run} would,
 * and with a JFR directory a recording each. Whatever is still running when the bench JVM ends is stopped.
 */
final class ChildJvm implements AutoCloseable {
    private static final int LOG_TAIL_LINES = 30;

    private final Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    private final Path benchJar;
    private final Path logDir;
    private final List<String> workerOptions;
    private final Optional<Path> jfrDir;
    private final Set<Process> live = ConcurrentHashMap.newKeySet();
    private final Thread reaper = new Thread(this::stopAll, "bench-children-stop");

    /**
     * @param benchJar the jar holding {@link BenchWorker}
     * @param logDir where each child's stdout and stderr go
     * @param workerOptions extra JVM options for the measured workers
     */
    ChildJvm(Path benchJar, Path logDir, List<String> workerOptions, Optional<Path> jfrDir) {
        this.benchJar = requireNonNull(benchJar, "benchJar is null");
        this.logDir = requireNonNull(logDir, "logDir is null");
        this.workerOptions = List.copyOf(requireNonNull(workerOptions, "workerOptions is null"));
        this.jfrDir = requireNonNull(jfrDir, "jfrDir is null");
        // Ctrl-C skips finally blocks; without this the broker would outlive the bench.
        Runtime.getRuntime().addShutdownHook(reaper);
    }

    /** The launcher's default JVM options, used when MALLARD_JAVA_OPTS is not set (see ./mallard). */
    static final String DEFAULT_JAVA_OPTS = "-XX:+UseSerialGC -Xms16m";

    /** MALLARD_JAVA_OPTS split on white space, as the launcher's shell splits it; the launcher's defaults when unset. */
    static List<String> mallardJavaOpts() {
        String options = System.getenv().getOrDefault("MALLARD_JAVA_OPTS", DEFAULT_JAVA_OPTS).strip();
        return options.isEmpty() ? List.of() : Arrays.asList(options.split("\\s+"));
    }

    /** Starts {@code java -jar <cliJar> <arguments>} with the launcher's flags; its stderr goes to {@code <name>.log}. */
    Process startCli(String name, Path cliJar, List<String> arguments) {
        List<String> command = new ArrayList<>(launcherFlags());
        command.add("-jar");
        command.add(cliJar.toString());
        command.addAll(arguments);
        ProcessBuilder builder = new ProcessBuilder(command).redirectError(log(name).toFile());
        return start(builder);
    }

    /**
     * Runs a worker to its end and returns its report.
     *
     * @throws IllegalStateException when it fails or outlives the timeout, with the end of its log
     */
    WorkerReport measure(String name, List<String> arguments, Duration timeout) {
        List<String> command = new ArrayList<>(launcherFlags());
        command.addAll(workerOptions);
        jfrDir.ifPresent(dir -> command.add("-XX:StartFlightRecording=filename=" + dir.resolve(name + ".jfr").toAbsolutePath()
                + ",settings=profile,dumponexit=true"));
        command.add("-cp");
        command.add(benchJar.toString());
        command.add(BenchWorker.class.getName());
        command.addAll(arguments);
        Path out = logDir.resolve(name + ".out");
        Process process = start(new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(log(name).toFile()));
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException(name + " did not finish within " + timeout.toSeconds() + " s" + tail(name));
            }
            if (process.exitValue() != 0) {
                throw new IllegalStateException(name + " exited with " + process.exitValue() + tail(name));
            }
            List<String> lines = Files.readAllLines(out, StandardCharsets.UTF_8);
            String report = lines.stream().filter(line -> line.startsWith("{")).reduce((first, second) -> second)
                    .orElseThrow(() -> new IllegalStateException(name + " printed no report" + tail(name)));
            return WorkerReport.fromJson(report);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            throw new IllegalStateException("interrupted while " + name + " ran", e);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the report of " + name, e);
        } finally {
            live.remove(process);
        }
    }

    /** The last lines of a child's log, for an error message. */
    String tail(String name) {
        try {
            List<String> lines = Files.readAllLines(log(name), StandardCharsets.UTF_8);
            List<String> last = lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size());
            return last.isEmpty() ? " (its log " + log(name) + " is empty)" : "; the end of " + log(name) + ":\n" + String.join("\n", last);
        } catch (IOException e) {
            return " (its log " + log(name) + " cannot be read: " + e.getMessage() + ")";
        }
    }

    /** Stops a child: SIGTERM, then SIGKILL when it takes longer than {@code grace}. */
    void stop(Process process, Duration grace) {
        process.destroy();
        try {
            if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        } finally {
            live.remove(process);
        }
    }

    @Override
    public void close() {
        try {
            Runtime.getRuntime().removeShutdownHook(reaper);
        } catch (IllegalStateException e) {
            // The JVM is already shutting down; the hook runs on its own.
            return;
        }
        stopAll();
    }

    private Path log(String name) {
        return logDir.resolve(name + ".log");
    }

    private Process start(ProcessBuilder builder) {
        try {
            Process process = builder.start();
            live.add(process);
            process.getOutputStream().close();
            return process;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + builder.command(), e);
        }
    }

    private void stopAll() {
        for (Process process : List.copyOf(live)) {
            stop(process, Duration.ofSeconds(10));
        }
    }

    /** What ./mallard passes: the java.nio opening Arrow needs, native access for DuckDB, Netty's Unsafe on 23+. */
    private List<String> launcherFlags() {
        List<String> flags = new ArrayList<>(List.of(java.toString(), "--add-opens=java.base/java.nio=ALL-UNNAMED",
                "--enable-native-access=ALL-UNNAMED"));
        if (Runtime.version().feature() >= 23) {
            flags.add("--sun-misc-unsafe-memory-access=allow");
        }
        return flags;
    }
}
