// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.validate;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.config.ConfigProblem;
import java.util.List;
import java.util.Optional;

/**
 * One named check of {@code mallard validate}. A check that could not run says {@link Status#SKIPPED} with
 * the reason: it never claims {@link Status#PASS} for what it did not check.
 */
public record Check(String name, Status status, Optional<String> reason, List<ConfigProblem> problems) {
    public enum Status {
        PASS, WARN, FAIL, SKIPPED;

        public String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    public Check {
        requireNonNull(name, "name is null");
        requireNonNull(status, "status is null");
        requireNonNull(reason, "reason is null");
        problems = List.copyOf(problems);
    }

    static Check pass(String name) {
        return new Check(name, Status.PASS, Optional.empty(), List.of());
    }

    static Check skipped(String name, String reason) {
        return new Check(name, Status.SKIPPED, Optional.of(reason), List.of());
    }

    static Check of(String name, List<ConfigProblem> errors, List<ConfigProblem> warnings, Optional<String> skippedReason) {
        if (!errors.isEmpty()) {
            return new Check(name, Status.FAIL, Optional.empty(), errors);
        }
        if (skippedReason.isPresent()) {
            return new Check(name, Status.SKIPPED, skippedReason, warnings);
        }
        if (!warnings.isEmpty()) {
            return new Check(name, Status.WARN, Optional.empty(), warnings);
        }
        return pass(name);
    }
}
