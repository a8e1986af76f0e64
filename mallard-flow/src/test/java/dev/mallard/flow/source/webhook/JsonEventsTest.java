// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.source.webhook;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class JsonEventsTest {
    private static List<String> split(String body) throws JsonEvents.BadBody {
        return JsonEvents.split(body.getBytes(StandardCharsets.UTF_8)).stream().map(b -> new String(b, StandardCharsets.UTF_8)).toList();
    }

    @Test
    void oneObjectIsOneEventWithItsExactBytes() throws Exception {
        assertThat(split("{\"a\": 1, \"s\": \"é\\n\"}")).containsExactly("{\"a\": 1, \"s\": \"é\\n\"}");
    }

    @Test
    void jsonLinesAreOneEventPerLineAndBlankLinesAreSkipped() throws Exception {
        assertThat(split("{\"n\":1}\n\n{\"n\":2}\r\n{\"n\":{\"deep\":[3]}}\n")).containsExactly("{\"n\":1}", "{\"n\":2}", "{\"n\":{\"deep\":[3]}}");
    }

    @Test
    void aPrettyPrintedObjectIsOneEvent() throws Exception {
        assertThat(split("{\n  \"action\": \"opened\",\n  \"number\": 7\n}\n")).hasSize(1);
    }

    @Test
    void anythingButObjectsIsRefusedSayingWhatToSend() {
        assertThatThrownBy(() -> split("[{\"a\":1}]")).isInstanceOf(JsonEvents.BadBody.class).hasMessageContaining("array");
        assertThatThrownBy(() -> split("{\"a\":1}\n42")).isInstanceOf(JsonEvents.BadBody.class).hasMessageContaining("event 2 is a JSON number");
        assertThatThrownBy(() -> split("{\"a\":")).isInstanceOf(JsonEvents.BadBody.class).hasMessageContaining("not JSON");
        assertThatThrownBy(() -> split("  \n")).isInstanceOf(JsonEvents.BadBody.class).hasMessageContaining("no JSON object");
    }
}
