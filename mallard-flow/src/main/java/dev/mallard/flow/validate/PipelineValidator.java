// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.validate;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.core.config.ConfigProblem;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.flow.config.PipelineConfigReader;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/**
 * {@code mallard validate}: renders the template, checks the schema and the rules, and checks the SQL in an
 * empty in-memory DuckDB, reaching no broker or sink. Reports every fault in one pass.
 */
public final class PipelineValidator {
    private static final Set<ErrorCode> TEMPLATE = Set.of(ErrorCode.USER_CONFIG_TEMPLATE_INVALID, ErrorCode.USER_CONFIG_TEMPLATE_UNDEFINED);
    private static final Set<ErrorCode> SCHEMA = Set.of(ErrorCode.USER_CONFIG_INVALID, ErrorCode.USER_CONFIG_UNKNOWN_KEY);

    private final PipelineConfigReader reader;

    public PipelineValidator(ConfigEnvironment environment) {
        this.reader = new PipelineConfigReader(requireNonNull(environment, "environment is null"));
    }

    public ValidationReport validate(Path file) {
        return report(reader.read(file));
    }

    public ValidationReport validate(String file, String text) {
        return report(reader.read(file, text));
    }

    private ValidationReport report(PipelineConfigReader.Result result) {
        List<ConfigProblem> errors = new ArrayList<>(result.errors());
        List<ConfigProblem> warnings = new ArrayList<>(result.warnings());
        List<Check> checks = new ArrayList<>();
        checks.add(Check.of("template", only(result.errors(), TEMPLATE::contains), only(result.warnings(), TEMPLATE::contains), Optional.empty()));
        if (result.loaded().yaml() == null) {
            checks.add(Check.skipped("schema", "the file did not render to YAML"));
            checks.add(Check.skipped("rules", "the file did not render to YAML"));
            checks.add(Check.skipped("sql", "the file did not render to YAML"));
            return new ValidationReport(result.loaded().file(), errors, warnings, checks);
        }
        checks.add(Check.of("schema", only(result.errors(), SCHEMA::contains), List.of(), Optional.empty()));
        checks.add(Check.of("rules", only(result.errors(), code -> !SCHEMA.contains(code) && !TEMPLATE.contains(code)), List.of(), Optional.empty()));
        try (SqlChecks sql = new SqlChecks(result.loaded().file(), result.loaded().yaml(), result.loaded().renderedText())) {
            List<String[]> resultColumns = new ArrayList<>();
            for (Check check : List.of(sql.commands(), sql.tables(), sql.handler(resultColumns), sql.window(), sql.sink(resultColumns))) {
                checks.add(check);
                if (check.status() == Check.Status.FAIL) {
                    errors.addAll(check.problems());
                } else {
                    warnings.addAll(check.problems());
                }
            }
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot open the in-memory DuckDB that checks SQL: " + e.getMessage(), e);
        }
        return new ValidationReport(result.loaded().file(), errors, warnings, checks);
    }

    private static List<ConfigProblem> only(List<ConfigProblem> problems, Predicate<ErrorCode> codes) {
        return problems.stream().filter(problem -> codes.test(problem.code())).toList();
    }
}
