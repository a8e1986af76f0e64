// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

@Command(name = "mallard",
        mixinStandardHelpOptions = true,
        versionProvider = VersionCommand.Provider.class,
        description = "Stream pipelines, a DuckDB server and incremental views on embedded DuckDB.",
        footer = {"", "'mallard help <command>' or 'mallard <command> --help' describes a command. Docs: docs/cli.md."},
        subcommands = {
            DemoCommand.class,
            RunCommand.class,
            ServerCommand.class,
            ServeCommand.class,
            TailCommand.class,
            SqlCommand.class,
            DevCommand.class,
            ValidateCommand.class,
            ConfigCommand.class,
            BenchCommand.class,
            VersionCommand.class,
            HelpCommand.class
        })
final class MallardCommand implements Runnable {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }
}
