// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import dev.mallard.testkit.Progress;
import java.io.PrintStream;
import java.util.Optional;

/** Progress for a person at a terminal, on stderr; nothing at all when the output goes to a pipe or a file. */
final class Terminal {
    private final Optional<PrintStream> out;

    private Terminal(Optional<PrintStream> out) {
        this.out = out;
    }

    static Terminal detect() {
        return new Terminal(Progress.attachedToTerminal() ? Optional.of(System.err) : Optional.empty());
    }

    void line(String text) {
        out.ifPresent(stream -> {
            stream.println(text);
            stream.flush();
        });
    }
}
