// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.config;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.core.config.ConfigInvalidException;
import dev.mallard.core.config.ConfigLoader;
import dev.mallard.core.config.ConfigProblem;
import dev.mallard.core.config.ConfigSchema;
import dev.mallard.core.config.LocatedYaml;
import dev.mallard.core.engine.StorageCompatibility;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.server.auth.PasswordHash;
import dev.mallard.server.tls.TlsFiles;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Reads a server configuration: the optional YAML file (a Jinja template, checked against
 * {@code server.schema.json}), then the {@code --conf key=value} overrides, each a dotted path where a number
 * indexes a list ({@code users.0.username=ada}). The merged document is checked against the schema again.
 */
public final class ServerConfigReader {
    private static final String STORAGE_COMPATIBILITY = "storage_compatibility";
    private static final YAMLMapper YAML = new YAMLMapper();
    private static final String OVERRIDES = "--conf";

    private final ConfigLoader loader;
    private final ConfigSchema schema;
    private final java.util.Map<String, String> processEnvironment;

    /** A reader whose DazzleDuck configurations resolve {@code ${NAME}} from this process's environment. */
    public ServerConfigReader(ConfigEnvironment environment) {
        this(environment, System.getenv());
    }

    /** @param processEnvironment the variables DazzleDuck's {@code ${NAME}} reads (any name, as DazzleDuck's do) */
    public ServerConfigReader(ConfigEnvironment environment, java.util.Map<String, String> processEnvironment) {
        this.processEnvironment = java.util.Map.copyOf(requireNonNull(processEnvironment, "processEnvironment is null"));
        this.schema = schema();
        this.loader = new ConfigLoader(schema, requireNonNull(environment, "environment is null"));
    }

    public static ConfigSchema schema() {
        return ConfigSchema.fromResource(ServerConfigReader.class, "server.schema.json");
    }

    public ServerConfig read(Optional<Path> file, List<String> overrides) {
        requireNonNull(file, "file is null");
        requireNonNull(overrides, "overrides is null");
        if (DazzleDuckConfig.isDazzleDuck(file, overrides)) {
            // DazzleDuck's HOCON, read into Mallard's tree and checked against the same schema.
            DazzleDuckConfig.Read read = new DazzleDuckConfig(processEnvironment).read(file, overrides);
            validate(read.root());
            return bind(read.root(), file.map(path -> path.toAbsolutePath().getParent()).orElse(Path.of(""))).withStartupSql(read.startupSql());
        }
        ObjectNode root = JsonNodeFactory.instance.objectNode();
        Path base = Path.of("");
        if (file.isPresent()) {
            JsonNode loaded = loader.load(file.get()).orThrow().root();
            if (loaded instanceof ObjectNode object) {
                root = object.deepCopy();
            }
            base = file.get().toAbsolutePath().getParent();
        }
        if (!overrides.isEmpty() || file.isEmpty()) {
            for (String override : overrides) {
                apply(root, override);
            }
            validate(root);
        }
        return bind(root, base);
    }

    private void validate(ObjectNode root) {
        String text;
        try {
            text = YAML.writeValueAsString(root);
        } catch (JsonProcessingException e) {
            throw new MallardException(ErrorCode.SYSTEM_INTERNAL, "cannot render the merged configuration: " + e.getMessage(), e);
        }
        List<ConfigProblem> problems = new ArrayList<>();
        LocatedYaml yaml = LocatedYaml.parse(OVERRIDES, text, problems);
        problems.addAll(schema.validate(OVERRIDES, yaml));
        if (!problems.isEmpty()) {
            throw new ConfigInvalidException(problems);
        }
    }

