// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.config;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a configuration file: render the Jinja template, parse the YAML with locations, check it against
 * the schema. Every fault is collected before anything fails, so one run reports them all.
 */
public final class ConfigLoader {
    private final ConfigSchema schema;
    private final ConfigEnvironment environment;

    public ConfigLoader(ConfigSchema schema, ConfigEnvironment environment) {
        this.schema = requireNonNull(schema, "schema is null");
        this.environment = requireNonNull(environment, "environment is null");
    }

    /** The outcome of reading a file: the document when it parsed, and what was wrong with it. */
    public record Loaded(String file, String renderedText, LocatedYaml yaml, List<ConfigProblem> errors,
            List<ConfigProblem> warnings) {
        public Loaded {
            errors = List.copyOf(errors);
            warnings = List.copyOf(warnings);
        }

        public boolean sound() {
            return errors.isEmpty();
        }

        /** The document, or a {@link ConfigInvalidException} carrying every fault. */
        public LocatedYaml orThrow() {
            if (!errors.isEmpty()) {
                throw new ConfigInvalidException(errors);
            }
            return yaml;
        }
    }

    public Loaded load(Path path) {
        String text;
        try {
            text = Files.readString(path, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new MallardException(ErrorCode.USER_CONFIG_NOT_FOUND, "config file " + path + " does not exist");
        } catch (IOException e) {
            throw new MallardException(ErrorCode.USER_CONFIG_NOT_FOUND, "cannot read config file " + path + ": " + e.getMessage());
        }
        return load(path.toString(), text);
    }

    public Loaded load(String file, String template) {
        TemplateRenderer.Rendered rendered = new TemplateRenderer(environment).render(file, template);
        List<ConfigProblem> errors = new ArrayList<>(rendered.errors());
        LocatedYaml yaml;
        try {
            yaml = LocatedYaml.parse(file, rendered.text(), errors);
        } catch (ConfigInvalidException e) {
            errors.addAll(e.problems());
            return new Loaded(file, rendered.text(), null, errors, rendered.warnings());
        }
        errors.addAll(schema.validate(file, yaml));
        return new Loaded(file, rendered.text(), yaml, errors, rendered.warnings());
    }

    public ConfigEnvironment environment() {
        return environment;
    }
}
