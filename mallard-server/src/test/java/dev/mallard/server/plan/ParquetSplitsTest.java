// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

class ParquetSplitsTest {
    @TempDir
    Path root;

    private Connection connection;
    private Path table;

    @BeforeEach
    void writeTheExampleTable() throws Exception {
        connection = DriverManager.getConnection("jdbc:duckdb:");
        table = HiveTables.example(connection, root);
    }

    @AfterEach
    void close() throws Exception {
        connection.close();
    }

    @Test
    void dazzleDucksExampleTablePlansThreeSplitsOfOneFileEach() throws Exception {
        List<ParquetSplits.Planned> splits = ParquetSplits.plan(connection, HiveTables.exampleQuery(table), 1);
        assertEquals(3, splits.size());
        splits.forEach(split -> assertEquals(1, split.files().size()));
        assertUnionIsTheQuery(HiveTables.exampleQuery(table), splits);
    }

    @Test
    void aDatePredicateOnThePartitionPrunesToTwoSplits() throws Exception {
        String query = HiveTables.exampleQuery(table) + " WHERE dt = '2025-01-01'";
        List<ParquetSplits.Planned> splits = ParquetSplits.plan(connection, query, 1);
        assertEquals(2, splits.size());
        assertTrue(splits.stream().allMatch(split -> split.files().getFirst().contains("dt=2025-01-01")));
        assertUnionIsTheQuery(query, splits);
    }

    @Test
    void aPercentEncodedPartitionValueIsComparedDecoded() throws Exception {
        String query = HiveTables.exampleQuery(table) + " WHERE p = 'a b'";
        List<ParquetSplits.Planned> splits = ParquetSplits.plan(connection, query, 1);
        assertEquals(1, splits.size());
        assertUnionIsTheQuery(query, splits);
    }

    @Test
    void aSplitSizeLargerThanTheTableGivesOneSplitOfEveryFile() throws Exception {
        List<ParquetSplits.Planned> splits = ParquetSplits.plan(connection, HiveTables.exampleQuery(table), 1L << 30);
        assertEquals(1, splits.size());
        assertEquals(3, splits.getFirst().files().size());
    }

    @Test
    void aPredicateOnAnotherColumnPrunesNothing() throws Exception {
        String query = HiveTables.exampleQuery(table) + " WHERE key = 'k2' OR dt = '2025-01-01'";
        List<ParquetSplits.Planned> splits = ParquetSplits.plan(connection, query, 1);
        assertEquals(3, splits.size());
        assertUnionIsTheQuery(query, splits);
    }

    @Test
    void anAggregateIsOneSplitOfTheWholeQuery() throws Exception {
        String query = "SELECT count(*) " + HiveTables.exampleQuery(table) + " GROUP BY key";
        List<ParquetSplits.Planned> splits = ParquetSplits.plan(connection, query, 1);
        assertEquals(List.of(new ParquetSplits.Planned(query, -1, List.of())), splits);
    }

    @Test
    void aLimitIsOneSplitOfTheWholeQuery() throws Exception {
        String query = "SELECT * FROM read_parquet('" + table + "/*/*/*.parquet') WHERE dt > '2024-06-01' LIMIT 1";
        assertEquals(1, ParquetSplits.plan(connection, query, 1).size());
        assertEquals(-1, ParquetSplits.plan(connection, query, 1).getFirst().size());
    }

    @Test
    void distinctWindowsJoinsAndSubqueriesAreOneSplitEach() throws Exception {
        String files = "read_parquet('" + table + "/*/*/*.parquet')";
        for (String query : List.of("SELECT DISTINCT key FROM " + files, "SELECT key, row_number() OVER () FROM " + files,
                "SELECT * FROM " + files + " a JOIN " + files + " b USING (key)", "SELECT * FROM " + files + " WHERE key IN (SELECT 'k1')",
                "WITH f AS (SELECT * FROM " + files + ") SELECT * FROM f", "SELECT * FROM " + files + " UNION ALL SELECT 'x', 'y', DATE '2024-01-01', 'z'",
                "SELECT * FROM " + files + " USING SAMPLE 1", "SELECT * FROM " + files + " ORDER BY count(*) OVER ()")) {
            assertEquals(List.of(new ParquetSplits.Planned(query, -1, List.of())), ParquetSplits.plan(connection, query, 1), query);
        }
        assertEquals(3, ParquetSplits.plan(connection, "SELECT key FROM " + files + " ORDER BY key", 1).size());
    }

    @Test
    void aPlainReadParquetPrunesWithAutodetectedPartitionTypes() throws Exception {
        String query = "SELECT key, upper(p) AS p FROM read_parquet('" + table + "/*/*/*.parquet') WHERE dt >= DATE '2025-01-01' AND key <> 'none'";
        List<ParquetSplits.Planned> splits = ParquetSplits.plan(connection, query, 1);
        assertEquals(2, splits.size());
        assertUnionIsTheQuery(query, splits);
    }

    private void assertUnionIsTheQuery(String query, List<ParquetSplits.Planned> splits) throws Exception {
        List<String> union = new ArrayList<>();
        for (ParquetSplits.Planned split : splits) {
            union.addAll(HiveTables.rows(connection, split.sql()));
        }
        Collections.sort(union);
        assertEquals(HiveTables.rows(connection, query), union);
    }
}
