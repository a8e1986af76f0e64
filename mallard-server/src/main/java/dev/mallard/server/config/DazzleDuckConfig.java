// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.config;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigParseOptions;
import com.typesafe.config.ConfigResolveOptions;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * DazzleDuck's HOCON configuration, {@code dazzleduck_server { ... }} in a {@code .conf} file and
 * {@code --conf dazzleduck_server.key=value} overrides, read into Mallard's configuration tree. Each key DazzleDuck
 * documents maps to Mallard's (docs/server.md has the table); a key whose feature Mallard does not have yet is
 * refused with {@code user.config.unsupported}, any other with {@code user.config.unknown_key}, each naming the key.
 */
final class DazzleDuckConfig {
    static final String ROOT = "dazzleduck_server";

    /** Keys of features other parts of Mallard will serve (the named-query hub, ingestion, delegated login). */

    private static final Pattern ENV = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)}");

    /** What the HOCON says, in Mallard's configuration tree, and the startup SQL it gives inline. */
    record Read(ObjectNode root, Optional<String> startupSql) {}

    private final Map<String, String> environment;

    DazzleDuckConfig(Map<String, String> environment) {
        this.environment = Map.copyOf(requireNonNull(environment, "environment is null"));
    }

    /** Whether these overrides are DazzleDuck's ({@code dazzleduck_server.x=y}). */
    static boolean isDazzleDuck(Optional<Path> file, List<String> overrides) {
        return file.map(path -> path.getFileName().toString().endsWith(".conf")).orElse(false)
                || overrides.stream().anyMatch(override -> override.trim().startsWith(ROOT + "."));
    }

    Read read(Optional<Path> file, List<String> overrides) {
        Config config = ConfigFactory.empty();
        for (String override : overrides) {
            if (!override.trim().startsWith(ROOT + ".")) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "--conf " + override + ": a DazzleDuck configuration takes keys under "
                        + ROOT + ". (such as " + ROOT + ".http.port=8081); Mallard's own keys go in a YAML configuration");
            }
            try {
                // Later overrides win, as the last --conf does.
                config = ConfigFactory.parseString(override, ConfigParseOptions.defaults().setOriginDescription("--conf")).withFallback(config);
            } catch (ConfigException e) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "--conf " + override + ": " + e.getMessage(), e);
            }
        }
        if (file.isPresent()) {
            if (!Files.isRegularFile(file.get())) {
                throw new MallardException(ErrorCode.USER_CONFIG_NOT_FOUND, "no configuration file " + file.get());
            }
            try {
                config = config.withFallback(ConfigFactory.parseFile(file.get().toFile(), ConfigParseOptions.defaults().setAllowMissing(false)));
            } catch (ConfigException e) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, file.get() + ": " + e.getMessage(), e);
            }
        }
        for (String key : config.root().keySet()) {
            if (!key.equals(ROOT)) {
                throw new MallardException(ErrorCode.USER_CONFIG_UNKNOWN_KEY, "unknown key " + key + ": a DazzleDuck configuration is all under " + ROOT);
            }
        }
        if (!config.hasPath(ROOT)) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "the DazzleDuck configuration has no " + ROOT + " { ... } block");
        }
        // ${...} resolves against the configuration itself, then the environment (HOCON's own rule).
        Map<String, String> variables = new java.util.HashMap<>(environment);
        variables.keySet().removeIf(name -> name.equals(ROOT) || name.startsWith(ROOT + ".") || name.isBlank());
        try {
            config = config.withFallback(ConfigFactory.parseMap(quoted(variables))).resolve(ConfigResolveOptions.defaults().setUseSystemEnvironment(false));
        } catch (ConfigException e) {
            throw new MallardException(ErrorCode.USER_CONFIG_TEMPLATE_UNDEFINED, "the DazzleDuck configuration: " + e.getMessage(), e);
        }
        return map(config.getConfig(ROOT), file.map(path -> path.toAbsolutePath().getParent()).orElse(Path.of("")));
    }

    private Read map(Config dd, Path base) {
        ObjectNode root = JsonNodeFactory.instance.objectNode();
        Set<String> done = new TreeSet<>();
        refuseUnknown(dd);
        Optional<String> flightHost = string(dd, "flight_sql.host", done);
        Optional<String> httpHost = string(dd, "http.host", done);
        if (flightHost.isPresent() && httpHost.isPresent() && !flightHost.equals(httpHost)) {
            throw new MallardException(ErrorCode.USER_CONFIG_UNSUPPORTED, key("http.host") + " " + httpHost.get() + " differs from "
                    + key("flight_sql.host") + " " + flightHost.get() + ": Mallard binds both listeners to one host; give them the same");
        }
        flightHost.or(() -> httpHost).ifPresent(host -> root.put("host", host));
        integer(dd, "flight_sql.port", done).ifPresent(port -> root.putObject("flight").put("port", port));
        integer(dd, "http.port", done).ifPresent(port -> root.putObject("http").put("port", port));
        if (dd.hasPath("http.allow-origin")) {
            done.add("http.allow-origin");
            ArrayNode origins = (root.has("http") ? (ObjectNode) root.get("http") : root.putObject("http")).putArray("allow_origin");
            ConfigValue value = dd.getValue("http.allow-origin");
            if (value.valueType() == ConfigValueType.LIST) {
                dd.getStringList("http.allow-origin").forEach(origins::add);
            } else {
                origins.add(dd.getString("http.allow-origin"));
            }
        }
        string(dd, "http.authentication", done).ifPresent(auth -> {
            if (!auth.equalsIgnoreCase("jwt")) {
                throw new MallardException(ErrorCode.USER_CONFIG_UNSUPPORTED, key("http.authentication") + " = " + auth
                        + " is not supported: Mallard's HTTP API always asks for a JWT (or Basic credentials); remove the key or set jwt");
            }
        });
        boolean httpTls = bool(dd, "http.tls.enabled", done).orElse(false);
        if (dd.hasPath("http.tls")) {
            for (String nested : dd.getConfig("http.tls").root().keySet()) {
                if (!nested.equals("enabled")) {
                    throw unsupported("http.tls." + nested, "Mallard's TLS is one PEM certificate and key for both listeners: give "
                            + key("server_cert") + " and " + key("keystore"));
                }
            }
        }
        boolean flightTls = bool(dd, "flight_sql.use_encryption", done).orElse(false);
        Optional<String> cert = string(dd, "server_cert", done);
        Optional<String> key = string(dd, "keystore", done);
        if (flightTls != httpTls && (dd.hasPath("http.tls.enabled") && dd.hasPath("flight_sql.use_encryption"))) {
            throw new MallardException(ErrorCode.USER_CONFIG_UNSUPPORTED, key("flight_sql.use_encryption") + " and " + key("http.tls.enabled")
                    + " differ: Mallard serves both listeners over TLS or neither");
        }
        if (flightTls || httpTls) {
            if (cert.isEmpty() || key.isEmpty()) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "TLS (" + key(flightTls ? "flight_sql.use_encryption" : "http.tls.enabled")
                        + " = true) needs " + key("server_cert") + " (a PEM certificate chain) and " + key("keystore") + " (its PEM PKCS#8 key)");
            }
            ObjectNode tls = root.putObject("tls");
            tls.put("cert_file", base.resolve(cert.get()).toString());
            tls.put("key_file", base.resolve(key.get()).toString());
        }
        string(dd, "warehouse", done).ifPresent(warehouse -> root.put("warehouse", warehouse));
        dev.mallard.server.ingest.IngestionConfig.fromDazzleDuck(dd, base.resolve(root.path("warehouse").asText(ServerConfig.DEFAULT_WAREHOUSE))
                .toAbsolutePath().normalize()).ifPresent(ingestion -> root.set("ingestion", ingestion));
        string(dd, "access_mode", done).ifPresent(mode -> root.put("access_mode", mode));
        string(dd, "named_query_table", done).ifPresent(table -> root.put("named_query_table", table));
        string(dd, "secret_key", done).ifPresent(secret -> root.put("secret_key", secret));
        // DazzleDuck signs HS512 with a base64 secret_key: so a token minted by either server works on the other.
        root.putObject("jwt_token").put("algorithm", "HS512");
        if (dd.hasPath("users")) {
            done.add("users");
            ArrayNode users = root.putArray("users");
            List<? extends ConfigObject> list;
            try {
                list = dd.getObjectList("users");
            } catch (ConfigException e) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, key("users") + " must be a list of {username, password, groups}: " + e.getMessage(), e);
            }
            for (int i = 0; i < list.size(); i++) {
                Config user = list.get(i).toConfig();
                for (String field : user.root().keySet()) {
                    if (!Set.of("username", "password", "groups").contains(field)) {
                        throw new MallardException(ErrorCode.USER_CONFIG_UNKNOWN_KEY, "unknown key " + key("users." + i + "." + field) + "; a user has username, password, groups");
                    }
                }
                ObjectNode account = users.addObject();
                account.put("username", user.hasPath("username") ? user.getString("username") : "");
                account.put("password", user.hasPath("password") ? user.getString("password") : "");
                if (user.hasPath("groups")) {
                    ArrayNode groups = account.putArray("groups");
                    user.getStringList("groups").forEach(groups::add);
                }
            }
        }
        if (dd.hasPath("jwt_token")) {
            for (Map.Entry<String, ConfigValue> entry : dd.getConfig("jwt_token").entrySet()) {
                String path = "jwt_token." + entry.getKey();
                done.add(path);
                switch (entry.getKey()) {
                    case "expiration" -> root.put("token_expiry_minutes", Math.max(1, dd.getDuration(path, TimeUnit.MINUTES)));
                    case "generation" -> {
                        if (!dd.getBoolean(path)) {
                            throw unsupported(path, "Mallard always mints its tokens at /v1/login and the Flight handshake");
                        }
                    }
                    case "verify_signature" -> {
                        if (!dd.getBoolean(path)) {
                            throw unsupported(path, "Mallard always verifies a token's signature");
                        }
                    }
                    case "claims.generate.headers", "claims.validate.headers" -> {
                        if (!dd.getStringList(path).isEmpty()) {
                            throw unsupported(path, "claims taken from headers at login are not supported yet; remove the key or give []");
                        }
                    }
                    default -> throw new MallardException(ErrorCode.USER_CONFIG_UNKNOWN_KEY, "unknown key " + key(path));
                }
            }
        }
        Optional<Long> timeout = milliseconds(dd, "query_timeout_ms", done);
        Optional<Long> maxTimeout = milliseconds(dd, "max_query_timeout_ms", done);
        if (timeout.isPresent() && maxTimeout.isPresent() && !timeout.equals(maxTimeout)) {
            throw new MallardException(ErrorCode.USER_CONFIG_UNSUPPORTED, key("query_timeout_ms") + " " + timeout.get() + " and "
                    + key("max_query_timeout_ms") + " " + maxTimeout.get() + " differ: Mallard's one timeout is both the default and the"
                    + " longest a client may ask for; give one of them");
        }
        maxTimeout.or(() -> timeout).ifPresent(ms -> root.put("query_timeout_seconds", (int) Math.ceil(ms / 1000.0)));
        string(dd, "login_url", done).ifPresent(url -> root.put("login_url", url));
        dataProcessorLocations(dd, root, done);
        Optional<String> startup = startupScript(dd, base, done);
        dev.mallard.server.hosted.HostedConfigReader.copyHocon(dd, root);
        return new Read(root, startup);
    }

    /** DazzleDuck's {@code flight_sql.data_processor_locations}, a list of {@code {host, port, use_encryption}}, as Mallard's {@code flight.data_processor_locations}. */
    private static void dataProcessorLocations(Config dd, ObjectNode root, Set<String> done) {
        String path = "flight_sql.data_processor_locations";
        if (!dd.hasPath(path)) {
            return;
        }
        done.add(path);
        List<? extends ConfigObject> list;
        try {
            list = dd.getObjectList(path);
        } catch (ConfigException e) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, key(path) + " must be a list of {host, port, use_encryption}: " + e.getMessage(), e);
        }
        ObjectNode flight = root.has("flight") ? (ObjectNode) root.get("flight") : root.putObject("flight");
        ArrayNode locations = flight.putArray("data_processor_locations");
        for (int i = 0; i < list.size(); i++) {
            Config location = list.get(i).toConfig();
            for (String field : location.root().keySet()) {
                if (!Set.of("host", "port", "use_encryption").contains(field)) {
                    throw new MallardException(ErrorCode.USER_CONFIG_UNKNOWN_KEY, "unknown key " + key(path + "." + i + "." + field)
                            + "; a data processor location has host, port, use_encryption");
                }
            }
            ObjectNode entry = locations.addObject();
            try {
                entry.put("host", location.getString("host"));
                entry.put("port", location.getInt("port"));
                entry.put("use_encryption", location.hasPath("use_encryption") && location.getBoolean("use_encryption"));
            } catch (ConfigException e) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, key(path + "." + i) + " needs a host (string) and a port (number): " + e.getMessage(), e);
            }
        }
    }

    /** DazzleDuck's {@code startup_script_provider}: inline {@code content}, then the file at {@code script_location} with {@code ${ENV}} replaced. */
    private Optional<String> startupScript(Config dd, Path base, Set<String> done) {
        if (!dd.hasPath("startup_script_provider")) {
            return Optional.empty();
        }
        Config provider = dd.getConfig("startup_script_provider");
        StringBuilder sql = new StringBuilder();
        for (String field : provider.root().keySet()) {
            String path = "startup_script_provider." + field;
            done.add(path);
            switch (field) {
                case "class" -> {
                    String type = provider.getString(field);
                    if (!type.endsWith(".ConfigBasedStartupScriptProvider")) {
                        throw unsupported(path, "Mallard reads the startup script from content and script_location only, not a class " + type);
                    }
                }
                case "content", "script_location" -> {
                    // read below, content first
                }
                default -> throw new MallardException(ErrorCode.USER_CONFIG_UNKNOWN_KEY, "unknown key " + key(path) + "; it takes content, script_location");
            }
        }
        if (provider.hasPath("content")) {
            sql.append(provider.getString("content")).append('\n');
        }
        if (provider.hasPath("script_location") && !provider.getString("script_location").isBlank()) {
            Path location = base.resolve(provider.getString("script_location"));
            try {
                sql.append(substitute(Files.readString(location), key("startup_script_provider.script_location") + " " + location)).append('\n');
            } catch (IOException e) {
                throw new MallardException(ErrorCode.USER_CONFIG_NOT_FOUND, "cannot read " + key("startup_script_provider.script_location") + " "
                        + location + ": " + e.getMessage(), e);
            }
        }
        return sql.toString().isBlank() ? Optional.empty() : Optional.of(sql.toString());
    }

    // Environment names are single keys: a dot in one must not become a path (parseMap reads keys as paths).
    private static Map<String, Object> quoted(Map<String, String> variables) {
        Map<String, Object> keys = new java.util.HashMap<>();
        variables.forEach((name, value) -> keys.put(com.typesafe.config.ConfigUtil.quoteString(name), value));
        return keys;
    }

    /** {@code ${NAME}} replaced by the environment's value; an undefined one is an error naming it. */
    String substitute(String text, String where) {
        Matcher matcher = ENV.matcher(text);
        StringBuilder out = new StringBuilder();
        while (matcher.find()) {
            String name = matcher.group(1);
            String value = environment.get(name);
            if (value == null) {
                throw new MallardException(ErrorCode.USER_CONFIG_TEMPLATE_UNDEFINED, where + " names ${" + name + "}, which the environment does not define");
            }
            matcher.appendReplacement(out, Matcher.quoteReplacement(value));
        }
        matcher.appendTail(out);
        return out.toString();
    }

    private static final Set<String> KNOWN = java.util.stream.Stream.concat(java.util.stream.Stream.of("flight_sql", "http", "warehouse", "access_mode",
            "secret_key", "users", "jwt_token", "query_timeout_ms", "max_query_timeout_ms", "startup_script_provider", "server_cert", "keystore",
            "pipelines", "pipeline_admins", "named_query_table", "login_url"),
            dev.mallard.server.ingest.IngestionConfig.DAZZLEDUCK_KEYS.stream()).collect(java.util.stream.Collectors.toUnmodifiableSet());
    private static final Set<String> KNOWN_FLIGHT = Set.of("host", "port", "use_encryption", "data_processor_locations");
    private static final Set<String> KNOWN_HTTP = Set.of("host", "port", "allow-origin", "authentication", "tls");

    private static void refuseUnknown(Config dd) {
        for (String top : dd.root().keySet()) {
            if (!KNOWN.contains(top)) {
                throw new MallardException(ErrorCode.USER_CONFIG_UNKNOWN_KEY, "unknown key " + key(top) + ": Mallard does not implement it (docs/server.md lists the keys it reads)");
            }
        }
        nested(dd, "flight_sql", KNOWN_FLIGHT, Set.of("service_name"));
        nested(dd, "http", KNOWN_HTTP, Set.of());
    }

    private static void nested(Config dd, String block, Set<String> known, Set<String> notYet) {
        if (!dd.hasPath(block)) {
            return;
        }
        if (dd.getValue(block).valueType() != ConfigValueType.OBJECT) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, key(block) + " must be a block { ... }");
        }
        for (String field : dd.getConfig(block).root().keySet()) {
            if (notYet.contains(field)) {
                throw unsupported(block + "." + field, "Mallard does not serve this feature yet");
            }
            if (!known.contains(field)) {
                throw new MallardException(ErrorCode.USER_CONFIG_UNKNOWN_KEY, "unknown key " + key(block + "." + field) + ": Mallard does not implement it");
            }
        }
    }

    private static MallardException unsupported(String path, String why) {
        return new MallardException(ErrorCode.USER_CONFIG_UNSUPPORTED, key(path) + " is not supported yet: " + why);
    }

    private static String key(String path) {
        return ROOT + "." + path;
    }

    private static Optional<String> string(Config dd, String path, Set<String> done) {
        if (!dd.hasPath(path)) {
            return Optional.empty();
        }
        done.add(path);
        try {
            return Optional.of(dd.getString(path));
        } catch (ConfigException e) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, key(path) + " must be a string: " + e.getMessage(), e);
        }
    }

    private static Optional<Integer> integer(Config dd, String path, Set<String> done) {
        if (!dd.hasPath(path)) {
            return Optional.empty();
        }
        done.add(path);
        try {
            return Optional.of(dd.getInt(path));
        } catch (ConfigException e) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, key(path) + " must be a whole number: " + e.getMessage(), e);
        }
    }

    private static Optional<Long> milliseconds(Config dd, String path, Set<String> done) {
        if (!dd.hasPath(path)) {
            return Optional.empty();
        }
        done.add(path);
        try {
            long ms = dd.getLong(path);
            if (ms < 0) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, key(path) + " must not be negative, not " + ms);
            }
            return Optional.of(ms);
        } catch (ConfigException e) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, key(path) + " must be a whole number of milliseconds: " + e.getMessage(), e);
        }
    }

    private static Optional<Boolean> bool(Config dd, String path, Set<String> done) {
        if (!dd.hasPath(path)) {
            return Optional.empty();
        }
        done.add(path);
        try {
            return Optional.of(dd.getBoolean(path));
        } catch (ConfigException e) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, key(path) + " must be true or false: " + e.getMessage(), e);
        }
    }

    static List<String> keys() {
        return new ArrayList<>(KNOWN);
    }
}
