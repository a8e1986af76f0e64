// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink.iceberg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.flow.sink.ResultTable;
import dev.mallard.flow.source.Source.Partition;
import dev.mallard.flow.state.PipelineIdentity;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.data.Record;
import org.duckdb.DuckDBConnection;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The sink against a SQLite catalog in a temporary directory, read back with Iceberg's generic reader. */
class IcebergSinkTest {
    private static final PipelineIdentity PIPELINE = new PipelineIdentity("cities", List.of("events"), "g1");

    @TempDir
    Path dir;

    private DuckDBConnection duckdb;
    private final org.apache.arrow.memory.BufferAllocator allocator = new org.apache.arrow.memory.RootAllocator();

    @BeforeEach
    void openDuckDb() throws Exception {
        duckdb = (DuckDBConnection) DriverManager.getConnection("jdbc:duckdb:");
    }

    @AfterEach
    void closeDuckDb() throws Exception {
        duckdb.close();
        allocator.close();
    }

    private IcebergSettings settings(String table) throws Exception {
        return IcebergSettings.of(new ObjectMapper().readTree("""
                {"catalog_name": "test", "table_name": "%s",
                 "catalog": {"uri": "sqlite:///%s", "warehouse": "file://%s"}}
                """.formatted(table, dir.resolve("catalog.db"), dir.resolve("warehouse"))), Map.of());
    }

    private ResultTable batch(String sql) throws Exception {
        try (Statement statement = duckdb.createStatement()) {
            statement.execute("CREATE OR REPLACE TEMP TABLE result AS " + sql);
            var rows = statement.executeQuery("SELECT count(*) FROM result");
            rows.next();
            return new ResultTable(duckdb, "result", rows.getLong(1));
        }
    }

    private IcebergTables reader() {
        return IcebergTables.open("test", "jdbc:sqlite:" + dir.resolve("catalog.db"), dir.resolve("warehouse"));
    }

    @Test
    void aMissingTableIsCreatedFromTheBatchAndEachFlushIsOneSnapshot() throws Exception {
        try (IcebergSink sink = new IcebergSink(settings("default.city_events"), allocator)) {
            sink.write(batch("SELECT TIMESTAMP '2015-12-12 19:11:01.249' AS timestamp, 'New York' AS city, 3::BIGINT AS n, 1.5::DECIMAL(9,2) AS price"));
            sink.flush();
            sink.write(batch("SELECT TIMESTAMP '2015-12-12 19:11:02' AS timestamp, 'Baltimore' AS city, NULL::BIGINT AS n, 2::DECIMAL(9,2) AS price"));
            sink.flush();
        }
        try (IcebergTables tables = reader()) {
            List<Record> records = tables.records("default.city_events");
            assertThat(records).extracting(r -> r.getField("city") + "|" + r.getField("timestamp") + "|" + r.getField("n") + "|" + r.getField("price"))
                    .containsExactlyInAnyOrder("New York|2015-12-12T19:11:01.249|3|1.50", "Baltimore|2015-12-12T19:11:02|null|2.00");
            List<Snapshot> snapshots = new java.util.ArrayList<>();
            tables.table("default.city_events").snapshots().forEach(snapshots::add);
            assertThat(snapshots).hasSize(2).allMatch(snapshot -> snapshot.operation().equals("append"));
        }
    }

    @Test
    void theBatchPositionsAreCommittedInTheSnapshotAndAFlushTheTableAlreadyHoldsIsNotAppendedAgain() throws Exception {
        Map<Partition, Long> positions = Map.of(new Partition("events", 0), 10L, new Partition("events", 1), 7L);
        try (IcebergSink sink = new IcebergSink(settings("default.city_events"), allocator)) {
            sink.positions(PIPELINE, positions);
            sink.write(batch("SELECT 'New York' AS city"));
            sink.flush();
        }
        try (IcebergSink restarted = new IcebergSink(settings("default.city_events"), allocator)) {
            assertThat(restarted.committedPositions(PIPELINE)).isEqualTo(positions);
            assertThat(restarted.committedPositions(new PipelineIdentity("other", List.of("events"), "g1"))).isEmpty();
            restarted.positions(PIPELINE, positions);
            restarted.write(batch("SELECT 'New York' AS city"));
            restarted.flush();
            restarted.positions(PIPELINE, Map.of(new Partition("events", 1), 9L));
            restarted.write(batch("SELECT 'Denver' AS city"));
            restarted.flush();
            assertThat(restarted.committedPositions(PIPELINE)).isEqualTo(Map.of(new Partition("events", 0), 10L, new Partition("events", 1), 9L));
        }
        try (IcebergTables tables = reader()) {
            assertThat(tables.records("default.city_events")).extracting(r -> r.getField("city")).containsExactlyInAnyOrder("New York", "Denver");
        }
    }

    @Test
    void aResultColumnTheExistingTableLacksIsACodedErrorNamingIt() throws Exception {
        try (IcebergSink sink = new IcebergSink(settings("default.cities"), allocator)) {
            sink.write(batch("SELECT 'New York' AS city"));
            sink.flush();
            sink.write(batch("SELECT 'New York' AS city, 1 AS population"));
            assertThatThrownBy(sink::flush).isInstanceOf(MallardException.class)
                    .satisfies(e -> assertThat(((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_ICEBERG_SCHEMA_MISMATCH))
                    .hasMessageContaining("population");
        }
    }

    @Test
    void aColumnTypeWithoutAnIcebergCounterpartIsACodedErrorNamingTheColumn() throws Exception {
        try (IcebergSink sink = new IcebergSink(settings("default.shapes"), allocator)) {
            sink.write(batch("SELECT {'x': 1} AS point"));
            assertThatThrownBy(sink::flush).isInstanceOf(MallardException.class)
                    .satisfies(e -> assertThat(((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_ICEBERG_SCHEMA_MISMATCH))
                    .hasMessageContaining("point");
        }
    }
}
