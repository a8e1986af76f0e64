// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;

/** The command line's grammar, in-process: help, unknown commands, the shared flags. */
class CommandLineTest {
    @TempDir
    Path dir;

    record Result(int exit, String out, String err) {}

    static Result mallard(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine commandLine = Main.commandLine();
        commandLine.setOut(new PrintWriter(out, true));
        commandLine.setErr(new PrintWriter(err, true));
        int exit = Main.execute(commandLine, args);
        return new Result(exit, out.toString(), err.toString());
    }

    static Stream<List<String>> everyCommand() {
        List<List<String>> paths = new ArrayList<>();
        collect(Main.commandLine(), List.of(), paths);
        return paths.stream();
    }

    private static void collect(CommandLine commandLine, List<String> path, List<List<String>> paths) {
        commandLine.getSubcommands().forEach((name, sub) -> {
            List<String> subPath = new ArrayList<>(path);
            subPath.add(name);
            paths.add(subPath);
            collect(sub, subPath, paths);
        });
    }

    @ParameterizedTest
    @MethodSource("everyCommand")
    void everyCommandPrintsItsHelpAndExitsZeroForDashHAndDashDashHelp(List<String> command) {
        for (String flag : List.of("-h", "--help")) {
            List<String> args = new ArrayList<>(command);
            args.add(flag);
            Result result = mallard(args.toArray(String[]::new));
            assertThat(result.exit()).as(args + ": " + result.err()).isZero();
            assertThat(result.out()).as(args.toString()).startsWith("Usage: mallard " + String.join(" ", command));
            assertThat(result.err()).as(args.toString()).isEmpty();
        }
    }

    @ParameterizedTest
    @MethodSource("everyCommand")
    void everyCommandsSummaryIsAWholeSentence(List<String> command) {
        CommandLine commandLine = Main.commandLine();
        for (String name : command) {
            commandLine = commandLine.getSubcommands().get(name);
        }
        String[] description = commandLine.getCommandSpec().usageMessage().description();
        assertThat(description).as(command.toString()).isNotEmpty();
        assertThat(description[0]).as(command + ": the line the command list shows").endsWith(".");
        Result parentHelp = mallard(Stream.concat(command.subList(0, command.size() - 1).stream(), Stream.of("--help")).toArray(String[]::new));
        assertThat(parentHelp.out()).as("the command list's line for " + command + " holds its whole summary")
                .containsPattern("(?m)^  " + java.util.regex.Pattern.quote(command.getLast()) + " +"
                        + java.util.regex.Pattern.quote(description[0]) + "$");
    }

    @Test
    void theTopLevelHelpListsEveryCommandIncludingBench() {
        Result result = mallard("--help");
        assertThat(result.exit()).isZero();
        for (String command : List.of("demo", "run", "server", "tail", "sql", "dev", "validate", "config", "bench", "version", "help")) {
            assertThat(result.out()).containsPattern("(?m)^  " + command + " ");
        }
    }

    @Test
    void anUnknownCommandIsRefusedWithExitTwoEvenWhenHelpIsAsked() {
        Result result = mallard("rollup", "--help");
        assertThat(result.exit()).isEqualTo(2);
        assertThat(result.out()).isEmpty();
        assertThat(result.err()).startsWith("error: user.cli.argument_invalid: unknown command 'rollup' for 'mallard'")
                .contains("The commands are: demo, run, server");
        assertThat(result.err()).as("without a suggestion the message is still two sentences")
                .contains("unknown command 'rollup' for 'mallard'. The commands are:");
    }

    @Test
    void aMistypedCommandIsAnsweredWithTheCommandItWasProbablyMeantToBe() {
        assertThat(mallard("rnu").err()).contains("did you mean 'mallard run'?");
        assertThat(mallard("serverr", "--conf", "x=1").err()).contains("did you mean 'mallard server'?");
        Result nested = mallard("dev", "invok", "a.yml", "b.jsonl");
        assertThat(nested.exit()).isEqualTo(2);
        assertThat(nested.err()).contains("unknown command 'invok' for 'mallard dev'; did you mean 'mallard dev invoke'?");
    }

    @Test
    void helpDescribesTheCommandItNamesAndRefusesAnUnknownOne() {
        Result run = mallard("help", "run");
        assertThat(run.exit()).isZero();
        assertThat(run.out()).startsWith("Usage: mallard run").contains("--config").contains("--messages");
        assertThat(mallard("help", "dev", "invoke").out()).startsWith("Usage: mallard dev invoke");
        Result unknown = mallard("help", "rollup");
        assertThat(unknown.exit()).isEqualTo(2);
        assertThat(unknown.err()).contains("unknown command 'rollup'");
    }

