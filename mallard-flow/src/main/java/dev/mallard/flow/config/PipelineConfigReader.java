// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.config;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.core.config.ConfigInvalidException;
import dev.mallard.core.config.ConfigLoader;
import dev.mallard.core.config.ConfigProblem;
import dev.mallard.core.config.ConfigSchema;
import dev.mallard.core.config.LocatedYaml;
import dev.mallard.core.engine.StorageCompatibility;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.flow.config.PipelineConfig.Command;
import dev.mallard.flow.config.PipelineConfig.HandlerConfig;
import dev.mallard.flow.config.PipelineConfig.OnError;
import dev.mallard.flow.config.PipelineConfig.Pipeline;
import dev.mallard.flow.config.PipelineConfig.PolledWindowConfig;
import dev.mallard.flow.config.PipelineConfig.SinkConfig;
import dev.mallard.flow.config.PipelineConfig.SourceConfig;
import dev.mallard.flow.config.PipelineConfig.TableSql;
import dev.mallard.flow.config.PipelineConfig.WindowConfig;
import dev.mallard.flow.sink.iceberg.IcebergSettings;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Reads a pipeline configuration: template, YAML, schema, then the rules a schema cannot say (refused
 * blocks, combinations that need each other). Reports every fault at once.
 */
public final class PipelineConfigReader {
    private static final String STORAGE_COMPATIBILITY = "pipeline.state.storage_compatibility";
    private final ConfigLoader loader;

    public PipelineConfigReader(ConfigEnvironment environment) {
        this.loader = new ConfigLoader(schema(), requireNonNull(environment, "environment is null"));
    }

    public static ConfigSchema schema() {
        return ConfigSchema.fromResource(PipelineConfigReader.class, "pipeline.schema.json");
    }

    /** The file read and checked; {@code config} is present only when there were no errors. */
    public record Result(ConfigLoader.Loaded loaded, List<ConfigProblem> errors, List<ConfigProblem> warnings,
            Optional<PipelineConfig> config) {
        public PipelineConfig orThrow() {
            if (!errors.isEmpty()) {
                throw new ConfigInvalidException(errors);
            }
            return config.orElseThrow();
        }
    }

    public Result read(Path path) {
        return check(loader.load(path));
    }

    public Result read(String file, String text) {
        return check(loader.load(file, text));
    }

    private Result check(ConfigLoader.Loaded loaded) {
        List<ConfigProblem> errors = new ArrayList<>(loaded.errors());
        List<ConfigProblem> warnings = new ArrayList<>(loaded.warnings());
        if (loaded.yaml() == null) {
            return new Result(loaded, errors, warnings, Optional.empty());
        }
        LocatedYaml yaml = loaded.yaml();
        semanticChecks(loaded.file(), yaml, errors, warnings);
        Optional<PipelineConfig> config = errors.isEmpty() ? Optional.of(build(yaml.root())) : Optional.empty();
        return new Result(loaded, errors, warnings, config);
    }

