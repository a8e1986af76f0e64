// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * DazzleDuck's HTTP ingestion cases (its basic test class: a batch without a partition, one with a partition and a
 * sort order, an Arrow IPC file posted as is, 100 concurrent posts), written anew against a Mallard server started
 * from DazzleDuck's keys: {@code NOOPIngestionTaskFactoryProvider} with an {@code ingestion_path}, and
 * {@code ingestion.max_delay_ms}. The Arrow streams are the server's own answers to DazzleDuck's queries.
 */
class DazzleDuckHttpIngestionIT {
    static final String ARROW = "application/vnd.apache.arrow.stream";

    @TempDir
    static Path warehouse;

    static Path ingestion;
    static MallardServer server;
    static DazzleDuckHttpClient client;

    @BeforeAll
    static void start() throws Exception {
        ingestion = Files.createDirectories(warehouse.resolve("ingestion"));
        server = TestServers.dazzleDuckIngestionServer(warehouse, ingestion);
        client = new DazzleDuckHttpClient(server.httpPort());
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    /** The Arrow stream the server answers for {@code sql}: what DazzleDuck's tests build with DuckDB's Arrow reader. */
    private static byte[] arrowOf(String sql) throws Exception {
        HttpResponse<byte[]> response = client.bytes(client.get(sql).header("Accept", ARROW));
        assertThat(response.statusCode()).isEqualTo(200);
        return response.body();
    }

    private static HttpResponse<String> ingest(String queue, byte[] body, String... headers) throws Exception {
        HttpRequest.Builder request = client.authorized("/v1/ingest?ingestion_queue=" + URLEncoder.encode(queue, StandardCharsets.UTF_8))
                .header("Content-Type", ARROW).POST(HttpRequest.BodyPublishers.ofByteArray(body));
        for (int i = 0; i < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        return client.text(request);
    }

    private static List<String> rows(String sql) throws Exception {
        List<String> rows = new ArrayList<>();
        try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:"); Statement statement = duckdb.createStatement();
                ResultSet rs = statement.executeQuery(sql)) {
            int columns = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                StringBuilder row = new StringBuilder();
                for (int i = 1; i <= columns; i++) {
                    row.append(i == 1 ? "" : "|").append(rs.getString(i));
                }
                rows.add(row.toString());
            }
        }
        return rows;
    }

    @Test
    void aBatchWithoutAPartitionLandsItsElevenRowsAsParquetInTheQueuesDirectory() throws Exception {
        Files.createDirectories(ingestion.resolve("abc.parquet"));
        HttpResponse<String> response = ingest("abc.parquet", arrowOf("select * from generate_series(10)"), "x-dd-format", "parquet");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        assertThat(rows("select count(*) from read_parquet('" + ingestion + "/abc.parquet/*.parquet')")).containsExactly("11");
    }

    @Test
    void aBatchAskedInArrowFormatLandsItsElevenRowsAsArrowIpcFilesInTheQueuesDirectory() throws Exception {
        Files.createDirectories(ingestion.resolve("abc.arrow"));
        HttpResponse<String> response = ingest("abc.arrow", arrowOf("select * from generate_series(10)"), "x-dd-format", "arrow");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        List<Long> values = new ArrayList<>();
        try (java.nio.file.DirectoryStream<Path> files = Files.newDirectoryStream(ingestion.resolve("abc.arrow"), "*.arrow");
                org.apache.arrow.memory.RootAllocator allocator = new org.apache.arrow.memory.RootAllocator()) {
            for (Path file : files) {
                try (org.apache.arrow.vector.ipc.ArrowStreamReader reader = new org.apache.arrow.vector.ipc.ArrowStreamReader(Files.newInputStream(file),
                        allocator)) {
                    while (reader.loadNextBatch()) {
                        org.apache.arrow.vector.BigIntVector column = (org.apache.arrow.vector.BigIntVector) reader.getVectorSchemaRoot().getVector("generate_series");
                        for (int i = 0; i < column.getValueCount(); i++) {
                            values.add(column.get(i));
                        }
                    }
                }
            }
        }
        assertThat(values).containsExactlyInAnyOrder(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L);
    }

