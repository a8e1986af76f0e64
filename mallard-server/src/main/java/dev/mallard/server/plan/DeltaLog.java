// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.plan;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlText;
import java.net.URI;
import java.net.URISyntaxException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Delta Lake table's live files, read from its transaction log ({@code _delta_log/}): the newest checkpoint
 * ({@code _last_checkpoint}, else the newest complete one listed; its Parquet read with DuckDB) and the JSON commits
 * after it, applied in order ({@code add} and {@code remove} by path; the last {@code protocol} and {@code metaData}).
 * Everything is read through the session's DuckDB connection ({@code read_blob}, {@code read_text}, {@code read_parquet}),
 * so the server's file access rules apply to the log as to the data. What this reader cannot read exactly is refused
 * (fail closed): a reader protocol or feature it does not implement (column mapping, deletion vectors, v2
 * checkpoints, ...), a partition column type it cannot name in DuckDB, a file whose directories do not carry its
 * partition values as Hive {@code key=value}, a gap in the commits.
 */
final class DeltaLog {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern COMMIT = Pattern.compile("(\\d{20})\\.json");
    private static final Pattern CHECKPOINT = Pattern.compile("(\\d{20})\\.checkpoint(?:\\.(\\d{10})\\.(\\d{10}))?\\.parquet");
    /** Reader features that change nothing about which rows a file holds. */
    private static final Set<String> HARMLESS_FEATURES = Set.of("timestampNtz", "vacuumProtocolCheck");
    private static final Map<String, String> PRIMITIVE_TYPES = Map.ofEntries(Map.entry("string", "VARCHAR"), Map.entry("long", "BIGINT"),
            Map.entry("integer", "INTEGER"), Map.entry("short", "SMALLINT"), Map.entry("byte", "TINYINT"), Map.entry("float", "FLOAT"),
            Map.entry("double", "DOUBLE"), Map.entry("boolean", "BOOLEAN"), Map.entry("date", "DATE"), Map.entry("timestamp_ntz", "TIMESTAMP"),
            Map.entry("binary", "BLOB"));
    private static final Pattern DECIMAL = Pattern.compile("decimal\\(\\s*(\\d+)\\s*,\\s*(\\d+)\\s*\\)");

