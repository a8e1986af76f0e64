// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.error;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** docs/errors.md lists exactly the registry's codes, each with its exit code. */
class ErrorCodeDocsTest {
    private static final Pattern ROW = Pattern.compile("^\\|\\s*`([a-z_]+(?:\\.[a-z_]+)+)`\\s*\\|\\s*(\\d+)\\s*\\|", Pattern.MULTILINE);
    private static final Pattern EXIT_ROW = Pattern.compile("^\\|\\s*(\\d+)\\s*\\|\\s*`([A-Z_]+)`\\s*\\|", Pattern.MULTILINE);

    private static String doc() throws IOException {
        return Files.readString(Path.of("..", "docs", "errors.md"));
    }

    @Test
    void everyRegisteredCodeIsDocumentedWithItsExitCode() throws IOException {
        Map<String, Integer> documented = new HashMap<>();
        Matcher rows = ROW.matcher(doc());
        while (rows.find()) {
            documented.put(rows.group(1), Integer.parseInt(rows.group(2)));
        }
        Map<String, Integer> registered = new HashMap<>();
        for (ErrorCode code : ErrorCode.values()) {
            registered.put(code.code(), code.exitCode().code());
        }
        assertThat(documented).isEqualTo(registered);
    }

    @Test
    void everyExitCodeIsDocumented() throws IOException {
        Map<Integer, String> documented = new HashMap<>();
        Matcher rows = EXIT_ROW.matcher(doc());
        while (rows.find()) {
            documented.put(Integer.parseInt(rows.group(1)), rows.group(2));
        }
        Map<Integer, String> registered = new HashMap<>();
        for (ExitCode code : ExitCode.values()) {
            registered.put(code.code(), code.name());
        }
        assertThat(documented).isEqualTo(registered);
    }
}
