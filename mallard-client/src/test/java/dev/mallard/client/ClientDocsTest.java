// SPDX-License-Identifier: Apache-2.0
package dev.mallard.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.client.logback.MallardAppender;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** docs/client.md documents every option and appender property, and its Java examples are the ones the ITs run. */
class ClientDocsTest {
    private static final Path DOC = Path.of("..", "docs", "client.md");
    private static final Path TESTS = Path.of("src", "test", "java", "dev", "mallard", "client");

    @Test
    void everyProducerOptionIsInTheOptionsTable() throws Exception {
        String doc = Files.readString(DOC);
        for (RecordComponent option : ProducerOptions.class.getRecordComponents()) {
            assertThat(doc).as("docs/client.md documents " + option.getName()).contains("| `" + option.getName() + "` |");
        }
    }

    @Test
    void everyAppenderPropertyIsInTheAppenderTable() throws Exception {
        String doc = Files.readString(DOC);
        for (Method method : MallardAppender.class.getDeclaredMethods()) {
            if (Modifier.isPublic(method.getModifiers()) && method.getName().startsWith("set") && method.getParameterCount() == 1
                    && method.getParameterTypes()[0] != dev.mallard.client.ArrowProducer.class && !method.getName().equals("setName")) {
                String property = Character.toLowerCase(method.getName().charAt(3)) + method.getName().substring(4);
                assertThat(doc).as("docs/client.md documents <" + property + ">").contains("| `<" + property + ">` |");
            }
        }
    }

    @Test
    void theJavaExamplesAreTheOnesTheTestsRun() throws Exception {
        String doc = Files.readString(DOC);
        List<String> snippets = new ArrayList<>();
        for (String file : List.of("HttpArrowProducerIT.java", "FlightArrowProducerIT.java", "SampleApp.java")) {
            Matcher m = Pattern.compile("// docs:begin (\\w+)\\n(.*?)\\n\\s*// docs:end \\1", Pattern.DOTALL).matcher(Files.readString(TESTS.resolve(file)));
            while (m.find()) {
                snippets.add(dedent(m.group(2)));
            }
        }
        assertThat(snippets).hasSize(3);
        for (String snippet : snippets) {
            assertThat(doc).contains(snippet);
        }
    }

    private static String dedent(String block) {
        List<String> lines = block.lines().toList();
        int indent = lines.stream().filter(l -> !l.isBlank()).mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
        StringBuilder out = new StringBuilder();
        for (String line : lines) {
            out.append(line.length() >= indent ? line.substring(indent) : line.strip()).append('\n');
        }
        return out.toString();
    }
}
