// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.config;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.mallard.core.error.ErrorCode;
import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A YAML document as a JSON tree, with the line and column of every key and value, so that a schema
 * fault found on the tree can be reported at {@code file:line:col}.
 *
 * <p>Paths are written {@code pipeline.sink.type} and {@code tables.sql[0].name}, the form the schema
 * validator reports.
 */
public final class LocatedYaml {
    private static final YAMLFactory YAML = YAMLFactory.builder().build();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    public record Location(int line, int column) {}

    private final JsonNode root;
    private final Map<String, Location> locations;

    private LocatedYaml(JsonNode root, Map<String, Location> locations) {
        this.root = root;
        this.locations = Map.copyOf(locations);
    }

    public JsonNode root() {
        return root;
    }

    /** Where the value at {@code path} starts; its parent's location when the key is absent. */
    public Location locate(String path) {
        String current = path;
        while (true) {
            Location found = locations.get(current);
            if (found != null) {
                return found;
            }
            if (current.isEmpty()) {
                return new Location(1, 1);
            }
            current = parent(current);
        }
    }

    public Optional<Location> exactly(String path) {
        return Optional.ofNullable(locations.get(path));
    }

    static String parent(String path) {
        int dot = path.lastIndexOf('.');
        int bracket = path.lastIndexOf('[');
        int cut = Math.max(dot, bracket);
        return cut <= 0 ? "" : path.substring(0, cut);
    }

    /** Parses YAML; a syntax error becomes a {@link ConfigInvalidException} naming the line. */
    public static LocatedYaml parse(String file, String text, List<ConfigProblem> problems) {
        Map<String, Location> locations = new HashMap<>();
        try (JsonParser parser = YAML.createParser(text)) {
            JsonToken first = parser.nextToken();
            if (first == null) {
                return new LocatedYaml(NODES.objectNode(), locations);
            }
            JsonNode root = read(parser, "", locations, file, problems);
            return new LocatedYaml(root, locations);
        } catch (JsonProcessingException e) {
            JsonLocation at = e.getLocation();
            String reason = e.getOriginalMessage().lines().findFirst().orElse("malformed YAML");
            throw new ConfigInvalidException(List.of(new ConfigProblem(file, at == null ? 0 : at.getLineNr(),
                    at == null ? 0 : at.getColumnNr(), "", ErrorCode.USER_CONFIG_TEMPLATE_INVALID,
                    "the rendered file is not valid YAML: " + reason)));
        } catch (IOException e) {
            throw new ConfigInvalidException(List.of(new ConfigProblem(file, 0, 0, "", ErrorCode.USER_CONFIG_TEMPLATE_INVALID,
                    "cannot read YAML: " + e.getMessage())));
        }
    }

    private static JsonNode read(JsonParser parser, String path, Map<String, Location> locations, String file,
            List<ConfigProblem> problems) throws IOException {
        JsonLocation start = parser.currentTokenLocation();
        locations.putIfAbsent(path, new Location(start.getLineNr(), start.getColumnNr()));
        JsonToken token = parser.currentToken();
        switch (token) {
            case START_OBJECT -> {
                ObjectNode object = NODES.objectNode();
                while (parser.nextToken() == JsonToken.FIELD_NAME) {
                    String name = parser.currentName();
                    JsonLocation keyAt = parser.currentTokenLocation();
                    String childPath = path.isEmpty() ? name : path + "." + name;
                    parser.nextToken();
                    if (object.has(name)) {
                        problems.add(new ConfigProblem(file, keyAt.getLineNr(), keyAt.getColumnNr(), childPath,
                                ErrorCode.USER_CONFIG_INVALID, "key '" + name + "' appears twice; keep one"));
                    }
                    locations.put(childPath, new Location(keyAt.getLineNr(), keyAt.getColumnNr()));
                    object.set(name, read(parser, childPath, locations, file, problems));
                }
                return object;
            }
            case START_ARRAY -> {
                ArrayNode array = NODES.arrayNode();
                int index = 0;
                while (parser.nextToken() != JsonToken.END_ARRAY) {
                    array.add(read(parser, path + "[" + index + "]", locations, file, problems));
                    index++;
                }
                return array;
            }
            case VALUE_STRING -> {
                return NODES.textNode(parser.getText());
            }
            case VALUE_NUMBER_INT -> {
                return switch (parser.getNumberType()) {
                    case INT -> NODES.numberNode(parser.getIntValue());
                    case LONG -> NODES.numberNode(parser.getLongValue());
                    default -> NODES.numberNode(parser.getBigIntegerValue());
                };
            }
            case VALUE_NUMBER_FLOAT -> {
                return NODES.numberNode(parser.getDecimalValue());
            }
            case VALUE_TRUE, VALUE_FALSE -> {
                return NODES.booleanNode(parser.getBooleanValue());
            }
            case VALUE_NULL -> {
                return NODES.nullNode();
            }
            default -> throw new IOException("unexpected YAML token " + token);
        }
    }
}
