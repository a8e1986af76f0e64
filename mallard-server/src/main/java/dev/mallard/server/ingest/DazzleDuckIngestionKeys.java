// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.ingest;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigValueType;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * DazzleDuck's ingestion keys ({@code ingestion { ... }}, {@code temp_write_location},
 * {@code ingestion_task_factory_provider { ... }} with its {@code ingestion_queue_table_mapping}) read into Mallard's
 * {@code ingestion:} tree. docs/ingestion.md has the table.
 */
final class DazzleDuckIngestionKeys {
    static final String ROOT = "dazzleduck_server";
    private static final Set<String> TUNING = Set.of("min_bucket_size", "max_bucket_size", "max_batches", "max_pending_write", "max_delay_ms",
            "queue_config_refresh_delay_ms");
    private static final Set<String> MAPPING = Set.of("ingestion_queue", "catalog", "schema", "table", "transformation", "additional_parameters",
            "output_path", "partition", "sort_order", "format", "view", "input_table", "input_schema");

    private DazzleDuckIngestionKeys() {}

    /** The top-level DazzleDuck keys this class reads. */
    static final Set<String> KEYS = Set.of("ingestion", "temp_write_location", "ingestion_task_factory_provider", "ingestion_queue_table_mapping");

    /**
     * The {@code ingestion:} tree, when the configuration has any ingestion key.
     *
     * @param warehouse the warehouse directory, absolute: DazzleDuck's absolute paths inside it become relative ones
     */
    static Optional<ObjectNode> read(Config dd, Path warehouse) {
        if (KEYS.stream().noneMatch(dd::hasPath)) {
            return Optional.empty();
        }
        ObjectNode ingestion = JsonNodeFactory.instance.objectNode();
        Optional<Long> targetFileSize = Optional.empty();
        Optional<Long> flushInterval = Optional.empty();
        if (dd.hasPath("ingestion")) {
            Config tuning = block(dd, "ingestion");
            for (String field : tuning.root().keySet()) {
                if (!TUNING.contains(field)) {
                    throw new MallardException(ErrorCode.USER_CONFIG_UNKNOWN_KEY, "unknown key " + key("ingestion." + field) + "; it takes " + TUNING);
                }
            }
            if (tuning.hasPath("max_pending_write")) {
                ingestion.put("max_pending_write", number(tuning, "ingestion", "max_pending_write"));
            }
            if (tuning.hasPath("max_bucket_size")) {
                targetFileSize = Optional.of(number(tuning, "ingestion", "max_bucket_size"));
            }
            if (tuning.hasPath("max_delay_ms")) {
                flushInterval = Optional.of(number(tuning, "ingestion", "max_delay_ms"));
            }
            // min_bucket_size, max_batches and queue_config_refresh_delay_ms tune DazzleDuck's own bucketing; Mallard flushes
            // what waits (up to target_file_size) and reads its queues once, at start: they are accepted and have no effect.
        }
        if (dd.hasPath("temp_write_location")) {
            ingestion.put("temp_write_location", inside(warehouse, dd.getString("temp_write_location"), "temp_write_location", true));
        }
        ArrayNode queues = ingestion.putArray("queues");
        if (dd.hasPath("ingestion_task_factory_provider")) {
            Config provider = block(dd, "ingestion_task_factory_provider");
            String type = provider.hasPath("class") ? provider.getString("class") : "NOOPIngestionTaskFactoryProvider";
            if (type.endsWith("DynamicDuckLakeIngestionTaskFactoryProvider")) {
                throw new MallardException(ErrorCode.USER_CONFIG_UNSUPPORTED, key("ingestion_task_factory_provider.class") + " = " + type
                        + " is not supported: Mallard declares its queues in the configuration (ingestion_queue_table_mapping), not in SQLite");
            }
            if (!type.endsWith("NOOPIngestionTaskFactoryProvider") && !type.endsWith("DuckLakeIngestionTaskFactoryProvider")) {
                throw new MallardException(ErrorCode.USER_CONFIG_UNSUPPORTED, key("ingestion_task_factory_provider.class") + " = " + type
                        + " is not one Mallard reads; give NOOPIngestionTaskFactoryProvider or DuckLakeIngestionTaskFactoryProvider");
            }
            for (String field : provider.root().keySet()) {
                if (!Set.of("class", "ingestion_path", "ingestion_queue_table_mapping").contains(field)) {
                    throw new MallardException(ErrorCode.USER_CONFIG_UNKNOWN_KEY, "unknown key " + key("ingestion_task_factory_provider." + field)
                            + "; it takes class, ingestion_path, ingestion_queue_table_mapping");
                }
            }
            if (provider.hasPath("ingestion_path")) {
                ingestion.put("any_queue_path", inside(warehouse, provider.getString("ingestion_path"), "ingestion_task_factory_provider.ingestion_path",
                        false));
            }
            if (provider.hasPath("ingestion_queue_table_mapping")) {
                mappings(provider, "ingestion_task_factory_provider.", warehouse, queues);
            }
        }
        if (dd.hasPath("ingestion_queue_table_mapping")) {
            mappings(dd, "", warehouse, queues);
        }
        for (var queue : queues) {
            ObjectNode object = (ObjectNode) queue;
            targetFileSize.ifPresent(size -> object.put("target_file_size", size));
            flushInterval.ifPresent(ms -> object.put("flush_interval_ms", ms));
        }
        return Optional.of(ingestion);
    }