    /** Sets one {@code key=value}; the value is read as a YAML scalar, so numbers stay numbers. */
    static void apply(ObjectNode root, String override) {
        int equals = override.indexOf('=');
        if (equals <= 0) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID,
                    "--conf takes key=value (such as http.port=8081), not '" + override + "'");
        }
        String[] path = override.substring(0, equals).trim().split("\\.");
        JsonNode value = scalar(override.substring(equals + 1));
        JsonNode node = root;
        for (int i = 0; i < path.length; i++) {
            boolean last = i == path.length - 1;
            String segment = path[i];
            boolean nextIsIndex = !last && path[i + 1].matches("\\d+");
            if (node instanceof ObjectNode object) {
                if (last) {
                    object.set(segment, value);
                } else {
                    JsonNode child = object.get(segment);
                    if (child == null || !(child.isObject() || child.isArray())) {
                        child = nextIsIndex ? object.putArray(segment) : object.putObject(segment);
                    }
                    node = child;
                }
            } else if (node instanceof ArrayNode array && segment.matches("\\d+")) {
                int index = Integer.parseInt(segment);
                while (array.size() <= index) {
                    array.addNull();
                }
                if (last) {
                    array.set(index, value);
                } else {
                    JsonNode child = array.get(index);
                    if (child == null || !(child.isObject() || child.isArray())) {
                        child = nextIsIndex ? JsonNodeFactory.instance.arrayNode() : JsonNodeFactory.instance.objectNode();
                        array.set(index, child);
                    }
                    node = child;
                }
            } else {
                throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "--conf " + override.substring(0, equals)
                        + ": '" + segment + "' cannot index a " + node.getNodeType().name().toLowerCase(java.util.Locale.ROOT));
            }
        }
    }

    private static JsonNode scalar(String text) {
        try {
            JsonNode parsed = YAML.readTree(text);
            if (parsed != null && parsed.isValueNode() && !parsed.isNull()) {
                return parsed;
            }
        } catch (JsonProcessingException e) {
            // Not a YAML scalar (a stray colon, say): keep the text as it is.
        }
        return JsonNodeFactory.instance.textNode(text);
    }

    private static ServerConfig bind(JsonNode root, Path base) {
        Path warehouse = base.resolve(text(root, "warehouse").orElse(ServerConfig.DEFAULT_WAREHOUSE)).normalize();
        Optional<Path> database = text(root, "database").filter(name -> !name.equals(":memory:")).map(warehouse::resolve);
        AccessMode mode = AccessMode.valueOf(text(root, "access_mode").orElse(AccessMode.COMPLETE.name()));
        List<UserAccount> users = new ArrayList<>();
        for (JsonNode user : root.path("users")) {
            if (user == null || !user.isObject()) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "every entry of users needs a username and a password");
            }
            List<String> groups = new ArrayList<>();
            user.path("groups").forEach(group -> groups.add(group.asText()));
            List<String> loginPaths = new ArrayList<>();
            user.path("login_paths").forEach(prefix -> loginPaths.add(prefix.asText()));
            users.add(new UserAccount(user.path("username").asText(), PasswordHash.of(user.path("password").asText()),
                    YAML.convertValue(user.path("claims").isObject() ? user.path("claims") : JsonNodeFactory.instance.objectNode(), java.util.Map.class),
                    YAML.convertValue(user.path("login_claims").isArray() ? user.path("login_claims") : JsonNodeFactory.instance.arrayNode(), List.class),
                    groups, loginPaths));
        }
        if (users.isEmpty() && text(root, "login_url").isEmpty()) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID,
                    "no users: give at least one under users (or --conf users.0.username=... --conf users.0.password=...), or a login_url");
        }
        long distinct = users.stream().map(UserAccount::username).distinct().count();
        if (distinct != users.size()) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "users lists a username twice");
        }
        return withNamedData(root, new ServerConfig(
                warehouse,
                database,
                text(root, "host").orElse(ServerConfig.DEFAULT_HOST),
                root.path("http").path("port").asInt(ServerConfig.DEFAULT_HTTP_PORT),
                root.path("http").path("max_body_bytes").asLong(ServerConfig.DEFAULT_HTTP_MAX_BODY_BYTES),
                root.path("flight").path("port").asInt(ServerConfig.DEFAULT_FLIGHT_PORT),
                root.path("tls").isObject()
                        ? Optional.of(new TlsFiles(base.resolve(root.path("tls").path("cert_file").asText()),
                                base.resolve(root.path("tls").path("key_file").asText())))
                        : Optional.empty(),
                users,
                mode,
                text(root, "secret_key"),
                root.path("token_expiry_minutes").asInt(ServerConfig.DEFAULT_TOKEN_EXPIRY_MINUTES),
                new ServerConfig.SessionLimits(
                        root.path("session_idle_minutes").asInt(ServerConfig.SessionLimits.DEFAULT.idleMinutes()),
                        root.path("max_sessions").asInt(ServerConfig.SessionLimits.DEFAULT.maxSessions()),
                        root.path("max_sessions_per_user").asInt(ServerConfig.SessionLimits.DEFAULT.maxSessionsPerUser()),
                        root.path("max_prepared_statements_per_session").asInt(ServerConfig.SessionLimits.DEFAULT.maxPreparedStatements())),
                root.path("fetch_size").asInt(ServerConfig.DEFAULT_FETCH_SIZE),
                root.path("query_timeout_seconds").asInt(0),
                text(root, "startup_script").map(base::resolve),
                root.path("stream_results").asBoolean(ServerConfig.DEFAULT_STREAM_RESULTS),
                text(root, dev.mallard.server.sql.FileAccess.KEY).map(dev.mallard.server.sql.FileAccess::parse)
                        .orElse(dev.mallard.server.sql.FileAccess.DEFAULT),
                new ServerConfig.LoginLimits(root.path("login_max_failures").asInt(ServerConfig.LoginLimits.DEFAULT.maxFailures()),
                        root.path("login_failure_window_seconds").asInt(ServerConfig.LoginLimits.DEFAULT.windowSeconds())),
                text(root.path("jwt_token"), "algorithm").map(dev.mallard.server.auth.TokenAlgorithm::parse)
                        .orElse(dev.mallard.server.auth.TokenAlgorithm.DEFAULT),
                strings(root.path("http").path("allow_origin")),
                Optional.empty()).withHosted(dev.mallard.server.hosted.HostedConfigReader.read(root, base))
                .withPlan(dev.mallard.server.plan.PlanConfig.read(root))
                .withIngestion(dev.mallard.server.ingest.IngestionConfig.read(root.path("ingestion")))
                .withHttpConnections(httpConnections(root.path("http")))
                .withStorageCompatibility(text(root, STORAGE_COMPATIBILITY)
                        .map(version -> StorageCompatibility.of(version, STORAGE_COMPATIBILITY)).orElse(StorageCompatibility.DEFAULT)));
    }

    /** {@code http.header_timeout_seconds}, {@code http.idle_timeout_seconds}, {@code http.max_connections}, {@code http.max_concurrent_requests}. */
    private static dev.mallard.core.http.HttpEndpoints.ConnectionLimits httpConnections(JsonNode http) {
        dev.mallard.core.http.HttpEndpoints.ConnectionLimits defaults = dev.mallard.core.http.HttpEndpoints.ConnectionLimits.DEFAULT;
        return new dev.mallard.core.http.HttpEndpoints.ConnectionLimits(defaults.readTimeout(),
                java.time.Duration.ofSeconds(positive(http, "idle_timeout_seconds", defaults.idleTimeout().toSeconds())),
                java.time.Duration.ofSeconds(positive(http, "header_timeout_seconds", defaults.headerTimeout().toSeconds())),
                Math.toIntExact(positive(http, "max_connections", defaults.maxConnections())),
                Math.toIntExact(positive(http, "max_concurrent_requests", defaults.maxConcurrentRequests())));
    }

    /** A key the schema checks (a whole number above 0), or the default when absent. */
    private static long positive(JsonNode block, String key, long fallback) {
        return block.path(key).asLong(fallback);
    }

    private static ServerConfig withNamedData(JsonNode root, ServerConfig config) {
        return config.withNamedData(dev.mallard.server.datasets.NamedDataConfig.read(root));
    }

    /** A list of strings; one string (as {@code --conf http.allow_origin=*} gives) is a list of one. */
    private static List<String> strings(JsonNode node) {
        if (node.isTextual()) {
            return List.of(node.asText());
        }
        List<String> values = new ArrayList<>();
        node.forEach(value -> values.add(value.asText()));
        return values;
    }

    private static Optional<String> text(JsonNode root, String key) {
        JsonNode node = root.get(key);
        return node == null || node.isNull() ? Optional.empty() : Optional.of(node.asText());
    }
}
