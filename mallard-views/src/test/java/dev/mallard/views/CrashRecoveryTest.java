// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.duckdb.DuckDBConnection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A writer killed with SIGKILL while its captured changes were not yet synced: opening the database applies them
 * before the first read, so even a raw DuckDB reader sees every view equal to its query.
 */
class CrashRecoveryTest {
    private static final Map<String, String> VIEWS = Map.of(
            "evens", "SELECT k, v FROM t WHERE v % 2 = 0",
            "extremes", "SELECT k, min(v) AS lo, max(v) AS hi FROM t GROUP BY k");

    @Test
    void openingADatabaseAfterAKilledWriterAppliesItsUnsyncedChangesBeforeTheFirstRead(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("crash.duckdb");
        try (Connection setup = DriverManager.getConnection("jdbc:mallard:" + file); Statement statement = setup.createStatement()) {
            statement.execute("CREATE TABLE t (k INTEGER, v INTEGER)");
            for (Map.Entry<String, String> view : VIEWS.entrySet()) {
                statement.execute("CREATE MATERIALIZED VIEW " + view.getKey() + " AS " + view.getValue());
            }
        }
        long seed = new Random().nextLong();
        Random random = new Random(seed);
        for (int round = 0; round < 3; round++) {
            int killAfter = 3 + random.nextInt(30);
            Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                    CrashWriter.class.getName(), file.toString()).redirectErrorStream(true).start();
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                int committed = -1;
                String line;
                while (committed < killAfter && (line = lines.readLine()) != null) {
                    if (line.startsWith("committed ")) {
                        committed = Integer.parseInt(line.substring("committed ".length()));
                    }
                }
                assertThat(committed).as("the writer ran until the kill (seed %d)", seed).isGreaterThanOrEqualTo(killAfter);
            } finally {
                child.destroyForcibly(); // SIGKILL on Linux: no shutdown hook, no close.
                assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
            }
            try (DuckDBConnection raw = DuckDb.open("jdbc:duckdb:" + file)) {
                assertThat(DuckDb.rows(raw, "SELECT count(*) > 0 FROM mallard_views.\"delta$main$t\"")).as("unsynced changes")
                        .containsExactly("true");
                try (MaterializedViews ignored = MaterializedViews.attach(raw)) {
                    for (Map.Entry<String, String> view : VIEWS.entrySet()) {
                        assertThat(DuckDb.difference(raw, view.getKey(), view.getValue()))
                                .as("%s after kill round %d (seed %d)", view.getKey(), round, seed).isZero();
                    }
                }
            }
        }
    }
}
