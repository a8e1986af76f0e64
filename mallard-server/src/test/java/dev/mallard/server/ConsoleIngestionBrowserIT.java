// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.server.config.ServerConfigReader;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The console's ingestion panel in a real browser against a server with an ingestion queue this test feeds over
 * {@code POST /v1/ingest}: the queue's rows, batches and watermark appear and move. Runs once ingestion (package
 * {@code dev.mallard.server.ingest}) is in the build; needs what {@link BrowserScript} needs.
 */
class ConsoleIngestionBrowserIT {
    private static final Schema SCHEMA = new Schema(List.of(Field.nullable("id", new ArrowType.Int(64, true)),
            Field.nullable("producer", ArrowType.Utf8.INSTANCE), Field.nullable("ts", new ArrowType.Timestamp(TimeUnit.MICROSECOND, null))));
    private final HttpClient http = HttpClient.newHttpClient();

    @TempDir
    Path root;

    @Test
    void theIngestionPanelShowsAQueuesRowsBatchesAndWatermarkAsBatchesArrive() throws Exception {
        try {
            Class.forName("dev.mallard.server.ingest.Ingestion");
        } catch (ClassNotFoundException e) {
            Assumptions.abort("ingestion (dev.mallard.server.ingest) is not in this build");
        }
        BrowserScript.requireTools();
        List<String> overrides = List.of("warehouse=" + root.resolve("wh"), "host=127.0.0.1", "http.port=0", "flight.port=0",
                "users.0.username=" + TestServers.USER, "users.0.password=" + TestServers.PASSWORD, "ingestion.queues.0.name=events",
                "ingestion.queues.0.path=lake/events", "ingestion.queues.0.watermark.timestamp_column=ts");
        try (MallardServer server = MallardServer.start(new ServerConfigReader(ConfigEnvironment.from(Map.of())).read(Optional.empty(), overrides))) {
            String token = HttpApiITSupport.login(server.httpPort());
            send(server, token, 0, 100);
            Thread feeder = Thread.ofVirtual().start(() -> {
                try {
                    // One batch at a time while the browser watches (each acknowledged before the next), then stop.
                    for (int batch = 1; batch <= 40 && !Thread.currentThread().isInterrupted(); batch++) {
                        send(server, token, batch * 100L, 100);
                        Thread.sleep(500);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            try {
                BrowserScript.run(Map.of("SCENARIO", "ingestion", "QUEUE", "events", "MALLARD_URL", "http://127.0.0.1:" + server.httpPort(),
                        "MALLARD_USER", TestServers.USER, "MALLARD_PASSWORD", TestServers.PASSWORD), "console-ingestion-e2e.log");
            } finally {
                feeder.interrupt();
                feeder.join();
            }
            assertThat(BrowserScript.SCREENSHOTS.resolve("21-ingestion-queue.png")).isNotEmptyFile();
        }
    }

    private void send(MallardServer server, String token, long first, int count) throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort()
                + "/v1/ingest?ingestion_queue=events")).header("Authorization", "Bearer " + token)
                .header("Content-Type", "application/vnd.apache.arrow.stream").POST(HttpRequest.BodyPublishers.ofByteArray(batch(first, count))).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    }

    /** Rows first .. first+count-1: an id, a producer and a timestamp of id seconds. */
    private static byte[] batch(long first, int count) throws Exception {
        try (BufferAllocator allocator = new RootAllocator(); VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator);
                ByteArrayOutputStream out = new ByteArrayOutputStream()) {
            root.allocateNew();
            BigIntVector id = (BigIntVector) root.getVector("id");
            VarCharVector producer = (VarCharVector) root.getVector("producer");
            TimeStampMicroVector ts = (TimeStampMicroVector) root.getVector("ts");
            for (int i = 0; i < count; i++) {
                id.setSafe(i, first + i);
                producer.setSafe(i, "console".getBytes(StandardCharsets.UTF_8));
                ts.setSafe(i, (first + i) * 1_000_000L);
            }
            root.setRowCount(count);
            try (ArrowStreamWriter writer = new ArrowStreamWriter(root, null, out)) {
                writer.start();
                writer.writeBatch();
                writer.end();
            }
            return out.toByteArray();
        }
    }
}
