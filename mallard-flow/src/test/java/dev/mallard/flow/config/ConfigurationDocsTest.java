// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.config;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** docs/configuration.md documents every key the pipeline schema accepts. */
class ConfigurationDocsTest {
    @Test
    void everySchemaKeyIsDocumented() throws IOException {
        JsonNode schema = PipelineConfigReader.schema().document();
        List<String> paths = new ArrayList<>();
        collect(schema, schema, "", paths);
        String doc = Files.readString(Path.of("..", "docs", "configuration.md"));
        assertThat(paths).hasSizeGreaterThan(50).allSatisfy(path -> assertThat(doc).contains("`" + path + "`"));
    }

    private static void collect(JsonNode root, JsonNode node, String path, List<String> paths) {
        JsonNode resolved = resolve(root, node);
        if (resolved.path("type").asText().equals("array") && resolve(root, resolved.path("items")).has("properties")) {
            resolved = resolve(root, resolved.path("items"));
            path = path + "[]";
        }
        // Full sink definitions whose keys are those of pipeline.sink, documented there once.
        if (path.equals("pipeline.on_error.dlq") || path.equals("tables.sql[].window.sink") || path.equals("tables.sql[].manager.sink")) {
            return;
        }
        JsonNode properties = resolved.path("properties");
        for (var names = properties.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            String child = path.isEmpty() ? name : path + "." + name;
            paths.add(child);
            collect(root, properties.get(name), child, paths);
        }
    }

    private static JsonNode resolve(JsonNode root, JsonNode node) {
        JsonNode current = node;
        while (current.has("$ref")) {
            current = root.at(current.get("$ref").asText().substring(1));
        }
        return current;
    }
}
