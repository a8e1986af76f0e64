// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.server.config.ServerConfig;
import dev.mallard.server.config.ServerConfigReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The {@code ingestion:} block of a YAML configuration, DazzleDuck's ingestion keys, and what a queue's path may be. */
class IngestionConfigTest {
    private final ServerConfigReader reader = new ServerConfigReader(ConfigEnvironment.from(Map.of()), Map.of());

    @TempDir
    Path dir;

    @Test
    void aYamlIngestionBlockDeclaresQueuesWithTheirLayoutAndLimits() throws Exception {
        Path file = dir.resolve("server.yml");
        Files.writeString(file, """
                users: [{username: ada, password: pw}]
                ingestion:
                  max_pending_write: 1048576
                  temp_write_location: spool
                  queues:
                    - name: logs
                      path: lake/logs
                      transformation: SELECT *, upper(level) AS level_upper FROM __this
                      partition: [day]
                      sort_order: ts
                      format: parquet
                      target_file_size: 4096
                      flush_interval_ms: 250
                      variables: {region: eu}
                      watermark: {timestamp_column: ts, group_columns: [host]}
                """);

        IngestionConfig ingestion = reader.read(Optional.of(file), List.of()).ingestion();

        assertThat(ingestion.maxPendingWrite()).isEqualTo(1_048_576);
        assertThat(ingestion.tempWriteLocation()).contains("spool");
        IngestionConfig.Queue logs = ingestion.queues().getFirst();
        assertThat(logs.name()).isEqualTo("logs");
        assertThat(logs.path()).isEqualTo("lake/logs");
        assertThat(logs.transformation()).contains("SELECT *, upper(level) AS level_upper FROM __this");
        assertThat(logs.partition()).containsExactly("day");
        assertThat(logs.sortOrder()).containsExactly("ts");
        assertThat(logs.targetFileSize()).isEqualTo(4096);
        assertThat(logs.flushInterval()).isEqualTo(Duration.ofMillis(250));
        assertThat(logs.variables()).containsEntry("region", "eu");
        assertThat(logs.watermark()).contains(new IngestionConfig.Watermark("logs_watermarks", "ts", List.of("host")));
        assertThat(ingestion.queue("other")).isEmpty();
    }

    @Test
    void theExampleInTheIngestionDocsReads() throws Exception {
        String doc = Files.readString(Path.of("..", "docs", "ingestion.md"));
        int start = doc.indexOf("```yaml\n") + "```yaml\n".length();
        Path file = dir.resolve("server.yml");
        Files.writeString(file, doc.substring(start, doc.indexOf("```", start)));

        IngestionConfig.Queue logs = reader.read(Optional.of(file), List.of()).ingestion().queues().getFirst();

        assertThat(logs.name()).isEqualTo("logs");
        assertThat(logs.table()).contains("logs_rows");
        assertThat(logs.watermark().map(IngestionConfig.Watermark::table)).contains("logs_watermarks");
    }

    @Test
    void theOtlpExampleInTheIngestionDocsReads() throws Exception {
        String doc = Files.readString(Path.of("..", "docs", "ingestion.md"));
        int start = doc.indexOf("```yaml\n", doc.indexOf("## OTLP")) + "```yaml\n".length();
        Path file = dir.resolve("otlp.yml");
        Files.writeString(file, doc.substring(start, doc.indexOf("```", start)));

        IngestionConfig ingestion = reader.read(Optional.of(file), List.of()).ingestion();

        assertThat(ingestion.otlp()).contains(new IngestionConfig.Otlp(4317, Optional.of("otel_logs"), Optional.of("otel_spans"),
                Optional.of("otel_metrics"), 16 << 20));
        assertThat(ingestion.queues()).extracting(IngestionConfig.Queue::name).containsExactly("otel_logs", "otel_spans", "otel_metrics");
    }

