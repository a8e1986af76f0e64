// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.ingest;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mallard.server.auth.PasswordHash;
import dev.mallard.server.config.AccessMode;
import dev.mallard.server.config.ServerConfig;
import dev.mallard.server.config.UserAccount;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
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
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/** Servers with ingestion queues, Arrow batches to send them, and an HTTP client that sends them. */
final class IngestFixtures {
    static final String USER = "ada";
    static final String PASSWORD = "lovelace";
    static final ObjectMapper JSON = new ObjectMapper();
    static final Schema SCHEMA = new Schema(List.of(
            Field.nullable("id", new ArrowType.Int(64, true)),
            Field.nullable("producer", ArrowType.Utf8.INSTANCE),
            Field.nullable("ts", new ArrowType.Timestamp(TimeUnit.MICROSECOND, null))));
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    private IngestFixtures() {}

    static ServerConfig config(Path root, AccessMode mode, IngestionConfig ingestion, List<UserAccount> users) {
        return config(root, mode, ingestion, users, Optional.empty());
    }

    /** @param database the database file, empty for an in-memory database */
    static ServerConfig config(Path root, AccessMode mode, IngestionConfig ingestion, List<UserAccount> users, Optional<Path> database) {
        return new ServerConfig(root.resolve("warehouse"), database, "127.0.0.1", 0, ServerConfig.DEFAULT_HTTP_MAX_BODY_BYTES, 0,
                Optional.empty(), users, mode, Optional.of("ingest-test-secret-0123456789-0123456789-0123456789"),
                ServerConfig.DEFAULT_TOKEN_EXPIRY_MINUTES, ServerConfig.SessionLimits.DEFAULT, 1000, 0, Optional.empty()).withIngestion(ingestion);
    }

    static ServerConfig config(Path root, IngestionConfig ingestion) {
        return config(root, AccessMode.COMPLETE, ingestion, List.of(new UserAccount(USER, PasswordHash.of(PASSWORD))));
    }

    static IngestionConfig queues(IngestionConfig.Queue... queues) {
        return new IngestionConfig(List.of(queues), Optional.empty(), Optional.empty(), IngestionConfig.DEFAULT_MAX_PENDING_WRITE);
    }

    /** An Arrow IPC stream of rows {@code first .. first+count-1}: id, the producer's name, a timestamp of id seconds. */
    static byte[] batch(String producer, long first, int count) {
        try (BufferAllocator allocator = new RootAllocator(); VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator);
                ByteArrayOutputStream out = new ByteArrayOutputStream()) {
            fill(root, producer, first, count);
            try (ArrowStreamWriter writer = new ArrowStreamWriter(root, null, out)) {
                writer.start();
                writer.writeBatch();
                writer.end();
            }
            return out.toByteArray();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    static void fill(VectorSchemaRoot root, String producer, long first, int count) {
        BigIntVector id = (BigIntVector) root.getVector("id");
        VarCharVector name = (VarCharVector) root.getVector("producer");
        TimeStampMicroVector ts = (TimeStampMicroVector) root.getVector("ts");
        root.allocateNew();
        byte[] bytes = producer.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < count; i++) {
            id.setSafe(i, first + i);
            name.setSafe(i, bytes);
            ts.setSafe(i, (first + i) * 1_000_000L);
        }
        root.setRowCount(count);
    }

    static String login(int httpPort, String user, String password, Map<String, Object> claims) throws Exception {
        String body = JSON.writeValueAsString(Map.of("username", user, "password", password, "claims", claims));
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/v1/login"))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new AssertionError("login answered " + response.statusCode() + ": " + response.body());
        }
        return JSON.readTree(response.body()).path("accessToken").asText();
    }

    static String login(int httpPort) throws Exception {
        return login(httpPort, USER, PASSWORD, Map.of());
    }

    /** POSTs a body to /v1/ingest; {@code headers} are name, value pairs. */
    static HttpResponse<String> post(int httpPort, String query, Optional<String> token, String contentType, byte[] body, String... headers)
            throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/v1/ingest" + query))
                .timeout(Duration.ofMinutes(2)).POST(HttpRequest.BodyPublishers.ofByteArray(body)).header("Content-Type", contentType);
        token.ifPresent(value -> request.header("Authorization", "Bearer " + value));
        for (int i = 0; i + 1 < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    static HttpResponse<String> get(int httpPort, String path, String token) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + path)).header("Authorization", "Bearer " + token).GET()
                .build(), HttpResponse.BodyHandlers.ofString());
    }
}