    @Test
    void aPartitionedBatchInArrowFormatKeepsItsHiveDirectories() throws Exception {
        Files.createDirectories(ingestion.resolve("arrow_parts"));
        HttpResponse<String> response = ingest("arrow_parts", arrowOf("select generate_series, generate_series % 2 AS a from generate_series(10)"),
                "x-dd-format", "ARROW", "x-dd-partition", "a", "x-dd-sort-order", URLEncoder.encode("generate_series desc", StandardCharsets.UTF_8));
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        List<Long> odd = new ArrayList<>();
        try (java.nio.file.DirectoryStream<Path> files = Files.newDirectoryStream(ingestion.resolve("arrow_parts/a=1"), "*.arrow");
                org.apache.arrow.memory.RootAllocator allocator = new org.apache.arrow.memory.RootAllocator()) {
            for (Path file : files) {
                try (org.apache.arrow.vector.ipc.ArrowStreamReader reader = new org.apache.arrow.vector.ipc.ArrowStreamReader(Files.newInputStream(file),
                        allocator)) {
                    while (reader.loadNextBatch()) {
                        org.apache.arrow.vector.BigIntVector column = (org.apache.arrow.vector.BigIntVector) reader.getVectorSchemaRoot().getVector("generate_series");
                        for (int i = 0; i < column.getValueCount(); i++) {
                            odd.add(column.get(i));
                        }
                    }
                }
            }
        }
        assertThat(odd).containsExactly(9L, 7L, 5L, 3L, 1L);
        assertThat(ingestion.resolve("arrow_parts/a=0")).isDirectory();
    }

    @Test
    void aPartitionAndASortOrderLayOutTheRowsByPartitionEachSortedDescending() throws Exception {
        Files.createDirectories(ingestion.resolve("table_single"));
        HttpResponse<String> response = ingest("table_single", arrowOf("select generate_series, generate_series a from generate_series(10)"),
                "x-dd-partition", URLEncoder.encode("a", StandardCharsets.UTF_8), "x-dd-sort-order", URLEncoder.encode("a desc", StandardCharsets.UTF_8));
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        List<String> expected = new ArrayList<>();
        for (int i = 10; i >= 0; i--) {
            expected.add(i + "|" + i);
        }
        assertThat(rows("select generate_series, a from read_parquet('" + ingestion + "/table_single/*/*.parquet') order by a desc"))
                .isEqualTo(expected);
        assertThat(ingestion.resolve("table_single/a=3")).isDirectory();
    }

    @Test
    void anArrowIpcFilePostedAsIsIsIngested() throws Exception {
        Path file = warehouse.resolve("file1.arrow");
        Files.write(file, arrowOf("select range AS id, 'row ' || range AS label from range(11)"));
        Files.createDirectories(ingestion.resolve("file1"));
        HttpRequest.Builder request = client.authorized("/v1/ingest?ingestion_queue=file1").header("Content-Type", ARROW)
                .POST(HttpRequest.BodyPublishers.ofFile(file));
        HttpResponse<String> response = client.text(request);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        assertThat(rows("select count(*) from read_parquet('" + ingestion + "/file1/*.parquet')")).containsExactly("11");
    }

    @Test
    void oneHundredConcurrentPostsAreEachAcknowledgedAndEachWrittenOnce() throws Exception {
        byte[] batch = arrowOf("select generate_series, generate_series a from generate_series(10)");
        Files.createDirectories(ingestion.resolve("table"));
        ExecutorService pool = Executors.newFixedThreadPool(100);
        try {
            List<CompletableFuture<Integer>> posts = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                posts.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        return ingest("table", batch, "x-dd-partition", "a", "x-dd-sort-order", URLEncoder.encode("a desc", StandardCharsets.UTF_8))
                                .statusCode();
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }, pool));
            }
            for (CompletableFuture<Integer> post : posts) {
                assertThat(post.get(120, TimeUnit.SECONDS)).isEqualTo(200);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(rows("select count(*), count(distinct a) from read_parquet('" + ingestion + "/table/*/*.parquet')")).containsExactly("1100|11");
    }
}