    /**
     * The table at one version.
     *
     * @param files the live data files, by the path DuckDB reads them at, in the order they were added
     * @param partitionTypes the partition columns (by the table's name) and their DuckDB types, in the table's order
     */
    record Snapshot(long version, List<ParquetSplits.DataFile> files, Map<String, String> partitionTypes) {
        Snapshot {
            files = List.copyOf(files);
            partitionTypes = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(partitionTypes));
        }
    }

    private DeltaLog() {}

    /** The newest snapshot of the table at {@code root} (a directory DuckDB can read). */
    static Snapshot read(Connection connection, String root) throws SQLException {
        requireNonNull(root, "root is null");
        String base = root.endsWith("/") ? root.substring(0, root.length() - 1) : root;
        String log = base + "/_delta_log/";
        TreeMap<Long, String> commits = new TreeMap<>();
        Map<Long, Map<Integer, String>> checkpointParts = new HashMap<>();
        Map<Long, Integer> checkpointCounts = new HashMap<>();
        boolean lastCheckpoint = false;
        // Listed as the Parquet planning lists files (read_blob, names only), which the server's file access rules admit.
        try (PreparedStatement list = connection.prepareStatement("SELECT filename FROM read_blob(" + SqlText.literal(log + "*") + ")")) {
            try (ResultSet rs = list.executeQuery()) {
                while (rs.next()) {
                    String file = rs.getString(1);
                    String name = file.substring(file.lastIndexOf('/') + 1);
                    Matcher commit = COMMIT.matcher(name);
                    Matcher checkpoint = CHECKPOINT.matcher(name);
                    if (commit.matches()) {
                        commits.put(Long.parseLong(commit.group(1)), file);
                    } else if (checkpoint.matches()) {
                        long version = Long.parseLong(checkpoint.group(1));
                        int part = checkpoint.group(2) == null ? 1 : Integer.parseInt(checkpoint.group(2));
                        int parts = checkpoint.group(3) == null ? 1 : Integer.parseInt(checkpoint.group(3));
                        checkpointParts.computeIfAbsent(version, v -> new TreeMap<>()).put(part, file);
                        checkpointCounts.put(version, parts);
                    } else if (name.equals("_last_checkpoint")) {
                        lastCheckpoint = true;
                    }
                }
            }
        }
        if (commits.isEmpty() && checkpointParts.isEmpty()) {
            throw invalid(root, "it has no _delta_log/ commits; give read_delta the directory that holds _delta_log");
        }
        long checkpoint = -1;
        if (lastCheckpoint) {
            JsonNode hint = parse(root, text(connection, log + "_last_checkpoint").trim());
            checkpoint = hint.path("version").asLong(-1);
            if (!complete(checkpointParts, checkpointCounts, checkpoint, hint.path("parts").asInt(1))) {
                throw invalid(root, "_last_checkpoint names version " + checkpoint + " whose checkpoint files are not all there");
            }
        } else {
            for (long version : checkpointParts.keySet()) {
                if (version > checkpoint && complete(checkpointParts, checkpointCounts, version, checkpointCounts.get(version))) {
                    checkpoint = version;
                }
            }
        }
        State state = new State(root);
        if (checkpoint >= 0) {
            List<String> parts = new ArrayList<>(checkpointParts.get(checkpoint).values());
            StringBuilder list = new StringBuilder("SELECT to_json(t)::VARCHAR FROM read_parquet([");
            for (int i = 0; i < parts.size(); i++) {
                list.append(i == 0 ? "" : ", ").append(SqlText.literal(parts.get(i)));
            }
            try (PreparedStatement read = connection.prepareStatement(list.append("]) t").toString()); ResultSet rs = read.executeQuery()) {
                while (rs.next()) {
                    state.apply(parse(root, rs.getString(1)));
                }
            }
        }
        long version = checkpoint;
        for (Map.Entry<Long, String> commit : commits.tailMap(checkpoint, false).entrySet()) {
            if (commit.getKey() != version + 1) {
                throw invalid(root, "commit " + (version + 1) + " is missing before " + commit.getKey()
                        + (checkpoint < 0 ? " and no checkpoint covers it" : ""));
            }
            for (String line : text(connection, commit.getValue()).split("\n")) {
                if (!line.isBlank()) {
                    state.apply(parse(root, line));
                }
            }
            version = commit.getKey();
        }
        return state.snapshot(base, version);
    }

    private static boolean complete(Map<Long, Map<Integer, String>> parts, Map<Long, Integer> counts, long version, int expected) {
        Map<Integer, String> found = parts.get(version);
        if (found == null || !counts.get(version).equals(expected)) {
            return false;
        }
        for (int part = 1; part <= expected; part++) {
            if (!found.containsKey(part)) {
                return false;
            }
        }
        return true;
    }

    /** The log replayed so far. */
    private static final class State {
        private final String root;
        private final LinkedHashMap<String, JsonNode> added = new LinkedHashMap<>();
        private JsonNode protocol;
        private JsonNode metaData;

        State(String root) {
            this.root = root;
        }

        void apply(JsonNode action) {
            if (present(action.path("protocol"))) {
                protocol = action.path("protocol");
            }
            if (present(action.path("metaData"))) {
                metaData = action.path("metaData");
            }
            if (present(action.path("add"))) {
                JsonNode add = action.path("add");
                if (present(add.path("deletionVector"))) {
                    throw unsupported(root, "the file " + add.path("path").asText() + " has a deletion vector");
                }
                added.put(add.path("path").asText(), add);
            }
            if (present(action.path("remove"))) {
                added.remove(action.path("remove").path("path").asText());
            }
        }

        Snapshot snapshot(String base, long version) {
            if (protocol == null || metaData == null) {
                throw invalid(root, "its log has no " + (protocol == null ? "protocol" : "metaData") + " action");
            }
            checkProtocol();
            String provider = metaData.path("format").path("provider").asText("parquet");
            if (!provider.equalsIgnoreCase("parquet")) {
                throw unsupported(root, "its files are " + provider + ", not Parquet");
            }
            Map<String, String> types = partitionTypes();
            List<ParquetSplits.DataFile> files = new ArrayList<>();
            for (JsonNode add : added.values()) {
                String path = filePath(base, add.path("path").asText());
                checkPartitionDirectories(path, add.path("partitionValues"), types.keySet());
                files.add(new ParquetSplits.DataFile(path, add.path("size").asLong()));
            }
            return new Snapshot(version, files, types);
        }

        private void checkProtocol() {
            int reader = protocol.path("minReaderVersion").asInt(-1);
            String mapping = metaData.path("configuration").path("delta.columnMapping.mode").asText("none");
            if (reader < 1 || reader > 3) {
                throw unsupported(root, "its minReaderVersion is " + reader + " (this reader implements 1 to 3)");
            }
            if (reader >= 2 && !mapping.equals("none")) {
                throw unsupported(root, "it uses column mapping (delta.columnMapping.mode = " + mapping + ")");
            }
            if (reader == 3) {
                for (JsonNode feature : protocol.path("readerFeatures")) {
                    String name = feature.asText();
                    if (!HARMLESS_FEATURES.contains(name) && !(name.equals("columnMapping") && mapping.equals("none"))) {
                        throw unsupported(root, "it needs the reader feature " + name);
                    }
                }
            }
        }

        private Map<String, String> partitionTypes() {
            JsonNode schema;
            try {
                schema = JSON.readTree(metaData.path("schemaString").asText("{}"));
            } catch (JsonProcessingException e) {
                throw invalid(root, "its metaData.schemaString is not JSON");
            }
            Map<String, JsonNode> fields = new HashMap<>();
            schema.path("fields").forEach(field -> fields.put(field.path("name").asText(), field.path("type")));
            Map<String, String> types = new LinkedHashMap<>();
            for (JsonNode column : metaData.path("partitionColumns")) {
                String name = column.asText();
                JsonNode type = fields.get(name);
                if (type == null) {
                    throw invalid(root, "its partition column " + name + " is not in its schema");
                }
                types.put(name, duckDbType(type.asText("")).orElseThrow(
                        () -> unsupported(root, "its partition column " + name + " has the type " + type + ", which this reader does not map")));
            }
            return types;
        }

        /** A file's directories must be its Hive partition values: the split reads them from there. */
        private void checkPartitionDirectories(String path, JsonNode values, Set<String> columns) {
            Map<String, String> inPath = HivePruning.partitions(path);
            Map<String, String> expected = new HashMap<>();
            for (String column : columns) {
                JsonNode value = values.path(column);
                expected.put(column.toLowerCase(Locale.ROOT), value.isTextual() && !value.asText().isEmpty() ? value.asText() : null);
            }
            if (!inPath.equals(expected)) {
                throw unsupported(root, "the file " + path + " is not under directories key=value of exactly its partition values " + expected
                        + "; a split reads the partition values from the path");
            }
        }
    }

    private static java.util.Optional<String> duckDbType(String deltaType) {
        Matcher decimal = DECIMAL.matcher(deltaType);
        if (decimal.matches()) {
            return java.util.Optional.of("DECIMAL(" + decimal.group(1) + ", " + decimal.group(2) + ")");
        }
        return java.util.Optional.ofNullable(PRIMITIVE_TYPES.get(deltaType));
    }

    /** A log path is a URI relative to the table (percent-encoded), or an absolute {@code file:} one. */
    private static String filePath(String base, String path) {
        try {
            URI uri = new URI(path);
            if (uri.getScheme() == null) {
                return base + "/" + uri.getPath();
            }
            if (uri.getScheme().equals("file")) {
                return uri.getPath();
            }
        } catch (URISyntaxException e) {
            throw invalid(base, "the file path " + path + " is not a URI");
        }
        throw unsupported(base, "the file " + path + " is not a local file");
    }

    private static boolean present(JsonNode node) {
        return node.isObject();
    }

    private static String text(Connection connection, String file) throws SQLException {
        try (PreparedStatement read = connection.prepareStatement("SELECT content FROM read_text(" + SqlText.literal(file) + ")")) {
            try (ResultSet rs = read.executeQuery()) {
                return rs.next() ? rs.getString(1) : "";
            }
        }
    }

    private static JsonNode parse(String root, String json) {
        try {
            return JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw invalid(root, "a line of its log is not JSON");
        }
    }

    private static MallardException invalid(String root, String why) {
        return new MallardException(ErrorCode.USER_DELTA_LOG_INVALID, "the Delta table " + root + " cannot be read: " + why);
    }

    private static MallardException unsupported(String root, String why) {
        return new MallardException(ErrorCode.USER_DELTA_UNSUPPORTED, "the Delta table " + root + " is not supported: " + why
                + "; read its files with read_parquet, or rewrite the table without that feature");
    }
}
