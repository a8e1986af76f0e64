// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.datasets;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
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
import java.nio.file.Path;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Reads a serve configuration: the file rendered as a Jinja template, checked against {@code serve.schema.json},
 * then against the rules a schema cannot state (sql or grains, a range's params, every grain's max_range). The
 * same {@code serve:} block, inside a server configuration, is read by {@link #readBlock}.
 */
public final class ServeConfigReader {
    private static final YAMLMapper YAML = new YAMLMapper();

    private final ConfigLoader loader;

    public ServeConfigReader(ConfigEnvironment environment) {
        this.loader = new ConfigLoader(schema(), requireNonNull(environment, "environment is null"));
    }

    public static ConfigSchema schema() {
        return ConfigSchema.fromResource(ServeConfigReader.class, "serve.schema.json");
    }

    /** Whether a rendered document is a serve configuration: a {@code serve} block and no {@code pipeline}. */
    public static boolean isServeConfig(JsonNode root) {
        return root != null && root.has("serve") && !root.has("pipeline");
    }

    /** The file's configuration, or a {@link ConfigInvalidException} carrying every fault. */
    public ServeConfig read(Path file) {
        requireNonNull(file, "file is null");
        LocatedYaml yaml = loader.load(file).orThrow();
        List<ConfigProblem> problems = new ArrayList<>();
        ServeConfig config = bind(file.toString(), yaml, problems);
        if (!problems.isEmpty()) {
            throw new ConfigInvalidException(problems);
        }
        return config;
    }

    /** Every fault of the file, in one pass (empty when sound), for {@code mallard validate}. */
    public List<ConfigProblem> problems(Path file) {
        ConfigLoader.Loaded loaded = loader.load(file);
        List<ConfigProblem> problems = new ArrayList<>(loaded.errors());
        if (loaded.yaml() != null) {
            // The rules past the schema are checked even when the schema found faults, so one pass reports them all.
            List<ConfigProblem> rules = new ArrayList<>();
            try {
                ServeConfig config = bind(file.toString(), loaded.yaml(), rules);
                if (loaded.sound() && rules.isEmpty()) {
                    rules.addAll(StatementParameters.check(file.toString(), config));
                }
            } catch (RuntimeException e) {
                // A document the schema refused may not bind; its schema faults are already reported.
            }
            rules.stream().filter(rule -> !problems.contains(rule)).forEach(problems::add);
        }
        return problems;
    }

    /**
     * A server configuration's {@code serve:} block (only its datasets, max_rows, query_timeout_seconds and cache apply there).
     *
     * @param where names the block in errors
     */
    public static ServeConfig.Settings readBlock(JsonNode block, String where) {
        ObjectNode root = JsonNodeFactory.instance.objectNode();
        root.set("serve", block);
        String text;
        try {
            text = YAML.writeValueAsString(root);
        } catch (JsonProcessingException e) {
            throw new MallardException(ErrorCode.SYSTEM_INTERNAL, "cannot render the serve block: " + e.getMessage(), e);
        }
        List<ConfigProblem> problems = new ArrayList<>();
        LocatedYaml yaml = LocatedYaml.parse(where, text, problems);
        problems.addAll(schema().validate(where, yaml));
        if (!problems.isEmpty()) {
            throw new ConfigInvalidException(problems);
        }
        ServeConfig config = bind(where, yaml, problems);
        if (!problems.isEmpty()) {
            throw new ConfigInvalidException(problems);
        }
        return config.serve();
    }

    static ServeConfig bind(String file, LocatedYaml yaml, List<ConfigProblem> problems) {
        JsonNode root = yaml.root();
        List<ServeConfig.Command> commands = new ArrayList<>();
        for (JsonNode command : root.path("commands")) {
            commands.add(new ServeConfig.Command(command.path("name").asText(), command.path("sql").asText()));
        }
        JsonNode serve = root.path("serve");
        List<ServeConfig.Client> clients = new ArrayList<>();
        Set<String> tokens = new HashSet<>();
        int index = 0;
        for (JsonNode client : serve.path("clients")) {
            String token = client.path("token").asText();
            if (!tokens.add(token)) {
                problems.add(problem(file, yaml, "serve.clients[" + index + "].token", "two clients share one token; give each client its own"));
            }
            clients.add(new ServeConfig.Client(client.path("client_id").asText(), token));
            index++;
        }
        List<ServeConfig.Dataset> datasets = new ArrayList<>();
        Set<String> names = new HashSet<>();
        index = 0;
        for (JsonNode dataset : serve.path("datasets")) {
            String path = "serve.datasets[" + index++ + "]";
            String name = dataset.path("name").asText();
            if (!names.add(name)) {
                problems.add(problem(file, yaml, path + ".name", "two datasets are named " + name + "; dataset names must be unique"));
            }
            dataset(file, yaml, path, dataset, problems).ifPresent(datasets::add);
        }
        Optional<String> database = Optional.ofNullable(serve.get("database")).map(JsonNode::asText).filter(name -> !name.equals(":memory:"));
        ServeConfig.Settings settings = new ServeConfig.Settings(
                serve.path("host").asText(ServeConfig.DEFAULT_HOST),
                serve.path("port").asInt(ServeConfig.DEFAULT_PORT),
                database,
                Optional.ofNullable(serve.get("storage_compatibility")).map(JsonNode::asText)
                        .map(version -> StorageCompatibility.of(version, "serve.storage_compatibility")).orElse(StorageCompatibility.DEFAULT),
                serve.path("max_rows").asInt(ServeConfig.DEFAULT_MAX_ROWS),
                java.time.Duration.ofSeconds(serve.path("query_timeout_seconds").asLong(ServeConfig.DEFAULT_QUERY_TIMEOUT_SECONDS)),
                serve.path("cache").path("max_mb").asLong(ServeConfig.DEFAULT_CACHE_MAX_MB) << 20,
                serve.path("metrics").path("enabled").asBoolean(true),
                clients,
                datasets);
        return new ServeConfig(commands, settings);
    }

    private static Optional<ServeConfig.Dataset> dataset(String file, LocatedYaml yaml, String path, JsonNode node, List<ConfigProblem> problems) {
        int before = problems.size();
        List<ServeConfig.Param> params = new ArrayList<>();
        Set<String> paramNames = new HashSet<>();
        int index = 0;
        for (JsonNode param : node.path("params")) {
            String at = path + ".params[" + index++ + "]";
            String name = param.path("name").asText();
            if (name.equals(DatasetQuery.GRAIN)) {
                problems.add(problem(file, yaml, at + ".name", "'grain' is the request key that picks a grain; name the param otherwise"));
            }
            if (!paramNames.add(name)) {
                problems.add(problem(file, yaml, at + ".name", "two params are named " + name));
            }
            ServeConfig.ParamType type = ServeConfig.ParamType.valueOf(param.path("type").asText().toUpperCase(java.util.Locale.ROOT));
            OptionalLong min = param.has("min") ? OptionalLong.of(param.get("min").asLong()) : OptionalLong.empty();
            OptionalLong max = param.has("max") ? OptionalLong.of(param.get("max").asLong()) : OptionalLong.empty();
            if ((min.isPresent() || max.isPresent()) && type != ServeConfig.ParamType.INTEGER) {
                problems.add(problem(file, yaml, at, "min and max bound integer params only; " + name + " is a " + type.name().toLowerCase(java.util.Locale.ROOT)));
            }
            if (min.isPresent() && max.isPresent() && min.getAsLong() > max.getAsLong()) {
                problems.add(problem(file, yaml, at + ".min", "min " + min.getAsLong() + " is above max " + max.getAsLong()));
            }
            Optional<String> defaultValue = Optional.ofNullable(param.get("default")).map(JsonNode::asText);
            ServeConfig.Param bound = new ServeConfig.Param(name, type, param.path("required").asBoolean(false), defaultValue, min, max,
                    param.path("description").asText(""));
            if (defaultValue.isPresent()) {
                try {
                    DatasetQuery.parse(bound, defaultValue.get());
                } catch (MallardException e) {
                    problems.add(problem(file, yaml, at + ".default", "the default does not fit the param: " + e.getMessage()));
                }
            }
            params.add(bound);
        }
        Optional<String> sql = Optional.ofNullable(node.get("sql")).map(JsonNode::asText);
        boolean hasGrains = node.has("grains");
        if (sql.isPresent() == hasGrains) {
            problems.add(problem(file, yaml, path, "give the dataset either sql or grains, not " + (hasGrains ? "both" : "neither")));
        }
        Optional<ServeConfig.Range> range = Optional.empty();
        if (node.has("range")) {
            JsonNode given = node.get("range");
            if (!hasGrains) {
                problems.add(problem(file, yaml, path + ".range", "a range picks among grains; give the dataset grains, or drop the range"));
            }
            String since = given.path("since").asText();
            String until = given.path("until").asText();
            for (String[] bound : new String[][] {{"since", since}, {"until", until}}) {
                Optional<ServeConfig.Param> param = params.stream().filter(candidate -> candidate.name().equals(bound[1])).findFirst();
                if (param.isEmpty() || param.get().type() != ServeConfig.ParamType.TIMESTAMP) {
                    problems.add(problem(file, yaml, path + ".range." + bound[0], "range." + bound[0] + " names " + bound[1]
                            + ", which is not a timestamp param of the dataset; declare it under params with type: timestamp"));
                }
            }
            if (since.equals(until)) {
                problems.add(problem(file, yaml, path + ".range", "range.since and range.until name the same param"));
            }
            range = Optional.of(new ServeConfig.Range(since, until, span(file, yaml, path + ".range.default", given.path("default").asText(), problems)));
        }
        boolean cached = node.has("cache");
        List<ServeConfig.Grain> grains = new ArrayList<>();
        var fields = node.path("grains").fields();
        while (fields.hasNext()) {
            Map.Entry<String, JsonNode> field = fields.next();
            String at = path + ".grains." + field.getKey();
            JsonNode grain = field.getValue();
            Optional<Duration> maxRange = grain.has("max_range")
                    ? Optional.of(span(file, yaml, at + ".max_range", grain.get("max_range").asText(), problems)) : Optional.empty();
            Optional<Duration> bucket = grain.has("bucket")
                    ? Optional.of(span(file, yaml, at + ".bucket", grain.get("bucket").asText(), problems)) : Optional.empty();
            if (range.isPresent() && maxRange.isEmpty()) {
                problems.add(problem(file, yaml, at, "a ranged dataset's grains each need max_range, the widest window they serve"));
            }
            if (range.isPresent() && cached && bucket.isEmpty()) {
                problems.add(problem(file, yaml, at, "a cached ranged dataset's grains each need bucket, so callers in one bucket share one cache entry"));
            }
            grains.add(new ServeConfig.Grain(field.getKey(), grain.path("sql").asText(), maxRange, bucket));
        }
        grains.sort(Comparator.comparing((ServeConfig.Grain grain) -> grain.maxRange().orElse(Duration.ZERO)));
        Map<String, ServeConfig.Grain> ordered = new LinkedHashMap<>();
        grains.forEach(grain -> ordered.put(grain.name(), grain));
        Optional<Duration> ttl = cached ? Optional.of(Duration.ofSeconds(node.path("cache").path("ttl_seconds").asLong())) : Optional.empty();
        if (problems.size() > before) {
            return Optional.empty();
        }
        return Optional.of(new ServeConfig.Dataset(node.path("name").asText(), node.path("description").asText(""), params, sql, range,
                ordered, ttl));
    }

    private static Duration span(String file, LocatedYaml yaml, String path, String text, List<ConfigProblem> problems) {
        try {
            return Span.parse(text, path);
        } catch (MallardException e) {
            problems.add(problem(file, yaml, path, e.getMessage()));
            return Duration.ofSeconds(1);
        }
    }

    static ConfigProblem problem(String file, LocatedYaml yaml, String path, String message) {
        LocatedYaml.Location at = yaml.locate(path);
        return new ConfigProblem(file, at.line(), at.column(), path, ErrorCode.USER_CONFIG_INVALID, message);
    }

    /** RFC 3339, as a request gives a timestamp. */
    static OffsetDateTime timestamp(String text) {
        try {
            return OffsetDateTime.parse(text);
        } catch (DateTimeParseException e) {
            throw new MallardException(ErrorCode.USER_DATASET_INVALID_PARAM, "'" + text + "' is not an RFC 3339 timestamp such as 2026-01-31T12:00:00Z");
        }
    }
}
