// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.config;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Iterator;
import java.util.Map;

/**
 * Writes a commented YAML skeleton of every key a schema knows: its description, its allowed values,
 * its default. Generated from the schema, so it cannot drift from what {@code validate} accepts.
 */
public final class ConfigExample {
    /** A schema property marked {@code "x-mallard-example": false} is left out of the example. */
    static final String OMIT_KEYWORD = "x-mallard-example";

    private final JsonNode root;

    public ConfigExample(ConfigSchema schema) {
        this.root = schema.document();
    }

    public String render() {
        StringBuilder out = new StringBuilder();
        if (root.has("title")) {
            out.append("# ").append(root.get("title").asText()).append('\n');
        }
        if (root.has("description")) {
            comment(out, "", root.get("description").asText());
        }
        writeProperties(out, resolve(root), "");
        return out.toString();
    }

    private void writeProperties(StringBuilder out, JsonNode schema, String indent) {
        JsonNode properties = schema.path("properties");
        JsonNode required = schema.path("required");
        Iterator<Map.Entry<String, JsonNode>> fields = properties.fields();
        boolean first = true;
        while (fields.hasNext()) {
            Map.Entry<String, JsonNode> field = fields.next();
            if (field.getValue().path("deprecated").asBoolean(false) || !field.getValue().path(OMIT_KEYWORD).asBoolean(true)) {
                // Refused keys (SQLFlow's udfs) are documented, not offered; nor is an alternative the schema marks
                // "x-mallard-example": false (a table's polled window, which excludes the window beside it).
                continue;
            }
            if (!first && indent.isEmpty()) {
                out.append('\n');
            }
            first = false;
            writeProperty(out, field.getKey(), resolve(field.getValue()), indent, contains(required, field.getKey()));
        }
    }

    private void writeProperty(StringBuilder out, String name, JsonNode schema, String indent, boolean required) {
        StringBuilder note = new StringBuilder(schema.path("description").asText(""));
        if (schema.has("enum")) {
            note.append(note.isEmpty() ? "" : " ").append("One of: ").append(join(schema.get("enum"))).append('.');
        }
        if (schema.has("default")) {
            note.append(note.isEmpty() ? "" : " ").append("Default: ").append(schema.get("default").toString()).append('.');
        }
        if (required) {
            note.append(note.isEmpty() ? "" : " ").append("Required.");
        }
        if (!note.isEmpty()) {
            comment(out, indent, note.toString());
        }
        String type = typeOf(schema);
        switch (type) {
            case "object" -> {
                if (schema.path("properties").isEmpty()) {
                    out.append(indent).append(name).append(": {}\n");
                } else {
                    out.append(indent).append(name).append(":\n");
                    writeProperties(out, schema, indent + "  ");
                }
            }
            case "array" -> {
                JsonNode items = resolve(schema.path("items"));
                if ("object".equals(typeOf(items)) && !items.path("properties").isEmpty()) {
                    out.append(indent).append(name).append(":\n");
                    String itemIndent = indent + "  ";
                    StringBuilder item = new StringBuilder();
                    writeProperties(item, items, itemIndent + "  ");
                    String body = item.toString();
                    // The first key of the item carries the list dash.
                    int firstKey = firstKeyOffset(body, itemIndent + "  ");
                    out.append(body, 0, firstKey).append(itemIndent).append("- ")
                            .append(body.substring(firstKey + itemIndent.length() + 2));
                } else {
                    out.append(indent).append(name).append(": ").append(example(schema)).append('\n');
                }
            }
            default -> out.append(indent).append(name).append(": ").append(example(schema)).append('\n');
        }
    }

    private static int firstKeyOffset(String body, String keyIndent) {
        int at = 0;
        for (String line : body.split("\n", -1)) {
            if (!line.stripLeading().startsWith("#")) {
                return at;
            }
            at += line.length() + 1;
        }
        return 0;
    }

    private String example(JsonNode schema) {
        if (schema.has("examples") && schema.get("examples").size() > 0) {
            return yamlScalar(schema.get("examples").get(0));
        }
        if (schema.has("default")) {
            return yamlScalar(schema.get("default"));
        }
        if (schema.has("enum")) {
            return yamlScalar(schema.get("enum").get(0));
        }
        return switch (typeOf(schema)) {
            // The smallest value the schema accepts, so the example stays valid (a key with no default, e.g. max_attempts).
            case "integer", "number" -> schema.has("minimum") ? schema.get("minimum").asText() : "0";
            case "boolean" -> "false";
            case "array" -> "[]";
            default -> "\"\"";
        };
    }

    private static String yamlScalar(JsonNode value) {
        if (value.isTextual()) {
            String text = value.asText();
            if (text.contains("\n")) {
                return "|\n" + text.lines().map(l -> "    " + l).reduce((a, b) -> a + "\n" + b).orElse("");
            }
            return value.toString();
        }
        return value.toString();
    }

    private JsonNode resolve(JsonNode schema) {
        JsonNode current = schema;
        while (current.has("$ref")) {
            String ref = current.get("$ref").asText();
            current = root.at(ref.startsWith("#") ? ref.substring(1) : ref);
        }
        return current;
    }

    private static String typeOf(JsonNode schema) {
        JsonNode type = schema.path("type");
        if (type.isArray()) {
            return type.get(0).asText();
        }
        if (type.isTextual()) {
            return type.asText();
        }
        return schema.has("properties") ? "object" : "string";
    }

    private static boolean contains(JsonNode array, String value) {
        for (JsonNode item : array) {
            if (item.asText().equals(value)) {
                return true;
            }
        }
        return false;
    }

    private static String join(JsonNode values) {
        StringBuilder out = new StringBuilder();
        for (JsonNode value : values) {
            out.append(out.isEmpty() ? "" : ", ").append(value.asText());
        }
        return out.toString();
    }

    private static void comment(StringBuilder out, String indent, String text) {
        for (String line : wrap(text, 96 - indent.length())) {
            out.append(indent).append("# ").append(line).append('\n');
        }
    }

    private static java.util.List<String> wrap(String text, int width) {
        java.util.List<String> lines = new java.util.ArrayList<>();
        StringBuilder line = new StringBuilder();
        for (String word : text.split("\\s+")) {
            if (line.length() + word.length() + 1 > width && !line.isEmpty()) {
                lines.add(line.toString());
                line.setLength(0);
            }
            line.append(line.isEmpty() ? "" : " ").append(word);
        }
        if (!line.isEmpty()) {
            lines.add(line.toString());
        }
        return lines;
    }
}
