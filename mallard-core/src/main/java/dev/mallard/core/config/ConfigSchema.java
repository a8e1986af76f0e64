// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.config;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonPointer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import com.networknt.schema.path.NodePath;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.StreamSupport;

/**
 * A JSON Schema for one kind of configuration file, the single source for validation and for the
 * generated example. Faults come back as {@link ConfigProblem}s located in the YAML source.
 */
public final class ConfigSchema {
    private final String name;
    private final JsonNode document;
    private final Schema schema;

    private ConfigSchema(String name, JsonNode document) {
        this.name = requireNonNull(name, "name is null");
        this.document = requireNonNull(document, "document is null");
        this.schema = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12).getSchema(withoutOwnKeywords(document));
    }

    /** Mallard's own keyword for the example ({@code x-mallard-example}) is the example's, not the validator's: removed from its copy. */
    private static JsonNode withoutOwnKeywords(JsonNode document) {
        JsonNode copy = document.deepCopy();
        strip(copy);
        return copy;
    }

    private static void strip(JsonNode node) {
        if (node instanceof com.fasterxml.jackson.databind.node.ObjectNode object) {
            object.remove(ConfigExample.OMIT_KEYWORD);
        }
        node.forEach(ConfigSchema::strip);
    }

    /** Loads a schema from the classpath next to {@code anchor}. */
    public static ConfigSchema fromResource(Class<?> anchor, String resource) {
        try (InputStream in = anchor.getResourceAsStream(resource)) {
            if (in == null) {
                throw new MallardException(ErrorCode.SYSTEM_INTERNAL, "schema resource " + resource + " is missing from the build");
            }
            return new ConfigSchema(resource, new ObjectMapper().readTree(in));
        } catch (IOException e) {
            throw new MallardException(ErrorCode.SYSTEM_INTERNAL, "schema resource " + resource + " does not parse: " + e.getMessage(), e);
        }
    }

    public String name() {
        return name;
    }

    public JsonNode document() {
        return document;
    }

    public List<ConfigProblem> validate(String file, LocatedYaml yaml) {
        List<ConfigProblem> problems = new ArrayList<>();
        List<Error> messages = new ArrayList<>(schema.validate(yaml.root()));
        messages.sort(Comparator.comparing((Error m) -> pathOf(m))
                .thenComparing(Error::getMessage));
        for (Error message : messages) {
            String instancePath = instancePath(message);
            String path = pathOf(message);
            LocatedYaml.Location at = yaml.locate(path);
            ConfigProblem problem = switch (message.getKeyword()) {
                case "additionalProperties" -> new ConfigProblem(file, at.line(), at.column(), path,
                        ErrorCode.USER_CONFIG_UNKNOWN_KEY, unknownKey(message, instancePath));
                case "required" -> new ConfigProblem(file, at.line(), at.column(), path, ErrorCode.USER_CONFIG_INVALID,
                        "'" + path + "' is required" + describe(message).map(d -> ": " + d).orElse(""));
                default -> new ConfigProblem(file, at.line(), at.column(), path, ErrorCode.USER_CONFIG_INVALID,
                        "'" + displayPath(path) + "' " + stripPath(message.getMessage()) + describe(message).map(d -> " (" + d + ")").orElse(""));
            };
            if (!problems.contains(problem)) {
                problems.add(problem);
            }
        }
        return problems;
    }

    private static String displayPath(String path) {
        return path.isEmpty() ? "(top level)" : path;
    }

    /** The instance location in LocatedYaml's spelling: {@code sinks[0].type}. */
    private static String instancePath(Error message) {
        NodePath location = message.getInstanceLocation();
        StringBuilder path = new StringBuilder();
        for (int i = 0; i < location.getNameCount(); i++) {
            Object element = location.getElement(i);
            if (element instanceof Integer index) {
                path.append('[').append(index).append(']');
            } else {
                path.append(path.isEmpty() ? "" : ".").append(element);
            }
        }
        return path.toString();
    }

    private static String pathOf(Error message) {
        String base = instancePath(message);
        String property = message.getProperty();
        if (property == null || !(message.getKeyword().equals("additionalProperties") || message.getKeyword().equals("required"))) {
            return base;
        }
        return base.isEmpty() ? property : base + "." + property;
    }

    private static String stripPath(String text) {
        int colon = text.indexOf(": ");
        return colon >= 0 && text.startsWith("$") ? text.substring(colon + 2) : text;
    }

    private String unknownKey(Error message, String parentPath) {
        String key = message.getProperty();
        List<String> allowed = allowedKeys(message);
        String where = parentPath.isEmpty() ? "at the top level" : "under '" + parentPath + "'";
        StringBuilder text = new StringBuilder("unknown key '" + key + "' " + where);
        allowed.stream()
                .min(Comparator.comparingInt(candidate -> TemplateRenderer.distance(candidate, key)))
                .filter(best -> TemplateRenderer.distance(best, key) <= Math.max(2, key.length() / 3))
                .ifPresent(best -> text.append("; did you mean '").append(best).append("'?"));
        if (!allowed.isEmpty()) {
            text.append(" Known keys: ").append(String.join(", ", allowed)).append('.');
        }
        return text.toString();
    }

    /** The sibling {@code properties} of the {@code additionalProperties} keyword that refused the key. */
    private List<String> allowedKeys(Error message) {
        String fragment = message.getSchemaLocation().getFragment().toString();
        if (!fragment.endsWith("/additionalProperties")) {
            return List.of();
        }
        String parent = fragment.substring(0, fragment.length() - "/additionalProperties".length());
        if (parent.startsWith("#")) {
            parent = parent.substring(1);
        }
        JsonNode properties = document.at(JsonPointer.compile(parent.isEmpty() ? "" : parent)).path("properties");
        return StreamSupport.stream(((Iterable<String>) properties::fieldNames).spliterator(), false).toList();
    }

    private Optional<String> describe(Error message) {
        if (!"required".equals(message.getKeyword())) {
            return Optional.empty();
        }
        String fragment = message.getSchemaLocation().getFragment().toString();
        String parent = fragment.endsWith("/required") ? fragment.substring(0, fragment.length() - "/required".length()) : fragment;
        if (parent.startsWith("#")) {
            parent = parent.substring(1);
        }
        JsonNode property = document.at(JsonPointer.compile(parent)).path("properties").path(message.getProperty());
        JsonNode description = property.path("description");
        return description.isTextual() ? Optional.of(description.asText()) : Optional.empty();
    }
}
