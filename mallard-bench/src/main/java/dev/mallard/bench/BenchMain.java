// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import dev.mallard.core.error.ErrorCode;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code ./mallard bench ...}: Mallard's benchmarks. Each prints a table, or one JSON object with --json; with
 * {@code --html FILE} anywhere among the arguments the benchmark runs with --json and its figures are also written
 * to FILE as a page with charts ({@link HtmlReport}).
 */
@Command(name = "mallard bench", mixinStandardHelpOptions = true,
        description = {"Benchmarks; record results in docs/benchmarks.md with the command and the machine.",
            "Add --html FILE to any benchmark to also write its figures as a single-file page with charts (it then prints JSON)."},
        subcommands = {HandlerBench.class, PipelineBench.class, ViewsBench.class, ServerBench.class, PostgresSinkBench.class, HubBench.class,
            DatasetsBench.class, IngestBench.class})
public final class BenchMain implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        // The launcher passes "bench" as the first argument.
        String[] rest = args.length > 0 && args[0].equals("bench") ? java.util.Arrays.copyOfRange(args, 1, args.length) : args;
        System.exit(execute(rest, new java.io.PrintWriter(System.out, true), new java.io.PrintWriter(System.err, true)));
    }

    /** The benchmarks' command tree, its usage as wide as the CLI's (the summaries are written for 120 columns). */
    static CommandLine commandLine() {
        CommandLine commandLine = new CommandLine(new BenchMain());
        commandLine.setUsageHelpWidth(120);
        return commandLine;
    }

    static int execute(String[] args, java.io.PrintWriter out) {
        return execute(args, out, new java.io.PrintWriter(System.err, true));
    }

    /** Runs a benchmark, writing what it prints to {@code out}; {@code --html FILE} also writes the report page. */
    static int execute(String[] args, java.io.PrintWriter out, java.io.PrintWriter err) {
        java.util.List<String> rest = new java.util.ArrayList<>();
        java.util.Optional<java.nio.file.Path> html = java.util.Optional.empty();
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--html") && i + 1 < args.length) {
                html = java.util.Optional.of(java.nio.file.Path.of(args[++i]));
            } else if (args[i].startsWith("--html=")) {
                html = java.util.Optional.of(java.nio.file.Path.of(args[i].substring("--html=".length())));
            } else {
                rest.add(args[i]);
            }
        }
        CommandLine command = commandLine();
        command.setErr(err);
        java.util.Optional<String> unknown = rest.stream().filter(arg -> !arg.startsWith("-")).findFirst()
                .filter(name -> !command.getSubcommands().containsKey(name));
        if (unknown.isPresent()) {
            // Refused before picocli parses, or '--help' after it would print this usage and exit 0.
            err.println("error: " + ErrorCode.USER_ARGUMENT_INVALID.code() + ": unknown benchmark '" + unknown.get() + "'. The benchmarks are: "
                    + String.join(", ", command.getSubcommands().keySet()) + "; './mallard bench <benchmark> --help' describes one.");
            CommandLine.UnmatchedArgumentException.printSuggestions(
                    new CommandLine.UnmatchedArgumentException(command, java.util.List.of(unknown.get())), err);
            err.flush();
            return ErrorCode.USER_ARGUMENT_INVALID.exitCode().code();
        }
        if (html.isEmpty()) {
            command.setOut(out);
            return command.execute(rest.toArray(String[]::new));
        }
        if (!rest.contains("--json")) {
            rest.add("--json");
        }
        java.io.StringWriter figures = new java.io.StringWriter();
        command.setOut(new java.io.PrintWriter(figures, true));
        int exit = command.execute(rest.toArray(String[]::new));
        out.print(figures);
        out.flush();
        if (exit == 0) {
            String benchmark = rest.stream().filter(arg -> !arg.startsWith("-")).findFirst().orElse("bench");
            try {
                new HtmlReport(benchmark, "./mallard bench " + String.join(" ", args), HtmlReport.parse(figures.toString())).write(html.get());
                out.println("wrote " + html.get());
            } catch (java.io.IOException e) {
                command.getErr().println("cannot write " + html.get() + ": " + e.getMessage());
                return 1;
            }
        }
        return exit;
    }

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }
}
