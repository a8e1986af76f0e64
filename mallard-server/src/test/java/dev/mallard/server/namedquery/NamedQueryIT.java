// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.namedquery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.server.MallardServer;
import dev.mallard.server.config.ServerConfig;
import dev.mallard.server.config.ServerConfigReader;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * DazzleDuck's named queries on a server started from DazzleDuck's HOCON with {@code named_query_table}: its table
 * shape, routes, statuses and bodies, over real HTTP.
 */
class NamedQueryIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @TempDir
    static Path dir;

    static MallardServer server;
    static String token;

    /** A validator that refuses every call. */
    public static final class RejectAll implements ParameterValidator {
        @Override
        public void validate(Map<String, String> parameters) throws Rejected {
            throw new Rejected("Rejected by test validator");
        }
    }

    /** A second one, to see refusals collected. */
    public static final class RejectAnother implements ParameterValidator {
        @Override
        public void validate(Map<String, String> parameters) throws Rejected {
            throw new Rejected("Rejected by another validator");
        }
    }

    /** Accepts a limit below 100 only. */
    public static final class SmallLimit implements ParameterValidator {
        @Override
        public void validate(Map<String, String> parameters) throws Rejected {
            if (Long.parseLong(parameters.getOrDefault("limit", "0")) >= 100) {
                throw new Rejected("limit must be below 100");
            }
        }

        @Override
        public String description() {
            return "limit below 100";
        }
    }

    @BeforeAll
    static void start() throws Exception {
        String table = "CREATE TABLE named_queries (id BIGINT PRIMARY KEY, name VARCHAR UNIQUE, template VARCHAR, validators VARCHAR[], "
                + "description VARCHAR, parameter_descriptions MAP(VARCHAR, VARCHAR), preferred_display VARCHAR, query_group VARCHAR DEFAULT 'general');\n"
                + "INSERT INTO named_queries VALUES "
                + "(1, 'get_series', 'SELECT * FROM generate_series({{ limit }}) t(v) ORDER BY v', NULL, 'Returns the first N integers', MAP {'limit': 'upper bound'}, NULL, 'general'),"
                + "(2, 'filter_series', 'SELECT * FROM generate_series(10) t(v) WHERE v > {{ min }}', NULL, 'Filters integers above a threshold', MAP {'min': 'minimum'}, NULL, 'general'),"
                + "(3, 'validated_query', 'SELECT * FROM generate_series({{ limit }}) t(v)', ['" + RejectAll.class.getName() + "'], 'Always rejected', NULL, NULL, 'general'),"
                + "(4, 'multi_validator_query', 'SELECT * FROM generate_series({{ limit }}) t(v)', ['" + RejectAll.class.getName() + "', '"
                + RejectAnother.class.getName() + "'], 'Rejected twice', NULL, NULL, 'general'),"
                + "(5, 'invalid_sql', 'SELECT * FROM non_existent_table', NULL, 'Invalid SQL', NULL, NULL, 'general'),"
                + "(6, 'small_series', 'SELECT * FROM generate_series({{ limit }}) t(v)', ['" + SmallLimit.class.getName() + "'], 'A small series', NULL, 'table', 'marketing'),"
                + "(7, 'not_a_validator', 'SELECT 1', ['java.lang.String'], 'A validator that is not one', NULL, NULL, 'siem');";
        Path conf = dir.resolve("server.conf");
        Files.writeString(conf, """
                dazzleduck_server {
                  warehouse = "%s"
                  flight_sql { host = "127.0.0.1", port = 0 }
                  http { host = "127.0.0.1", port = 0 }
                  users = [{username = admin, password = "admin-password"}]
                  named_query_table = "named_queries"
                  startup_script_provider { content = "%s" }
                }
                """.formatted(dir.resolve("warehouse"), table.replace("\"", "\\\"").replace("\n", " ")));
        ServerConfig config = new ServerConfigReader(ConfigEnvironment.from(Map.of()), Map.of()).read(Optional.of(conf), List.of());
        server = MallardServer.start(config);
        token = login(server, "admin", "admin-password");
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    static String login(MallardServer server, String user, String password) throws Exception {
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/v1/login"))
                .POST(HttpRequest.BodyPublishers.ofString("{\"username\":\"" + user + "\",\"password\":\"" + password + "\"}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return JSON.readTree(response.body()).path("accessToken").asText();
    }

    private static HttpResponse<byte[]> post(String body, String accept) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/v1/named-query"))
                .header("Authorization", "Bearer " + token).header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
        if (accept != null) {
            request.header("Accept", accept);
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private static HttpResponse<String> get(String pathAndQuery) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + pathAndQuery))
                .header("Authorization", "Bearer " + token).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static List<Long> arrowValues(byte[] body) throws Exception {
        return arrowValues(body, org.apache.arrow.compression.CommonsCompressionFactory.INSTANCE);
    }

    private static List<Long> arrowValues(byte[] body, org.apache.arrow.vector.compression.CompressionCodec.Factory codecs) throws Exception {
        List<Long> values = new ArrayList<>();
        try (RootAllocator allocator = new RootAllocator(); ArrowStreamReader reader = new ArrowStreamReader(new ByteArrayInputStream(body), allocator, codecs)) {
            while (reader.loadNextBatch()) {
                var vector = reader.getVectorSchemaRoot().getVector(0);
                for (int i = 0; i < vector.getValueCount(); i++) {
                    values.add(((Number) vector.getObject(i)).longValue());
                }
            }
        }
        return values;
    }

    @Test
    void aNamedQueryRendersItsParametersAndAnswersArrowByDefault() throws Exception {
        HttpResponse<byte[]> response = post("{\"name\": \"get_series\", \"parameters\": {\"limit\": \"5\"}}", null);
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(type -> assertThat(type).startsWith("application/vnd.apache.arrow.stream"));
        assertThat(arrowValues(response.body())).containsExactly(0L, 1L, 2L, 3L, 4L, 5L);
        HttpResponse<byte[]> filtered = post("{\"name\": \"filter_series\", \"parameters\": {\"min\": \"7\"}}", "application/vnd.apache.arrow.stream");
        assertThat(arrowValues(filtered.body())).containsExactly(8L, 9L, 10L);
    }

    @Test
    void arrowBatchesAreZstdCompressedUnlessTheCallerAsksNone() throws Exception {
        String body = "{\"name\": \"get_series\", \"parameters\": {\"limit\": \"3\"}}";
        HttpRequest.Builder plain = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/v1/named-query"))
                .header("Authorization", "Bearer " + token).header("x-dd-arrow-compression", "none").POST(HttpRequest.BodyPublishers.ofString(body));
        byte[] uncompressed = HTTP.send(plain.build(), HttpResponse.BodyHandlers.ofByteArray()).body();
        assertThat(arrowValues(uncompressed, org.apache.arrow.vector.compression.NoCompressionCodec.Factory.INSTANCE))
                .as("x-dd-arrow-compression: none is read without a codec").containsExactly(0L, 1L, 2L, 3L);
        byte[] compressed = post(body, null).body();
        assertThat(arrowValues(compressed)).containsExactly(0L, 1L, 2L, 3L);
        assertThatThrownBy(() -> arrowValues(compressed, org.apache.arrow.vector.compression.NoCompressionCodec.Factory.INSTANCE))
                .as("the default answer's batches are compressed").isInstanceOf(Exception.class);
    }

    @Test
    void acceptTsvAnswersAHeaderRowThenOneLinePerRow() throws Exception {
        HttpResponse<byte[]> response = post("{\"name\": \"filter_series\", \"parameters\": {\"min\": \"7\"}}", "text/tab-separated-values");
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("text/tab-separated-values; charset=utf-8");
        assertThat(new String(response.body(), java.nio.charset.StandardCharsets.UTF_8)).isEqualTo("v\n8\n9\n10\n");
    }

    @Test
    void acceptJsonLinesAnswersOneObjectPerRow() throws Exception {
        HttpResponse<byte[]> response = post("{\"name\": \"get_series\", \"parameters\": {\"limit\": \"3\"}}", "application/jsonl");
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(type -> assertThat(type).startsWith("application/jsonl"));
        String[] lines = new String(response.body(), java.nio.charset.StandardCharsets.UTF_8).strip().split("\n");
        assertThat(lines).hasSize(4);
        assertThat(JSON.readTree(lines[0]).path("v").asInt()).isZero();
        assertThat(JSON.readTree(lines[3]).path("v").asInt()).isEqualTo(3);
        HttpResponse<byte[]> ndjson = post("{\"name\": \"get_series\", \"parameters\": {\"limit\": \"1\"}}", "application/x-ndjson");
        assertThat(new String(ndjson.body(), java.nio.charset.StandardCharsets.UTF_8).strip().split("\n")).hasSize(2);
    }

    @Test
    void anUnknownNameIs404AndABodyWithoutOneIs400() throws Exception {
        HttpResponse<byte[]> unknown = post("{\"name\": \"no_such_query\", \"parameters\": {}}", null);
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(new String(unknown.body())).isEqualTo("Named query not found: no_such_query");
        HttpResponse<byte[]> missing = post("{\"parameters\": {\"limit\": \"5\"}}", null);
        assertThat(missing.statusCode()).isEqualTo(400);
        assertThat(new String(missing.body())).isEqualTo("Missing required field: name");
        assertThat(post("{\"name\": \"  \"}", null).statusCode()).isEqualTo(400);
        HttpResponse<byte[]> garbage = post("not json", null);
        assertThat(garbage.statusCode()).isEqualTo(400);
        assertThat(new String(garbage.body())).isEqualTo("Invalid request body");
    }

    @Test
    void aTemplateWhoseSqlFailsIsAnError() throws Exception {
        HttpResponse<byte[]> response = post("{\"name\": \"invalid_sql\"}", null);
        assertThat(response.statusCode()).isGreaterThanOrEqualTo(400);
        assertThat(new String(response.body())).contains("user.sql.invalid").contains("non_existent_table");
    }

    @Test
    void validatorsRefuseWith400AndEveryRefusalIsCollected() throws Exception {
        HttpResponse<byte[]> one = post("{\"name\": \"validated_query\", \"parameters\": {\"limit\": \"5\"}}", null);
        assertThat(one.statusCode()).isEqualTo(400);
        assertThat(new String(one.body())).contains("Rejected by test validator");
        HttpResponse<byte[]> two = post("{\"name\": \"multi_validator_query\", \"parameters\": {\"limit\": \"5\"}}", null);
        assertThat(two.statusCode()).isEqualTo(400);
        assertThat(new String(two.body())).contains("Rejected by test validator").contains("Rejected by another validator");
        assertThat(post("{\"name\": \"small_series\", \"parameters\": {\"limit\": \"100\"}}", null).statusCode()).isEqualTo(400);
        assertThat(arrowValues(post("{\"name\": \"small_series\", \"parameters\": {\"limit\": \"2\"}}", null).body())).containsExactly(0L, 1L, 2L);
    }

    @Test
    void aValidatorClassThatIsNotAParameterValidatorIsRefusedNotInstantiated() throws Exception {
        HttpResponse<byte[]> response = post("{\"name\": \"not_a_validator\"}", null);
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(new String(response.body())).contains("Validator configuration error: java.lang.String").contains("not a " + ParameterValidator.class.getName());
    }

    @Test
    void theListPagesByIdAfterOffsetWithALimit() throws Exception {
        HttpResponse<String> all = get("/v1/named-query?offset=0&limit=10");
        assertThat(all.statusCode()).isEqualTo(200);
        List<Map<String, Object>> items = JSON.readValue(all.body(), new TypeReference<>() {});
        assertThat(items).hasSize(7);
        assertThat(items.get(0)).containsEntry("id", 1).containsEntry("name", "get_series").containsKeys("preferred_display", "query_group",
                "parameterDescriptions", "validatorDescriptions", "description").doesNotContainKey("template");
        List<Map<String, Object>> page = JSON.readValue(get("/v1/named-query?offset=2&limit=2").body(), new TypeReference<>() {});
        assertThat(page).extracting(item -> item.get("name")).containsExactly("validated_query", "multi_validator_query");
        assertThat(JSON.readTree(get("/v1/named-query?offset=100&limit=10").body()).size()).isZero();
        assertThat(JSON.readTree(get("/v1/named-query?limit=100000").body()).size()).as("limit is capped at 200").isEqualTo(7);
        assertThat(JSON.readTree(get("/v1/named-query").body()).size()).as("default limit 20").isEqualTo(7);
    }

    @Test
    void oneNamedQueryIsShownWithItsTemplateAndValidators() throws Exception {
        HttpResponse<String> response = get("/v1/named-query/get_series");
        assertThat(response.statusCode()).isEqualTo(200);
        JsonNode info = JSON.readTree(response.body());
        assertThat(info.path("id").asInt()).isEqualTo(1);
        assertThat(info.path("description").asText()).isEqualTo("Returns the first N integers");
        assertThat(info.path("template").asText()).contains("generate_series({{ limit }})");
        assertThat(info.path("parameterDescriptions").path("limit").asText()).isEqualTo("upper bound");
        assertThat(info.path("query_group").asText()).isEqualTo("general");
        JsonNode validated = JSON.readTree(get("/v1/named-query/validated_query").body());
        assertThat(validated.path("validatorDescriptions").get(0).asText()).isEqualTo(RejectAll.class.getName());
        assertThat(get("/v1/named-query/no_such_query").statusCode()).isEqualTo(404);
    }

    @Test
    void everyRouteNeedsAToken() throws Exception {
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/v1/named-query")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(401);
    }
}