    @Test
    void dazzleDucksIngestionKeysMapOntoQueues() {
        ServerConfig config = reader.read(Optional.empty(), List.of("dazzleduck_server.users=[{username=ada,password=pw}]",
                "dazzleduck_server.warehouse=" + dir.resolve("wh"),
                "dazzleduck_server.temp_write_location=" + dir.resolve("wh/tmp-writes"),
                "dazzleduck_server.ingestion.max_pending_write=1024",
                "dazzleduck_server.ingestion.max_delay_ms=100",
                "dazzleduck_server.ingestion.min_bucket_size=1048576",
                "dazzleduck_server.ingestion_task_factory_provider.class=io.dazzleduck.sql.commons.ingestion.DuckLakeIngestionTaskFactoryProvider",
                "dazzleduck_server.ingestion_task_factory_provider.ingestion_path=" + dir.resolve("wh/ingestion"),
                "dazzleduck_server.ingestion_task_factory_provider.ingestion_queue_table_mapping=[{ingestion_queue=log, catalog=loglake, schema=main,"
                        + " table=log, transformation=\"SELECT * FROM __this\", additional_parameters={watermark_table=log_marks,"
                        + " watermark_timestamp_column=ts, watermark_group_columns=\"host,app\"}}]"));

        IngestionConfig ingestion = config.ingestion();
        assertThat(ingestion.maxPendingWrite()).isEqualTo(1024);
        assertThat(ingestion.tempWriteLocation()).contains("tmp-writes");
        assertThat(ingestion.anyQueuePath()).contains("ingestion");
        IngestionConfig.Queue log = ingestion.queues().getFirst();
        assertThat(log.path()).isEqualTo("loglake/main/log");
        assertThat(log.flushInterval()).isEqualTo(Duration.ofMillis(100));
        assertThat(log.watermark()).contains(new IngestionConfig.Watermark("log_marks", "ts", List.of("host", "app")));
        assertThat(ingestion.queue("anything").map(IngestionConfig.Queue::path)).contains("ingestion/anything");
    }

    @Test
    void aDazzleDuckIngestionPathOutsideTheWarehouseIsRefused() {
        assertThatThrownBy(() -> reader.read(Optional.empty(), List.of("dazzleduck_server.users=[{username=ada,password=pw}]",
                "dazzleduck_server.warehouse=" + dir.resolve("wh"),
                "dazzleduck_server.ingestion_task_factory_provider.ingestion_path=/etc")))
                .isInstanceOfSatisfying(MallardException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_INGEST_PATH_INVALID));
    }

    @Test
    void aQueuePathThatLeavesTheWarehouseIsRefused() throws Exception {
        Path warehouse = Files.createDirectories(dir.resolve("warehouse"));
        Path outside = Files.createDirectories(dir.resolve("outside"));
        Files.createSymbolicLink(warehouse.resolve("escape"), outside);
        for (String path : List.of("../outside", "/tmp/x", "lake/../../outside", "escape/logs")) {
            assertThatThrownBy(() -> WarehousePaths.resolve(warehouse, "q", path)).as(path)
                    .isInstanceOfSatisfying(MallardException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_INGEST_PATH_INVALID));
        }
        assertThat(WarehousePaths.resolve(warehouse, "q", "lake/logs")).isEqualTo(warehouse.resolve("lake/logs"));
    }

    @Test
    void aTransformationIsOneReadOfThisCheckedOnTheParseTree() throws Exception {
        try (var connection = java.sql.DriverManager.getConnection("jdbc:duckdb:")) {
            Ingestion.checkTransformation(connection, "q", "SELECT a, b FROM __this WHERE a > 1");
            for (String bad : List.of("SELECT 1", "DELETE FROM t", "SELECT * FROM __this; DROP TABLE t", "COPY t TO 'x.csv'",
                    "WITH w AS (DELETE FROM t RETURNING *) SELECT * FROM __this")) {
                assertThatThrownBy(() -> Ingestion.checkTransformation(connection, "q", bad)).as(bad)
                        .isInstanceOfSatisfying(MallardException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_CONFIG_INVALID));
            }
        }
    }
}
