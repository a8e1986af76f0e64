// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.core.config.ConfigExample;
import dev.mallard.flow.config.PipelineConfigReader;
import dev.mallard.flow.validate.ValidationReport;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;

@Command(name = "config", description = "Work with pipeline configuration files.",
        subcommands = {ConfigCommand.Validate.class, ConfigCommand.Example.class})
final class ConfigCommand implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    @Command(name = "validate", description = "The same checks as `mallard validate`; prints `<config>: valid` when sound.")
    static final class Validate implements Callable<Integer> {
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @CommandLine.Mixin
        ConfigFile config = new ConfigFile();

        @Override
        public Integer call() {
            ValidationReport report = ConfigValidation.validate(config.path("config validate"), ConfigEnvironment.fromSystem());
            java.io.PrintWriter target = report.sound() ? spec.commandLine().getOut() : spec.commandLine().getErr();
            target.print(report.toText());
            target.flush();
            return report.exitCode().code();
        }
    }

    @Command(name = "example", description = "Print a commented YAML skeleton of every pipeline key, generated from the schema.")
    static final class Example implements Callable<Integer> {
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @CommandLine.Option(names = "--serve", description = "The skeleton of a serve configuration (docs/datasets.md) instead.")
        boolean serve;

        @Override
        public Integer call() {
            spec.commandLine().getOut().print(new ConfigExample(serve ? dev.mallard.server.datasets.ServeConfigReader.schema()
                    : PipelineConfigReader.schema()).render());
            spec.commandLine().getOut().flush();
            return 0;
        }
    }
}
