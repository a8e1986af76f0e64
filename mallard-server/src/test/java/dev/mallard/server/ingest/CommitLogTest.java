// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The commit log keeps whole lines: a torn last one (a crash mid-append) is cut off when it is opened. */
class CommitLogTest {
    @TempDir
    Path dir;

    private static CommitLog.Commit commit(long seq) {
        return new CommitLog.Commit(seq, "2026-12-02T06:00:00Z", List.of(seq + ".parquet"), 10, 3, List.of(new CommitLog.Batch("p", seq, 3)),
                List.of(new CommitLog.Mark(0, Map.of("host", "a"), "1", "2", 3)));
    }

    @Test
    void aTornLastLineIsCutOffAndAppendingGoesOnAfterTheLastWholeOne() throws Exception {
        Path file = dir.resolve("q.jsonl");
        try (CommitLog log = CommitLog.open(file)) {
            log.append(commit(0));
            log.append(commit(1));
        }
        long whole = Files.size(file);
        Files.writeString(file, "{\"seq\":2,\"at\":\"2026", StandardCharsets.UTF_8, StandardOpenOption.APPEND);

        try (CommitLog log = CommitLog.open(file)) {
            assertThat(log.commits()).containsExactly(commit(0), commit(1));
            assertThat(Files.size(file)).isEqualTo(whole);
            log.append(commit(2));
        }
        try (CommitLog log = CommitLog.open(file)) {
            assertThat(log.commits()).containsExactly(commit(0), commit(1), commit(2));
        }
    }
}
