// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import dev.mallard.testkit.Await;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The command line that runs the built mallard.jar in a fresh JVM, as a user runs it. */
final class MallardJar {
    static final Path JAR = Path.of("target", "mallard.jar").toAbsolutePath();

    private MallardJar() {}

    static List<String> command(String... args) {
        return command(List.of(), args);
    }

    /** The same, with more JVM options before {@code -jar}. */
    static List<String> command(List<String> jvmOptions, String... args) {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-opens=java.base/java.nio=ALL-UNNAMED", "--enable-native-access=ALL-UNNAMED"));
        if (Runtime.version().feature() >= 23) {
            // As bin/mallard does: Arrow's memory access through sun.misc.Unsafe warns on stderr from JDK 23 on.
            command.add("--sun-misc-unsafe-memory-access=allow");
        }
        command.addAll(jvmOptions);
        command.addAll(List.of("-jar", JAR.toString()));
        command.addAll(List.of(args));
        return command;
    }

    /** Starts the jar with {@code args}, its output and DEBUG log (which has a line per batch) written to {@code log}. */
    static Process start(Path log, String... args) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command(args)).redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().put("MALLARD_LOG_LEVEL", "DEBUG");
        return builder.start();
    }

    /** Waits, bounded, until the child's log holds {@code line}, or the child has ended. */
    static void awaitLog(Process run, Path log, String line) throws Exception {
        Await.until("'" + line + "' in " + log, () -> !run.isAlive() || Files.exists(log) && Files.readString(log).contains(line));
    }

    /** Waits, bounded, until the child has logged that it processed a batch, or has ended. */
    static void awaitProcessing(Process run, Path log) throws Exception {
        awaitLog(run, log, "batch processed");
    }
}
