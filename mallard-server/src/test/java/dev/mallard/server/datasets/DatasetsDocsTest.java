// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.datasets;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** docs/datasets.md documents every serve key and error code, and embeds the example configuration the ITs serve. */
class DatasetsDocsTest {
    private static final Path DOC = Path.of("..", "docs", "datasets.md");

    @Test
    void everyServeSchemaKeyIsInTheKeysTable() throws Exception {
        String doc = Files.readString(DOC);
        List<String> keys = new ArrayList<>();
        collect(ServeConfigReader.schema().document(), "", keys);
        assertThat(keys).contains("serve.datasets.N.grains.G.max_range", "serve.cache.max_mb", "serve.clients.N.client_id");
        for (String key : keys) {
            assertThat(doc).as("docs/datasets.md documents " + key).contains("`" + key + "`");
        }
    }

    @Test
    void theDocEmbedsTheExampleConfigurationVerbatim() throws Exception {
        String doc = Files.readString(DOC);
        String example = Files.readString(ServeDatasetsIT.EXAMPLE);
        int start = doc.indexOf("<!-- serve-example -->\n```yaml\n") + "<!-- serve-example -->\n```yaml\n".length();
        assertThat(doc.substring(start, doc.indexOf("```", start))).isEqualTo(example);
    }

    @Test
    void everyErrorCodeADatasetAnswersIsInTheErrorsTable() throws Exception {
        String doc = Files.readString(DOC);
        for (String code : List.of("invalid_param", "invalid_range", "range_too_wide", "unknown_grain", "too_many_rows", "unauthorized", "forbidden",
                "unknown_dataset", "query_failed")) {
            assertThat(doc).contains("| `" + code + "` |");
        }
    }

    private static void collect(JsonNode schema, String prefix, List<String> keys) {
        JsonNode properties = schema.path("properties");
        properties.fieldNames().forEachRemaining(name -> {
            JsonNode child = properties.get(name);
            String path = prefix + name;
            if (child.path("properties").isObject()) {
                collect(child, path + ".", keys);
            } else if (child.path("items").path("properties").isObject()) {
                keys.add(path);
                collect(child.path("items"), path + ".N.", keys);
            } else if (child.path("additionalProperties").path("properties").isObject()) {
                keys.add(path);
                collect(child.path("additionalProperties"), path + ".G.", keys);
            } else {
                keys.add(path);
            }
        });
    }
}
