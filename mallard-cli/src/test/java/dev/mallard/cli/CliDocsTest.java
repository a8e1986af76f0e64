// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * docs/cli.md describes every command once, in a section of its own, with each of its options and an example;
 * every example parses against the command line as it is, and those that need nothing running are run.
 */
class CliDocsTest {
    private static final Path DOC = Path.of("..", "docs", "cli.md");
    private static final String SHARED_FLAGS = "## Help, unknown commands, the shared flags";
    /** Examples run here: they need no broker, server or database file and finish at once. */
    private static final Set<String> RUN_HERE = Set.of("version", "help", "validate", "config validate", "config example",
            "dev invoke", "sql");

    /** Every command that does something itself; a group (dev, config) is described by its subcommands' sections. */
    static Stream<List<String>> everyCommand() {
        return CommandLineTest.everyCommand().filter(path -> command(path).getSubcommands().isEmpty());
    }

    private static CommandLine command(List<String> path) {
        CommandLine commandLine = Main.commandLine();
        for (String name : path) {
            commandLine = commandLine.getSubcommands().get(name);
        }
        return commandLine;
    }

    private static String doc() throws IOException {
        return Files.readString(DOC);
    }

    private static String heading(List<String> path) {
        return "## mallard " + String.join(" ", path);
    }

    /** The text from the command's heading to the next heading. */
    private static String section(List<String> path) throws IOException {
        String doc = doc();
        int start = doc.indexOf(heading(path) + "\n");
        assertThat(start).as("docs/cli.md has a section '" + heading(path) + "'").isNotNegative();
        int end = doc.indexOf("\n## ", start + 1);
        return doc.substring(start, end < 0 ? doc.length() : end);
    }

    /** The lines of the section's ```sh blocks that start with ./mallard, without the command's redirections and comments. */
    private static List<List<String>> examples(String section) {
        List<List<String>> examples = new ArrayList<>();
        boolean inShell = false;
        for (String line : section.split("\n")) {
            if (line.startsWith("```")) {
                inShell = line.equals("```sh");
                continue;
            }
            if (inShell && line.startsWith("./mallard ")) {
                List<String> words = words(line.substring("./mallard ".length()));
                // A synopsis ([--flag N], <placeholder>, ...) shows the grammar; the examples are the concrete lines.
                if (words.stream().noneMatch(word -> word.contains("[") || word.contains("<") || word.contains("..."))) {
                    examples.add(words);
                }
            }
        }
        return examples;
    }

    /** The words of a shell command line as the shell splits them, up to a redirection, a pipe or a comment. */
    static List<String> words(String line) {
        List<String> words = new ArrayList<>();
        StringBuilder word = null;
        char quote = 0;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quote != 0) {
                if (c == quote) {
                    quote = 0;
                } else {
                    word.append(c);
                }
            } else if (c == '"' || c == '\'') {
                quote = c;
                word = word == null ? new StringBuilder() : word;
            } else if (c == ' ') {
                if (word != null) {
                    words.add(word.toString());
                    word = null;
                }
            } else if (c == '#' || c == '>' || c == '|') {
                break;
            } else if (c == '<' && word == null && i + 1 < line.length() && line.charAt(i + 1) == ' ') {
                break;
            } else {
                word = word == null ? new StringBuilder() : word;
                word.append(c);
            }
        }
        if (word != null) {
            words.add(word.toString());
        }
        return words;
    }

    @ParameterizedTest
    @MethodSource("everyCommand")
    void everyCommandHasExactlyOneSection(List<String> path) throws IOException {
        assertThat(Pattern.compile("(?m)^" + Pattern.quote(heading(path)) + "$").matcher(doc()).results().count())
                .as("sections headed '" + heading(path) + "'").isEqualTo(1);
    }

    /** Whether the shared flags' table has a row for one of these names whose commands column lists the command. */
    private static boolean sharedFlag(List<String> path, String[] names) throws IOException {
        String doc = doc();
        int start = doc.indexOf(SHARED_FLAGS);
        assertThat(start).as("docs/cli.md has a section '" + SHARED_FLAGS + "'").isNotNegative();
        String command = "`" + String.join(" ", path) + "`";
        for (String row : doc.substring(start, doc.indexOf("\n## ", start + 1)).split("\n")) {
            String[] cells = row.split("(?<!\\\\)\\|");
            if (cells.length >= 4 && cells[3].contains(command) && Stream.of(names).anyMatch(name -> cells[1].contains("`" + name))) {
                return true;
            }
        }
        return false;
    }

    @ParameterizedTest
    @MethodSource("everyCommand")
    void everyOptionOfACommandIsNamedInItsSectionOrInTheSharedFlags(List<String> path) throws IOException {
        String section = section(path);
        for (OptionSpec option : command(path).getCommandSpec().options()) {
            if (option.hidden() || option.usageHelp() || option.versionHelp()) {
                continue; // -h/--help is described once for every command, in the shared flags
            }
            boolean named = Stream.of(option.names())
                    .anyMatch(name -> Pattern.compile(Pattern.quote(name) + "(?![\\w-])").matcher(section).find());
            assertThat(named || sharedFlag(path, option.names()))
                    .as(heading(path) + " or the shared flags name " + String.join("/", option.names())).isTrue();
        }
    }

    @ParameterizedTest
    @MethodSource("everyCommand")
    void everyCommandHasAnExampleAndEveryExampleParses(List<String> path) throws IOException {
        List<List<String>> examples = examples(section(path));
        assertThat(examples).as(heading(path) + " has a concrete ./mallard example in a ```sh block").isNotEmpty();
        for (List<String> example : examples) {
            assertThat(example.subList(0, Math.min(path.size(), example.size()))).as(example + " is an example of " + path).isEqualTo(path);
            CommandLine.ParseResult parsed = Main.commandLine().parseArgs(example.toArray(String[]::new));
            CommandLine.ParseResult last = parsed;
            while (last.hasSubcommand()) {
                last = last.subcommand();
            }
            assertThat(last.commandSpec().qualifiedName()).as(example.toString()).isEqualTo("mallard " + String.join(" ", path));
        }
    }

    @Test
    void theExamplesThatNeedNothingRunningRunAndExitZero() throws IOException {
        int run = 0;
        for (List<String> path : everyCommand().toList()) {
            if (!RUN_HERE.contains(String.join(" ", path))) {
                continue;
            }
            for (List<String> example : examples(section(path))) {
                // The examples are written from the checkout's root; this test runs in mallard-cli.
                String[] args = example.stream().map(word -> word.startsWith("examples/") ? "../" + word : word).toArray(String[]::new);
                if (example.stream().anyMatch(word -> word.endsWith(".duckdb"))) {
                    continue; // these name a database file of the reader's; SqlCommandTest runs the same statements on one
                }
                CommandLineTest.Result result = CommandLineTest.mallard(args);
                assertThat(result.exit()).as(example + ": " + result.err()).isZero();
                run++;
            }
        }
        assertThat(run).as("examples run").isGreaterThanOrEqualTo(RUN_HERE.size());
    }
}
