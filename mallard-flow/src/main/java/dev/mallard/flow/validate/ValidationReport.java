// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.validate;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.core.config.ConfigProblem;
import dev.mallard.core.error.ExitCode;
import java.util.List;

/** What {@code mallard validate} found: every fault and warning, and the outcome of each check. */
public record ValidationReport(String file, List<ConfigProblem> errors, List<ConfigProblem> warnings, List<Check> checks) {
    public ValidationReport {
        errors = List.copyOf(errors);
        warnings = List.copyOf(warnings);
        checks = List.copyOf(checks);
    }

    public boolean sound() {
        return errors.isEmpty();
    }

    public ExitCode exitCode() {
        return sound() ? ExitCode.OK : ExitCode.USER_FAULT;
    }

    /** The human form: one line per problem, then a summary line. */
    public String toText() {
        StringBuilder out = new StringBuilder();
        for (ConfigProblem error : errors) {
            out.append("error: ").append(error.format()).append('\n');
        }
        for (ConfigProblem warning : warnings) {
            out.append("warning: ").append(warning.format()).append('\n');
        }
        for (Check check : checks) {
            if (check.status() == Check.Status.SKIPPED) {
                out.append("skipped: ").append(check.name()).append(": ").append(check.reason().orElse("")).append('\n');
            }
        }
        out.append(file).append(sound() ? ": valid" : ": invalid (" + errors.size() + (errors.size() == 1 ? " error" : " errors") + ")");
        if (!warnings.isEmpty()) {
            out.append(", ").append(warnings.size()).append(warnings.size() == 1 ? " warning" : " warnings");
        }
        return out.append('\n').toString();
    }

    public String toJson() {
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode root = mapper.createObjectNode();
        root.put("file", file);
        root.put("valid", sound());
        root.put("exit_code", exitCode().code());
        problems(root.putArray("errors"), errors);
        problems(root.putArray("warnings"), warnings);
        ArrayNode checkNodes = root.putArray("checks");
        for (Check check : checks) {
            ObjectNode node = checkNodes.addObject();
            node.put("name", check.name());
            node.put("status", check.status().label());
            check.reason().ifPresent(reason -> node.put("reason", reason));
            if (!check.problems().isEmpty()) {
                problems(node.putArray("problems"), check.problems());
            }
        }
        return root.toPrettyString() + "\n";
    }

    private static void problems(ArrayNode array, List<ConfigProblem> problems) {
        for (ConfigProblem problem : problems) {
            ObjectNode node = array.addObject();
            node.put("file", problem.file());
            node.put("line", problem.line());
            node.put("column", problem.column());
            node.put("path", problem.path());
            node.put("code", problem.code().code());
            node.put("message", problem.message());
        }
    }
}