    private static void semanticChecks(String file, LocatedYaml yaml, List<ConfigProblem> errors, List<ConfigProblem> warnings) {
        JsonNode root = yaml.root();
        if (root.has("udfs")) {
            List<String> names = root.path("udfs").valueStream()
                    .map(udf -> udf.path("function_name").asText("?")).toList();
            errors.add(problem(file, yaml, "udfs", ErrorCode.USER_CONFIG_UNSUPPORTED,
                    "Python UDFs are not supported (" + String.join(", ", names) + "); define each function in DuckDB "
                            + "instead, e.g. a `commands` entry with CREATE MACRO " + (names.isEmpty() ? "f" : names.getFirst())
                            + "(x) AS <expression>, then delete the udfs block"));
        }
        JsonNode tables = root.path("tables").path("sql");
        for (int i = 0; i < tables.size(); i++) {
            if (tables.get(i).has("manager") && tables.get(i).has("window")) {
                errors.add(problem(file, yaml, "tables.sql[" + i + "].manager", ErrorCode.USER_CONFIG_INVALID,
                        "a table is either SQLFlow's polled window (`manager`) or a window on event time (`window`), not both; "
                                + "delete one of the two blocks (see docs/windows.md)"));
            }
            JsonNode window = tables.get(i).path("window");
            if (window.has("late_rows")) {
                errors.add(problem(file, yaml, "tables.sql[" + i + "].window.late_rows", ErrorCode.USER_CONFIG_UNSUPPORTED,
                        "`late_rows` is replaced by `allowed_lateness_seconds` (0 refuses late records; a positive value "
                                + "keeps closed buckets that long and republishes them whole)"));
            }
            if (window.has("poll_interval_seconds")) {
                errors.add(problem(file, yaml, "tables.sql[" + i + "].window.poll_interval_seconds", ErrorCode.USER_CONFIG_UNSUPPORTED,
                        "`poll_interval_seconds` is gone: nothing polls, buckets close when the watermark moves; use "
                                + "`idle_close_seconds` to bound how long a silent partition holds them"));
            }
        }
        JsonNode pipeline = root.path("pipeline");
        for (int i = 0; i < tables.size(); i++) {
            JsonNode window = tables.get(i).path("window");
            if (!window.isObject()) {
                continue;
            }
            String at = "tables.sql[" + i + "].window";
            if (window.path("allowed_lateness_seconds").asLong(0) > 0) {
                // A bucket a late record joins is published again, whole: only a sink that replaces by key keeps one copy.
                JsonNode sink = window.path("sink");
                String type = sink.path("type").asText("console");
                boolean appendOnly = type.equals("console") || (type.equals("kafka") && !sink.path("kafka").has("key"))
                        || (type.equals("postgres") && !"upsert".equals(sink.path("postgres").path("mode").asText()));
                boolean replaces = type.equals("noop") || type.equals("kafka") || type.equals("postgres");
                if (appendOnly) {
                    errors.add(problem(file, yaml, at + ".allowed_lateness_seconds", ErrorCode.USER_CONFIG_INVALID,
                            "a bucket that takes a late record is published again whole, and the " + type + " sink only appends, "
                                    + "so readers would see it twice: use a sink that replaces by key (kafka with `key` on a "
                                    + "compacted topic, postgres with mode: upsert) or set allowed_lateness_seconds to 0"));
                } else if (!replaces) {
                    warnings.add(problem(file, yaml, at + ".allowed_lateness_seconds", ErrorCode.USER_CONFIG_INVALID,
                            "a bucket that takes a late record is published again whole; make sure the " + type
                                    + " sink replaces earlier rows of the same bucket (by key), or readers will see it twice"));
                }
            }
            JsonNode source = pipeline.path("source");
            if (!source.path(source.path("type").asText()).has("event_time")) {
                errors.add(problem(file, yaml, at, ErrorCode.USER_CONFIG_INVALID,
                        "a window needs each record's own time: add event_time: {path: <field>, format: rfc3339} to "
                                + "pipeline.source." + source.path("type").asText("kafka")));
            }
        }
        Map<String, JsonNode> sinks = new java.util.LinkedHashMap<>();
        sinks.put("pipeline.sink", pipeline.path("sink"));
        sinks.put("pipeline.on_error.dlq", pipeline.path("on_error").path("dlq"));
        for (int i = 0; i < tables.size(); i++) {
            sinks.put("tables.sql[" + i + "].window.sink", tables.get(i).path("window").path("sink"));
            sinks.put("tables.sql[" + i + "].manager.sink", tables.get(i).path("manager").path("sink"));
        }
        for (Map.Entry<String, JsonNode> entry : sinks.entrySet()) {
            String sink = entry.getKey();
            if ("iceberg".equals(entry.getValue().path("type").asText())) {
                for (IcebergSettings.Problem fault : IcebergSettings.problems(entry.getValue().path("iceberg"))) {
                    errors.add(problem(file, yaml, sink + ".iceberg." + fault.key(), fault.code(), fault.message()));
                }
            }
            if ("clickhouse".equals(entry.getValue().path("type").asText())) {
                // No ClickHouse server can run where Mallard is tested, so the sink is not built rather than built untested.
                errors.add(problem(file, yaml, sink + ".type", ErrorCode.USER_CONFIG_UNSUPPORTED,
                        "the clickhouse sink is not available in this version of Mallard; write the rows to ClickHouse another way "
                                + "(a kafka sink and ClickHouse's Kafka table engine, or a postgres sink), or run this config with SQLFlow"));
            }
        }
        if (pipeline.path("source").path("on_error").path("policy").asText("raise").equalsIgnoreCase("ignore")) {
            errors.add(problem(file, yaml, "pipeline.source.on_error.policy", ErrorCode.USER_CONFIG_UNSUPPORTED,
                    "a source error policy of ignore is not supported: a source that fails stops the pipeline; to skip messages "
                            + "that fail, set pipeline.on_error.policy: IGNORE (or DLQ) and remove pipeline.source.on_error"));
        }
        JsonNode compatibility = pipeline.path("state").path("storage_compatibility");
        if (compatibility.isTextual()) {
            try {
                StorageCompatibility.of(compatibility.asText(), STORAGE_COMPATIBILITY);
            } catch (MallardException e) {
                errors.add(problem(file, yaml, STORAGE_COMPATIBILITY, e.errorCode(), e.getMessage()));
            }
        }
        JsonNode onError = pipeline.path("on_error");
        if (onError.path("policy").asText("").equalsIgnoreCase("dlq") && !onError.has("dlq")) {
            errors.add(problem(file, yaml, "pipeline.on_error.policy", ErrorCode.USER_CONFIG_INVALID,
                    "policy DLQ needs a `dlq` sink under on_error (a full sink definition, e.g. dlq: {type: kafka, kafka: {...}})"));
        }
        for (String sasl : List.of("pipeline.source.kafka.sasl", "pipeline.sink.kafka.sasl")) {
            JsonNode node = at(root, sasl);
            if ("GSSAPI".equals(node.path("mechanism").asText())) {
                errors.add(problem(file, yaml, sasl + ".mechanism", ErrorCode.USER_CONFIG_UNSUPPORTED,
                        "SASL mechanism GSSAPI (Kerberos) is not supported; use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"));
            }
        }
    }