    @Test
    void anUnknownOptionIsAUsageErrorWithASuggestion() {
        Result result = mallard("run", "--max-mesgs", "5", "x.yml");
        assertThat(result.exit()).isEqualTo(2);
        assertThat(result.err()).contains("user.cli.argument_invalid").contains("--max-mesgs").contains("--max-msgs");
    }

    @Test
    void tailTakesItsConfigAsAPositionalArgumentOrWithDashC() {
        Path missing = dir.resolve("missing.yml");
        Result positional = mallard("tail", missing.toString(), "--messages", "3");
        assertThat(positional.exit()).as(positional.err()).isEqualTo(10);
        assertThat(positional.err()).contains("user.config.not_found").contains("missing.yml");
        Result option = mallard("tail", "-c", missing.toString());
        assertThat(option.exit()).isEqualTo(10);
        assertThat(option.err()).contains("user.config.not_found");
        Result none = mallard("tail");
        assertThat(none.exit()).isEqualTo(2);
        assertThat(none.err()).contains("mallard tail <config> or mallard tail -c <config>");
    }

    @Test
    void dashCMeansTheConfigFileInEveryCommandThatReadsOne() {
        Path missing = dir.resolve("missing.yml");
        Path fixture = dir.resolve("fixture.jsonl");
        for (List<String> command : List.of(List.of("run"), List.of("tail"), List.of("validate"), List.of("config", "validate"),
                List.of("serve"), List.of("dev", "invoke"))) {
            List<String> args = new ArrayList<>(command);
            args.addAll(List.of("-c", missing.toString()));
            if (command.equals(List.of("dev", "invoke"))) {
                args.add(fixture.toString());
            }
            Result result = mallard(args.toArray(String[]::new));
            assertThat(result.exit()).as(args + ": " + result.err()).isEqualTo(10);
            assertThat(result.err()).as(args.toString()).contains("missing.yml");
        }
        assertThat(mallard("server", "--help").out()).contains("-c, --config");
    }

    @Test
    void devInvokeTakesItsConfigAndFixturePositionallyOrTheConfigWithDashC() {
        Path missing = dir.resolve("missing.yml");
        Path fixture = dir.resolve("fixture.jsonl");
        Result positional = mallard("dev", "invoke", missing.toString(), fixture.toString());
        assertThat(positional.exit()).as(positional.err()).isEqualTo(10);
        assertThat(positional.err()).contains("missing.yml");
        Result noFixture = mallard("dev", "invoke", "-c", missing.toString());
        assertThat(noFixture.exit()).isEqualTo(2);
        assertThat(noFixture.err()).contains("mallard dev invoke <config> <fixture.jsonl>");
        Result twoConfigs = mallard("dev", "invoke", "-c", missing.toString(), dir.resolve("other.yml").toString(), fixture.toString());
        assertThat(twoConfigs.exit()).isEqualTo(2);
    }

    @Test
    void messagesIsAcceptedWhereACommandCountsMessages() {
        Path missing = dir.resolve("missing.yml");
        assertThat(mallard("run", missing.toString(), "--messages", "5").exit()).isEqualTo(10);
        assertThat(mallard("tail", missing.toString(), "--messages", "5").exit()).isEqualTo(10);
        Result publish = mallard("dev", "publish", "--topic", "t", "--messages", "-1");
        assertThat(publish.exit()).isEqualTo(2);
        assertThat(publish.err()).contains("--messages must not be negative");
        Result none = mallard("dev", "publish", "--topic", "t");
        assertThat(none.exit()).isEqualTo(2);
        assertThat(none.err()).contains("--messages (or --num-messages) is required unless --from-file is given");
        assertThat(mallard("demo", "--messages", "0").err()).contains("--messages");
    }

    @Test
    void benchIsListedAndSaysWhereTheBenchmarksRun() {
        Result result = mallard("bench", "handlers", "--messages", "10");
        assertThat(result.exit()).isEqualTo(2);
        assertThat(result.err()).contains("./mallard bench handlers --messages 10").contains("source checkout");
    }

    @Test
    void sqlTakesItsStatementsWithDashEAndStillAcceptsDashCWithADeprecationNote() {
        Result execute = mallard("sql", "-e", "SELECT 42 AS answer");
        assertThat(execute.exit()).as(execute.err()).isZero();
        assertThat(execute.out()).contains("42");
        assertThat(execute.err()).isEmpty();
        Result deprecated = mallard("sql", "-c", "SELECT 42 AS answer");
        assertThat(deprecated.exit()).isZero();
        assertThat(deprecated.out()).contains("42").doesNotContain("deprecated");
        assertThat(deprecated.err()).contains("warning: 'mallard sql -c' is deprecated: use -e/--execute");
    }
}
