// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DeltaSplitsTest {
    @TempDir
    Path root;

    private Connection connection;
    private Path table;

    @BeforeEach
    void writeTheExampleTable() throws Exception {
        connection = DriverManager.getConnection("jdbc:duckdb:");
        table = DeltaTables.example(connection, root);
    }

    @AfterEach
    void close() throws Exception {
        connection.close();
    }

    private String query() {
        return "SELECT key, value, dt, p FROM read_delta('" + table + "')";
    }

    @Test
    void theLogsLiveFilesArePlannedOneSplitEachAndTogetherReadTheTable() throws Exception {
        List<ParquetSplits.Planned> splits = ParquetSplits.plan(connection, query(), 1);
        assertThat(splits).hasSize(5);
        assertThat(splits).allSatisfy(split -> assertThat(split.files()).hasSize(1));
        assertThat(splits).noneSatisfy(split -> assertThat(split.files().getFirst()).contains("p=x"));
        assertThat(union(splits)).isEqualTo(DeltaTables.exampleRows());
    }

    @Test
    void aPredicateOnPartitionColumnsPrunesTheFilesWhoseLoggedValuesFailIt() throws Exception {
        List<ParquetSplits.Planned> splits = ParquetSplits.plan(connection, query() + " WHERE dt = '2025-01-01'", 1);
        assertThat(splits).hasSize(2);
        assertThat(union(splits)).isEqualTo(DeltaTables.exampleRows().stream().filter(row -> row.contains("\t2025-01-01\t")).toList());
        List<ParquetSplits.Planned> spaced = ParquetSplits.plan(connection, query() + " WHERE p = 'a b' AND dt > DATE '2024-12-31'", 1);
        assertThat(spaced).hasSize(1);
        assertThat(union(spaced)).isEqualTo(DeltaTables.exampleRows().stream().filter(row -> row.endsWith("\ta b")).toList());
    }

    @Test
    void aPredicateOnAnotherColumnPrunesNothingAndFiltersRows() throws Exception {
        List<ParquetSplits.Planned> splits = ParquetSplits.plan(connection, query() + " WHERE key LIKE '%a'", 1);
        assertThat(splits).hasSize(5);
        assertThat(union(splits)).isEqualTo(DeltaTables.exampleRows().stream().filter(row -> row.split("\t")[0].endsWith("a")).toList());
    }

    @Test
    void withoutASplitSizeTheQueryIsOneSplitOverEveryLiveFile() throws Exception {
        List<ParquetSplits.Planned> splits = ParquetSplits.plan(connection, query(), 0);
        assertThat(splits).hasSize(1);
        assertThat(splits.getFirst().sql()).doesNotContain("read_delta").doesNotContain("p=x");
        assertThat(union(splits)).isEqualTo(DeltaTables.exampleRows());
    }

    @Test
    void dazzleDucksTypedEmptyBranchQueryOverReadDeltaSplitsAndPrunes() throws Exception {
        String query = "FROM (FROM (VALUES(NULL::VARCHAR, NULL::VARCHAR, NULL::VARCHAR, NULL::VARCHAR)) t( key, value, dt, p) WHERE false "
                + "UNION ALL BY NAME FROM read_delta('" + table + "'))";
        assertThat(ParquetSplits.plan(connection, query, 1)).hasSize(5);
        List<ParquetSplits.Planned> pruned = ParquetSplits.plan(connection, query + " WHERE dt = '2024-11-01'", 1);
        assertThat(pruned).hasSize(1);
        assertThat(union(pruned)).hasSize(2);
    }

    @Test
    void anAggregateIsOneSplitOverEveryLiveFileAnsweringAsTheTable() throws Exception {
        List<ParquetSplits.Planned> splits = ParquetSplits.plan(connection, "SELECT count(*) FROM read_delta('" + table + "') WHERE dt >= '2025-01-01'", 1);
        assertThat(splits).hasSize(1);
        assertThat(HiveTables.rows(connection, splits.getFirst().sql())).containsExactly("6");
    }

    @Test
    void aReaderVersionOrFeatureTheReaderDoesNotImplementIsRefused() throws Exception {
        for (Path refused : List.of(DeltaTables.withProtocol(connection, root, 4, List.of()),
                DeltaTables.withProtocol(connection, root, 3, List.of("v2Checkpoint")), DeltaTables.withADeletionVector(connection, root))) {
            assertThatThrownBy(() -> ParquetSplits.plan(connection, "SELECT * FROM read_delta('" + refused + "')", 1))
                    .isInstanceOfSatisfying(MallardException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_DELTA_UNSUPPORTED));
        }
        Path harmless = DeltaTables.withProtocol(connection, root, 3, List.of("timestampNtz"));
        assertThat(ParquetSplits.plan(connection, "SELECT * FROM read_delta('" + harmless + "')", 1)).hasSize(1);
    }

    @Test
    void aMissingCommitOrAMissingLogIsRefused() throws Exception {
        Path gap = DeltaTables.withAGap(connection, root);
        assertThatThrownBy(() -> ParquetSplits.plan(connection, "SELECT * FROM read_delta('" + gap + "')", 1))
                .isInstanceOfSatisfying(MallardException.class, e -> {
                    assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_DELTA_LOG_INVALID);
                    assertThat(e.getMessage()).contains("commit 1 is missing");
                });
        assertThatThrownBy(() -> ParquetSplits.plan(connection, "SELECT * FROM read_delta('" + root.resolve("nothing") + "')", 1))
                .isInstanceOfSatisfying(MallardException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_DELTA_LOG_INVALID));
    }

    @Test
    void readDeltaTakesOnePathAndOneTablePerQuery() throws Exception {
        for (String query : List.of("SELECT * FROM read_delta('" + table + "', version = 1)",
                "SELECT * FROM read_delta('" + table + "') UNION ALL SELECT * FROM read_delta('" + table + "')")) {
            assertThatThrownBy(() -> ParquetSplits.plan(connection, query, 1))
                    .isInstanceOfSatisfying(MallardException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_DELTA_UNSUPPORTED));
        }
    }

    private List<String> union(List<ParquetSplits.Planned> splits) throws Exception {
        List<String> union = new ArrayList<>();
        for (ParquetSplits.Planned split : splits) {
            union.addAll(HiveTables.rows(connection, split.sql()));
        }
        Collections.sort(union);
        return union;
    }
}
