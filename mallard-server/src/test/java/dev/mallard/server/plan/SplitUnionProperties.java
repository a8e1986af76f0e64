// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** For any Hive layout, predicate and split size, the splits' rows together are exactly the query's rows. */
class SplitUnionProperties {
    /** One table: rows of (n, key, dt, region), partitioned by {@code partitionBy}. */
    record Layout(List<String> rows, List<String> partitionBy) {}

    @Property(tries = 25)
    void theUnionOfTheSplitsIsTheQuery(@ForAll("layouts") Layout layout, @ForAll("predicates") String predicate,
            @ForAll("sizes") long splitSize, @ForAll boolean declaredTypes) throws Exception {
        Path root = Files.createTempDirectory("splits");
        try (Connection connection = DriverManager.getConnection("jdbc:duckdb:"); Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE source(n INTEGER, key VARCHAR, dt DATE, region VARCHAR)");
            statement.execute("INSERT INTO source VALUES " + String.join(", ", layout.rows()));
            statement.execute("COPY source TO '" + root + "/t' (FORMAT parquet, PARTITION_BY (" + String.join(", ", layout.partitionBy()) + "))");
            String types = declaredTypes ? ", hive_types = {" + String.join(", ", layout.partitionBy().stream()
                    .map(column -> "'" + column + "': " + (column.equals("dt") ? "DATE" : column.equals("n") ? "INTEGER" : "VARCHAR")).toList()) + "}" : "";
            String query = "SELECT n, key, dt, region FROM read_parquet('" + root + "/t/**/*.parquet', hive_partitioning = true" + types + ") WHERE "
                    + predicate;
            List<ParquetSplits.Planned> splits = ParquetSplits.plan(connection, query, splitSize);
            List<String> union = new ArrayList<>();
            for (ParquetSplits.Planned split : splits) {
                union.addAll(HiveTables.rows(connection, split.sql()));
            }
            Collections.sort(union);
            assertEquals(HiveTables.rows(connection, query), union, () -> "splits " + splits);
        } finally {
            try (var files = Files.walk(root)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            }
        }
    }

    @Provide
    Arbitrary<Layout> layouts() {
        Arbitrary<String> row = Combinators.combine(Arbitraries.integers().between(0, 4), Arbitraries.of("k1", "k2", "k3"),
                Arbitraries.of("2024-01-01", "2024-06-30", "2025-01-01"), Arbitraries.of("eu", "us", "a b", "x'y"))
                .as((n, key, dt, region) -> "(" + n + ", '" + key + "', DATE '" + dt + "', '" + region.replace("'", "''") + "')");
        Arbitrary<List<String>> partitionBy = Arbitraries.of(List.of("dt"), List.of("region"), List.of("dt", "region"), List.of("n", "dt"),
                List.of("region", "n"));
        return Combinators.combine(row.list().ofMinSize(1).ofMaxSize(12), partitionBy).as(Layout::new);
    }

    @Provide
    Arbitrary<String> predicates() {
        return Arbitraries.of("true", "dt = '2025-01-01'", "dt >= DATE '2024-06-30'", "dt < '2024-06-30' OR key = 'k1'", "region = 'a b'",
                "region IN ('eu', 'x''y')", "region <> 'us' AND n > 1", "n BETWEEN 1 AND 3", "n + 1 = 3", "NOT (n = 2)", "region IS NULL",
                "year(dt) = 2024 AND region LIKE 'e%'", "upper(region) = 'US'", "key = 'k2'", "dt = '2025-01-01' AND region = 'eu' AND n = 4",
                "coalesce(region, 'zz') = 'zz'", "n::VARCHAR = '3'", "CASE WHEN n > 2 THEN region ELSE 'none' END = 'eu'");
    }

    @Provide
    Arbitrary<Long> sizes() {
        return Arbitraries.longs().between(1, 3000);
    }
}
