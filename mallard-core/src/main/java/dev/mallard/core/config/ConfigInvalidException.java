// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.config;

import dev.mallard.core.error.MallardException;
import java.util.List;
import java.util.stream.Collectors;

/** A configuration with one or more faults; carries all of them so a user fixes them in one pass. */
public final class ConfigInvalidException extends MallardException {
    private final List<ConfigProblem> problems;

    public ConfigInvalidException(List<ConfigProblem> problems) {
        super(problems.getFirst().code(), summarize(problems));
        this.problems = List.copyOf(problems);
    }

    public List<ConfigProblem> problems() {
        return problems;
    }

    private static String summarize(List<ConfigProblem> problems) {
        String all = problems.stream().map(ConfigProblem::format).collect(Collectors.joining("\n  "));
        return problems.size() == 1
                ? problems.getFirst().location() + ": " + problems.getFirst().message()
                : problems.size() + " problems in the configuration:\n  " + all;
    }
}
