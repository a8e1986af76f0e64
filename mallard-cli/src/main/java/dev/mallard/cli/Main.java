// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.ExitCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.error.Redactor;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/** The {@code mallard} command: parses the command line, runs the command, maps failures to exit codes. */
public final class Main {
    private Main() {}

    public static void main(String[] args) {
        configureLogging(System.getenv());
        System.exit(run(args));
    }

    /** Runs a command line and returns the exit code; the entry point for tests. */
    public static int run(String... args) {
        return execute(commandLine(), args);
    }

    /** The command tree with its error handlers and {@code -h/--help} on every command. */
    static CommandLine commandLine() {
        CommandLine commandLine = new CommandLine(new MallardCommand());
        addHelpOption(commandLine);
        // The descriptions are written as lines of up to 120 characters; a narrower width breaks each in two.
        commandLine.setUsageHelpWidth(120);
        commandLine.setExecutionExceptionHandler(Main::handleFailure);
        commandLine.setParameterExceptionHandler((e, ignored) -> {
            PrintWriter err = e.getCommandLine().getErr();
            err.println("error: " + ErrorCode.USER_ARGUMENT_INVALID.code() + ": " + e.getMessage());
            if (e instanceof CommandLine.UnmatchedArgumentException unmatched) {
                CommandLine.UnmatchedArgumentException.printSuggestions(unmatched, err);
            }
            err.println("Run '" + e.getCommandLine().getCommandSpec().qualifiedName() + " --help' for its options.");
            err.flush();
            return ExitCode.USAGE.code();
        });
        return commandLine;
    }

    /**
     * Runs {@code args} on a tree made by {@link #commandLine()}. An unknown command is refused before anything
     * else, so {@code mallard rollup --help} says {@code rollup} is unknown instead of printing the top-level help.
     */
    static int execute(CommandLine commandLine, String... args) {
        Optional<String> unknown = CommandNames.unknownCommand(commandLine, args);
        if (unknown.isPresent()) {
            PrintWriter err = commandLine.getErr();
            err.println("error: " + ErrorCode.USER_ARGUMENT_INVALID.code() + ": " + unknown.get());
            err.flush();
            return ExitCode.USAGE.code();
        }
        return commandLine.execute(args);
    }

    private static void addHelpOption(CommandLine commandLine) {
        Map<String, OptionSpec> options = commandLine.getCommandSpec().optionsMap();
        if (!options.containsKey("--help") && !options.containsKey("-h")) {
            commandLine.getCommandSpec().addOption(OptionSpec.builder("-h", "--help").usageHelp(true)
                    .description("Show this help and exit.").build());
        }
        commandLine.getSubcommands().values().forEach(Main::addHelpOption);
    }

    private static int handleFailure(Exception e, CommandLine commandLine, CommandLine.ParseResult parseResult) {
        PrintWriter err = commandLine.getErr();
        if (e instanceof MallardException mallard) {
            err.println("error: " + mallard.describe());
            err.flush();
            return mallard.errorCode().exitCode().code();
        }
        err.println("error: " + ErrorCode.SYSTEM_INTERNAL.code() + ": " + Redactor.redact(String.valueOf(e))
                + " (a defect in Mallard: please report it with this output)");
        if (LoggerFactory.getLogger(Main.class).isDebugEnabled()) {
            e.printStackTrace(err);
        }
        err.flush();
        return ExitCode.SYSTEM_FAULT.code();
    }

    /** Level from MALLARD_LOG_LEVEL or SQLFLOW_LOG_LEVEL: TRACE, DEBUG, INFO, WARN or WARNING, ERROR. */
    static void configureLogging(Map<String, String> env) {
        String requested = env.getOrDefault("MALLARD_LOG_LEVEL", env.getOrDefault("SQLFLOW_LOG_LEVEL", "INFO"))
                .trim().toUpperCase(Locale.ROOT);
        Level level = switch (requested) {
            case "TRACE" -> Level.TRACE;
            case "DEBUG" -> Level.DEBUG;
            case "WARN", "WARNING" -> Level.WARN;
            case "ERROR" -> Level.ERROR;
            default -> Level.INFO;
        };
        if (LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME) instanceof Logger root) {
            root.setLevel(level);
        }
        // Helidon logs through java.util.logging; route it to the same stderr lines and levels.
        org.slf4j.bridge.SLF4JBridgeHandler.removeHandlersForRootLogger();
        org.slf4j.bridge.SLF4JBridgeHandler.install();
    }
}
