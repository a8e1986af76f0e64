// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.flow.validate.ValidationReport;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "validate", description = {
    "Check a pipeline or serve configuration without reaching any broker or sink, reporting every fault.",
    "Every fault is reported in one pass.",
    "A file with a serve block and no pipeline is checked as a serve configuration (docs/datasets.md).",
    "Renders the template, checks the schema and rules, and checks the SQL against an empty in-memory DuckDB.",
    "Exit 0 when sound, 10 when the configuration has a fault to fix."})
final class ValidateCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @CommandLine.Mixin
    ConfigFile config = new ConfigFile();

    @Option(names = "--json", description = "Print the report as JSON, with a checks array.")
    boolean json;

    @Override
    public Integer call() {
        ValidationReport report = ConfigValidation.validate(config.path("validate"), ConfigEnvironment.fromSystem());
        if (json) {
            spec.commandLine().getOut().print(report.toJson());
        } else {
            (report.sound() ? spec.commandLine().getOut() : spec.commandLine().getErr()).print(report.toText());
        }
        spec.commandLine().getOut().flush();
        spec.commandLine().getErr().flush();
        return report.exitCode().code();
    }
}
