// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** {@code ./mallard bench}'s command line, in-process: help on every benchmark, whole summaries, unknown names refused. */
class BenchCommandLineTest {
    record Result(int exit, String out, String err) {}

    static Result bench(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = BenchMain.execute(args, new PrintWriter(out, true), new PrintWriter(err, true));
        return new Result(exit, out.toString(), err.toString());
    }

    static Stream<String> everyBenchmark() {
        return BenchMain.commandLine().getSubcommands().keySet().stream();
    }

    @ParameterizedTest
    @MethodSource("everyBenchmark")
    void everyBenchmarkPrintsItsHelpAndExitsZeroForDashHAndDashDashHelp(String benchmark) {
        for (String flag : List.of("-h", "--help")) {
            Result result = bench(benchmark, flag);
            assertThat(result.exit()).as(benchmark + " " + flag + ": " + result.err()).isZero();
            assertThat(result.out()).as(benchmark + " " + flag).startsWith("Usage: mallard bench " + benchmark);
            assertThat(result.err()).as(benchmark + " " + flag).isEmpty();
        }
    }

    @ParameterizedTest
    @MethodSource("everyBenchmark")
    void theBenchmarkListShowsEachBenchmarksWholeFirstSentenceOnOneLine(String benchmark) {
        String summary = BenchMain.commandLine().getSubcommands().get(benchmark).getCommandSpec().usageMessage().description()[0];
        assertThat(summary).as(benchmark + ": the line the benchmark list shows").endsWith(".");
        Result help = bench("--help");
        assertThat(help.exit()).isZero();
        assertThat(help.out()).as("the list's line for " + benchmark)
                .containsPattern("(?m)^  " + Pattern.quote(benchmark) + " +" + Pattern.quote(summary) + "$");
    }

    @Test
    void anUnknownBenchmarkIsRefusedWithExitTwoEvenWhenHelpIsAsked() {
        Result result = bench("rollup", "--help");
        assertThat(result.exit()).isEqualTo(2);
        assertThat(result.out()).isEmpty();
        assertThat(result.err()).startsWith("error: user.cli.argument_invalid: unknown benchmark 'rollup'").contains("The benchmarks are: handlers, pipeline");
    }

    @Test
    void aMistypedBenchmarkIsAnsweredWithTheOneItWasProbablyMeantToBe() {
        Result result = bench("handler", "--messages", "10");
        assertThat(result.exit()).isEqualTo(2);
        assertThat(result.err()).contains("unknown benchmark 'handler'").contains("Did you mean: mallard bench handlers");
    }
}
