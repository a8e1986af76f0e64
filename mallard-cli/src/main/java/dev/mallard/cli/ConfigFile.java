// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.nio.file.Path;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** The pipeline configuration a command reads: positional, or {@code -c/--config} as everywhere in mallard. */
final class ConfigFile {
    @Parameters(index = "0", arity = "0..1", paramLabel = "<config>", description = "The pipeline configuration (YAML, Jinja template).")
    Path positional;

    @Option(names = {"-c", "--config"}, paramLabel = "<config>", description = "The pipeline configuration, instead of the positional form.")
    Path option;

    /** The file named, or a usage error naming both forms when there is none or two different ones. */
    Path path(String command) {
        if (positional != null && option != null && !positional.equals(option)) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID,
                    "two configurations given (" + positional + " and -c " + option + "); name one: mallard " + command + " <config>");
        }
        Path path = option != null ? option : positional;
        if (path == null) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID,
                    "name the pipeline configuration: mallard " + command + " <config> or mallard " + command + " -c <config>");
        }
        return path;
    }
}