    private static JsonNode at(JsonNode root, String dotted) {
        JsonNode node = root;
        for (String part : dotted.split("\\.")) {
            node = node.path(part);
        }
        return node;
    }

    private static ConfigProblem problem(String file, LocatedYaml yaml, String path, ErrorCode code, String message) {
        LocatedYaml.Location at = yaml.locate(path);
        return new ConfigProblem(file, at.line(), at.column(), path, code, message);
    }

    private static PipelineConfig build(JsonNode root) {
        List<Command> commands = new ArrayList<>();
        JsonNode commandNodes = root.path("commands");
        for (int i = 0; i < commandNodes.size(); i++) {
            JsonNode node = commandNodes.get(i);
            commands.add(new Command(node.path("name").asText(), node.path("sql").asText(), "commands[" + i + "].sql"));
        }
        List<TableSql> tables = new ArrayList<>();
        JsonNode tableNodes = root.path("tables").path("sql");
        for (int i = 0; i < tableNodes.size(); i++) {
            JsonNode node = tableNodes.get(i);
            String path = "tables.sql[" + i + "]";
            Optional<WindowConfig> window = Optional.empty();
            JsonNode w = node.path("window");
            if (w.isObject()) {
                window = Optional.of(new WindowConfig(node.path("name").asText(), path + ".window",
                        w.path("time_column").asText(), w.path("size_seconds").asLong(), w.path("grace_seconds").asLong(0),
                        w.path("idle_close_seconds").asLong(30), w.path("allowed_lateness_seconds").asLong(0),
                        w.has("max_future_seconds") ? Optional.of(w.path("max_future_seconds").asLong()) : Optional.empty(),
                        optionalText(w.path("emit_sql")).orElse(WindowConfig.DEFAULT_EMIT_SQL), sink(w.path("sink"))));
            }
            Optional<PolledWindowConfig> polled = Optional.empty();
            JsonNode manager = node.path("manager");
            if (manager.isObject()) {
                JsonNode tumbling = manager.path("tumbling_window");
                polled = Optional.of(new PolledWindowConfig(node.path("name").asText(), path + ".manager",
                        tumbling.path("collect_closed_windows_sql").asText(), tumbling.path("delete_closed_windows_sql").asText(),
                        tumbling.path("poll_interval_seconds").asLong(PolledWindowConfig.DEFAULT_POLL_INTERVAL_SECONDS), sink(manager.path("sink"))));
            }
            tables.add(new TableSql(node.path("name").asText(), node.path("sql").asText(), path + ".sql", window, polled));
        }
        JsonNode pipeline = root.path("pipeline");
        JsonNode onError = pipeline.path("on_error");
        JsonNode handler = pipeline.path("handler");
        return new PipelineConfig(commands, tables, new Pipeline(
                pipeline.path("name").asText("pipeline"),
                pipeline.path("batch_size").asInt(),
                pipeline.path("flush_interval_seconds").asInt(30),
                pipeline.path("drain_deadline_seconds").asInt(30),
                optionalText(pipeline.path("state").path("path")),
                optionalText(pipeline.path("state").path("storage_compatibility")).map(StorageCompatibility::new)
                        .orElse(StorageCompatibility.DEFAULT),
                new OnError(PipelineConfig.ErrorPolicy.parse(onError.path("policy").asText("RAISE")),
                        onError.has("dlq") ? Optional.of(sink(onError.path("dlq"))) : Optional.empty()),
                new SourceConfig(pipeline.path("source").path("type").asText(),
                        block(pipeline.path("source"), pipeline.path("source").path("type").asText())),
                new HandlerConfig(PipelineConfig.HandlerType.parse(handler.path("type").asText()), handler.path("sql").asText(),
                        optionalText(handler.path("table")), optionalText(handler.path("sql_results_cache_dir"))),
                sink(pipeline.path("sink"))));
    }

    static SinkConfig sink(JsonNode node) {
        String type = node.path("type").asText("console");
        return new SinkConfig(type, block(node, type), node.path("retry").isObject() ? node.path("retry") : JsonNodeFactory.instance.objectNode());
    }

    private static JsonNode block(JsonNode parent, String name) {
        JsonNode block = parent.path(name);
        return block.isObject() ? block : JsonNodeFactory.instance.objectNode();
    }

    private static Optional<String> optionalText(JsonNode node) {
        return node.isTextual() && !node.asText().isBlank() ? Optional.of(node.asText()) : Optional.empty();
    }
}
