// SPDX-License-Identifier: Apache-2.0
package dev.mallard.testkit;

import static java.util.Objects.requireNonNull;

import java.io.Console;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.util.Locale;
import java.util.Optional;

/**
 * A one-line progress display for a person watching a terminal: rewritten in place at most every 200 ms, cleared
 * when done. Silent when nobody watches, so logs and pipes stay clean.
 */
public final class Progress {
    private static final long INTERVAL_NANOS = 200_000_000L;

    private final Optional<PrintStream> out;
    private final long startNanos = System.nanoTime();
    private long lastNanos;
    private int lastWidth;

    private Progress(Optional<PrintStream> out) {
        this.out = requireNonNull(out, "out is null");
    }

    /** Prints nothing. */
    public static Progress silent() {
        return new Progress(Optional.empty());
    }

    /** Prints to this stream whatever it is connected to. */
    public static Progress to(PrintStream out) {
        return new Progress(Optional.of(requireNonNull(out, "out is null")));
    }

    /** Prints to stderr when this process runs on a terminal, nothing otherwise. */
    public static Progress onTerminal() {
        return attachedToTerminal() ? to(System.err) : silent();
    }

    /**
     * Reports how many messages are done, of {@code total} (negative when unknown). Cheap enough to call per message.
     */
    public void update(long done, long total) {
        if (out.isEmpty()) {
            return;
        }
        long now = System.nanoTime();
        if (now - lastNanos < INTERVAL_NANOS) {
            return;
        }
        lastNanos = now;
        double seconds = Math.max((now - startNanos) / 1e9, 1e-3);
        String line = total >= 0
                ? String.format(Locale.ROOT, "published %,d of %,d messages (%,.0f/s)", done, total, done / seconds)
                : String.format(Locale.ROOT, "published %,d messages (%,.0f/s)", done, done / seconds);
        show(line);
    }

    /** Clears the line, so whatever is printed next starts on a clean one. */
    public void finish() {
        if (out.isPresent() && lastWidth > 0) {
            show("");
        }
    }

    private void show(String line) {
        PrintStream stream = out.orElseThrow();
        stream.print("\r" + line + " ".repeat(Math.max(0, lastWidth - line.length())) + (line.isEmpty() ? "\r" : ""));
        stream.flush();
        lastWidth = line.length();
    }

    /*
     * Since JDK 22 System.console() answers even when the streams are redirected, and Console.isTerminal() tells
     * the two apart; Mallard is built for Java 21, so that method is looked up when it exists.
     */
    /** Whether this JVM's output goes to a terminal (so progress lines and colours make sense). */
    public static boolean attachedToTerminal() {
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
