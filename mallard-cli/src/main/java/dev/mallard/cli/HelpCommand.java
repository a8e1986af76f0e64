// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code mallard help [<command> [<subcommand>]]}: the usage of the command named, at any depth. */
@Command(name = "help", description = "Describe a command: mallard help <command> [<subcommand>].")
final class HelpCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Parameters(arity = "0..*", paramLabel = "<command>", description = "The command to describe, e.g. run or dev invoke.")
    List<String> command = new ArrayList<>();

    @Override
    public Integer call() {
        // Main refuses a command word that names nothing before this runs (CommandNames).
        CommandLine target = spec.commandLine().getParent();
        for (String name : command) {
            target = target.getSubcommands().get(name);
        }
        target.usage(spec.commandLine().getOut());
        return 0;
    }
}
