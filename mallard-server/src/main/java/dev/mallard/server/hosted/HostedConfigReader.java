// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.hosted;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads the hosted keys of a server configuration: {@code pipelines} (pipeline files, relative to the configuration's
 * directory) and {@code pipeline_admins} (usernames). DazzleDuck's HOCON gives the same keys under
 * {@code dazzleduck_server}.
 */
public final class HostedConfigReader {
    public static final String PIPELINES = "pipelines";
    public static final String PIPELINE_ADMINS = "pipeline_admins";

    private HostedConfigReader() {}

    /** The hosted keys of Mallard's configuration tree (the schema checked their types); relative paths against {@code base}. */
    public static HostedConfig read(JsonNode root, Path base) {
        List<Path> pipelines = new ArrayList<>();
        for (String file : strings(root.path(PIPELINES))) {
            pipelines.add(base.resolve(file).normalize());
        }
        return new HostedConfig(pipelines, strings(root.path(PIPELINE_ADMINS)));
    }

    /** Copies DazzleDuck's {@code dazzleduck_server.pipelines} and {@code pipeline_admins} into Mallard's tree. */
    public static void copyHocon(Config dazzleDuck, ObjectNode root) {
        for (String key : List.of(PIPELINES, PIPELINE_ADMINS)) {
            if (!dazzleDuck.hasPath(key)) {
                continue;
            }
            List<String> values;
            try {
                values = dazzleDuck.getStringList(key);
            } catch (ConfigException e) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "dazzleduck_server." + key + " must be a list of strings: " + e.getMessage(), e);
            }
            ArrayNode array = root.putArray(key);
            values.forEach(array::add);
        }
    }

    /** A list of strings; one string (as {@code --conf pipelines=a.yml} gives) is a list of one. */
    private static List<String> strings(JsonNode node) {
        if (node.isTextual()) {
            return List.of(node.asText());
        }
        List<String> values = new ArrayList<>();
        node.forEach(value -> values.add(value.asText()));
        return values;
    }
}
