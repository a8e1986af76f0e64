// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.core.config.ConfigLoader;
import dev.mallard.flow.validate.PipelineValidator;
import dev.mallard.flow.validate.ValidationReport;
import dev.mallard.server.datasets.ServeConfigReader;
import java.nio.file.Path;
import java.util.List;

/** {@code mallard validate}'s choice of schema by top-level key: a file with {@code serve:} and no {@code pipeline:} is a serve configuration. */
final class ConfigValidation {
    private ConfigValidation() {}

    static ValidationReport validate(Path file, ConfigEnvironment environment) {
        ConfigLoader.Loaded loaded = new ConfigLoader(ServeConfigReader.schema(), environment).load(file);
        if (loaded.yaml() != null && ServeConfigReader.isServeConfig(loaded.yaml().root())) {
            return new ValidationReport(file.toString(), new ServeConfigReader(environment).problems(file), loaded.warnings(), List.of());
        }
        return new PipelineValidator(environment).validate(file);
    }
}
