// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

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
}