    private static void mappings(Config config, String prefix, Path warehouse, ArrayNode queues) {
        String path = prefix + "ingestion_queue_table_mapping";
        List<? extends ConfigObject> list;
        try {
            list = config.getObjectList("ingestion_queue_table_mapping");
        } catch (ConfigException e) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, key(path) + " must be a list of {ingestion_queue, catalog, schema, table, ...}: "
                    + e.getMessage(), e);
        }
        for (int i = 0; i < list.size(); i++) {
            Config mapping = list.get(i).toConfig();
            String at = path + "." + i;
            for (String field : mapping.root().keySet()) {
                if (!MAPPING.contains(field)) {
                    throw new MallardException(ErrorCode.USER_CONFIG_UNKNOWN_KEY, "unknown key " + key(at + "." + field) + "; a mapping takes " + MAPPING);
                }
            }
            if (mapping.hasPath("view") || mapping.hasPath("input_table")) {
                throw new MallardException(ErrorCode.USER_CONFIG_UNSUPPORTED, key(at + ".view") + " is not supported: give the transformation as "
                        + "SELECT ... FROM __this");
            }
            if (!mapping.hasPath("ingestion_queue")) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, key(at) + " needs ingestion_queue");
            }
            ObjectNode queue = queues.addObject();
            String name = mapping.getString("ingestion_queue");
            queue.put("name", name);
            String output;
            if (mapping.hasPath("output_path")) {
                output = inside(warehouse, mapping.getString("output_path"), at + ".output_path", false);
            } else if (mapping.hasPath("table")) {
                // DuckLake's table data path, laid out under the warehouse (the ducklake extension cannot be loaded here).
                output = String.join("/", mapping.hasPath("catalog") ? mapping.getString("catalog") : "main",
                        mapping.hasPath("schema") ? mapping.getString("schema") : "main", mapping.getString("table"));
            } else {
                output = name;
            }
            queue.put("path", output);
            if (mapping.hasPath("transformation")) {
                queue.put("transformation", mapping.getString("transformation"));
            }
            for (String list2 : List.of("partition", "sort_order")) {
                if (mapping.hasPath(list2)) {
                    ArrayNode values = queue.putArray(list2);
                    if (mapping.getValue(list2).valueType() == ConfigValueType.LIST) {
                        mapping.getStringList(list2).forEach(values::add);
                    } else {
                        IngestionConfig.split(mapping.getString(list2)).forEach(values::add);
                    }
                }
            }
            if (mapping.hasPath("format")) {
                queue.put("format", mapping.getString("format").toLowerCase(java.util.Locale.ROOT));
            }
            if (mapping.hasPath("additional_parameters")) {
                Config parameters = mapping.getConfig("additional_parameters");
                ObjectNode watermark = null;
                for (String field : parameters.root().keySet()) {
                    String value = parameters.getValue(field).valueType() == ConfigValueType.LIST
                            ? String.join(",", parameters.getStringList(field)) : parameters.getString(field);
                    switch (field) {
                        case "watermark_table" -> (watermark = watermark == null ? queue.putObject("watermark") : watermark).put("table", value);
                        case "watermark_timestamp_column" -> (watermark = watermark == null ? queue.putObject("watermark") : watermark)
                                .put("timestamp_column", value);
                        case "watermark_group_columns" -> {
                            watermark = watermark == null ? queue.putObject("watermark") : watermark;
                            ArrayNode groups = watermark.putArray("group_columns");
                            IngestionConfig.split(value.replace("[", "").replace("]", "")).forEach(groups::add);
                        }
                        default -> {
                            if (field.startsWith("watermark_")) {
                                throw new MallardException(ErrorCode.USER_CONFIG_UNKNOWN_KEY, "unknown key " + key(at + ".additional_parameters." + field)
                                        + "; watermarks take watermark_table, watermark_timestamp_column, watermark_group_columns");
                            }
                            queue.with("variables").put(field, value);
                        }
                    }
                }
            }
        }
    }

    /** A DazzleDuck path: absolute ones must lie in the warehouse and become relative to it. */
    private static String inside(Path warehouse, String path, String key, boolean outsideAllowed) {
        Path given = Path.of(path);
        if (!given.isAbsolute()) {
            return path;
        }
        Path normal = given.normalize();
        if (normal.startsWith(warehouse)) {
            String relative = warehouse.relativize(normal).toString();
            return relative.isEmpty() ? "." : relative;
        }
        if (outsideAllowed) {
            return normal.toString();
        }
        throw new MallardException(ErrorCode.USER_INGEST_PATH_INVALID, key(key) + " " + path + " is outside the warehouse " + warehouse
                + "; ingestion writes only under the warehouse");
    }

    private static Config block(Config dd, String path) {
        if (dd.getValue(path).valueType() != ConfigValueType.OBJECT) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, key(path) + " must be a block { ... }");
        }
        return dd.getConfig(path);
    }

    private static long number(Config config, String block, String field) {
        try {
            return config.getBytes(field);
        } catch (ConfigException e) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, key(block + "." + field) + " must be a whole number: " + e.getMessage(), e);
        }
    }

    private static String key(String path) {
        return ROOT + "." + path;
    }
}
