package dev.mallard.bench;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code ./mallard bench ...}: Mallard's benchmarks. Each prints a table, or one JSON object with --json. */
@Command(name = "mallard bench", mixinStandardHelpOptions = true,
        description = "Benchmarks; record results in docs/benchmarks.md with the command and the machine.",
        subcommands = {HandlerBench.class, PipelineBench.class, ViewsBench.class, ServerBench.class, PostgresSinkBench.class, IngestBench.class})
public final class BenchMain implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        // The launcher passes "bench" as the first argument.
        String[] rest = args.length > 0 && args[0].equals("bench") ? java.util.Arrays.copyOfRange(args, 1, args.length) : args;
        System.exit(new CommandLine(new BenchMain()).execute(rest));
    }

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }
}
