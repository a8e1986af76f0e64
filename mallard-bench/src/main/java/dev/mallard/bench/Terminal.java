package dev.mallard.bench;

import java.io.Console;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.util.Optional;

/** Progress for a person at a terminal, on stderr; nothing at all when the output goes to a pipe or a file. */
final class Terminal {
    private final Optional<PrintStream> out;

    private Terminal(Optional<PrintStream> out) {
        this.out = out;
    }

    static Terminal detect() {
        return new Terminal(attached() ? Optional.of(System.err) : Optional.empty());
    }

    void line(String text) {
        out.ifPresent(stream -> {
            stream.println(text);
            stream.flush();
        });
    }

    /*
     * From JDK 22 System.console() is non-null even with the streams redirected, and Console.isTerminal() (not in
     * Java 21, which Mallard targets) is what tells; so the method is called when this JVM has it.
     */
    private static boolean attached() {
        Console console = System.console();
        if (console == null) {
            return false;
        }
        try {
            Method isTerminal = Console.class.getMethod("isTerminal");
            return (Boolean) isTerminal.invoke(console);
        } catch (NoSuchMethodException e) {
            return true;
        } catch (ReflectiveOperationException e) {
            return false;
        }
    }
}
