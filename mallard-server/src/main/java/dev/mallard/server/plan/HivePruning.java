// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.plan;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.core.sql.SqlText;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Drops the files whose Hive partition values ({@code .../dt=2025-01-01/p=1/file.parquet}) make a conjunct of a WHERE
 * clause on the way down to the Parquet call false or NULL: no row of such a file could pass it. A conjunct is used
 * only when it reads nothing but partition columns through constants, casts, comparisons, boolean logic and
 * consistent scalar functions; DuckDB itself evaluates it on each file's values, typed as DuckDB types the column at
 * that WHERE. Anything else keeps every file (fail closed): a conjunct naming another column, a value that does not
 * cast, {@code NULL} or {@code __HIVE_DEFAULT_PARTITION__} values, {@code hive_partitioning = false}.
 */
final class HivePruning {
    private static final Set<String> DECIDABLE = Set.of("COLUMN_REF", "CONSTANT", "CAST", "TYPE", "COMPARISON", "CONJUNCTION", "OPERATOR",
            "FUNCTION", "CASE", "BETWEEN");

    private HivePruning() {}

    static List<ParquetSplits.DataFile> prune(Connection connection, ParquetQuery query, List<ParquetSplits.DataFile> files) throws SQLException {
        if (!query.hivePartitioning()) {
            return files;
        }
        List<Map<String, String>> values = files.stream().map(file -> partitions(file.path())).toList();
        Set<String> keys = new HashSet<>();
        values.forEach(map -> keys.addAll(map.keySet()));
        if (keys.isEmpty()) {
            return files;
        }
        Map<String, String> callTypes = null;
        Set<Integer> kept = null;
        for (ParquetQuery.Level level : query.levels()) {
            if (!level.passesColumns()) {
                continue;
            }
            List<JsonNode> usable = new ArrayList<>();
            for (JsonNode conjunct : conjuncts(level.select().path("where_clause"))) {
                if (decidable(conjunct, keys, level.from().path("alias").asText(""), query.kinds())) {
                    usable.add(conjunct);
                }
            }
            if (usable.isEmpty()) {
                continue;
            }
            try {
                if (callTypes == null) {
                    callTypes = describe(connection, query.callFrom());
                }
                Map<String, String> levelTypes = describe(connection, level.from());
                Set<Integer> passing = passing(connection, usable, keys, values, callTypes, levelTypes);
                if (kept == null) {
                    kept = passing;
                } else {
                    kept.retainAll(passing);
                }
            } catch (SQLException e) {
                // DuckDB could not decide these conjuncts on the partition values: they prune nothing.
            }
        }
        if (kept == null) {
            return files;
        }
        List<ParquetSplits.DataFile> out = new ArrayList<>();
        for (int i = 0; i < files.size(); i++) {
            if (kept.contains(i)) {
                out.add(files.get(i));
            }
        }
        return out;
    }

    /** The types DuckDB gives the partition columns over all the files, by the name the paths give them. */
    static Map<String, String> partitionTypes(Connection connection, ParquetQuery query, List<ParquetSplits.DataFile> files) throws SQLException {
        Set<String> keys = new java.util.TreeSet<>();
        files.forEach(file -> keys.addAll(partitions(file.path()).keySet()));
        if (keys.isEmpty()) {
            return Map.of();
        }
        Map<String, String> described = describe(connection, query.callFrom());
        Map<String, String> types = new LinkedHashMap<>();
        for (String key : keys) {
            if (described.containsKey(key)) {
                types.put(key, described.get(key));
            }
        }
        return types;
    }

    /** The indexes of the files some row of which could pass every conjunct (or whose values do not cast). */
    private static Set<Integer> passing(Connection connection, List<JsonNode> conjuncts, Set<String> keys, List<Map<String, String>> values,
            Map<String, String> callTypes, Map<String, String> levelTypes) throws SQLException {
        List<String> columns = new ArrayList<>();
        for (String key : keys) {
            if (callTypes.containsKey(key) && levelTypes.containsKey(key)) {
                columns.add(key);
            }
        }
        for (JsonNode conjunct : conjuncts) {
            if (!columnsOf(conjunct).stream().allMatch(columns::contains)) {
                throw new SQLException("a conjunct names a partition column the query does not read");
            }
        }
        StringBuilder raw = new StringBuilder("WITH __raw(__i");
        columns.forEach(column -> raw.append(", ").append(SqlText.identifier("r_" + column)));
        raw.append(") AS (VALUES ");
        for (int i = 0; i < values.size(); i++) {
            raw.append(i == 0 ? "" : ", ").append('(').append(i);
            for (String column : columns) {
                String value = values.get(i).get(column);
                raw.append(", ").append(value == null ? "NULL::VARCHAR" : SqlText.literal(value));
            }
            raw.append(')');
        }
        raw.append("), __files AS (SELECT __i, (true");
        for (String column : columns) {
            raw.append(" AND TRY_CAST(").append(SqlText.identifier("r_" + column)).append(" AS ").append(callTypes.get(column)).append(") IS NOT NULL");
        }
        raw.append(") AS __ok");
        for (String column : columns) {
            raw.append(", CAST(TRY_CAST(").append(SqlText.identifier("r_" + column)).append(" AS ").append(callTypes.get(column)).append(") AS ")
                    .append(levelTypes.get(column)).append(") AS ").append(SqlText.identifier(column));
        }
        raw.append(" FROM __raw) SELECT __i FROM __files WHERE NOT __ok UNION ALL ");
        JsonNode template = ParquetSplits.serialize(connection, "SELECT __i FROM __files WHERE true AND true").path("statements").get(0);
        ObjectNode where = (ObjectNode) template.path("node").path("where_clause");
        ArrayNode children = where.putArray("children");
        JsonNode alwaysTrue = ParquetSplits.serialize(connection, "SELECT true").path("statements").get(0).path("node").path("select_list").get(0);
        for (JsonNode conjunct : conjuncts) {
            children.add(unqualified(conjunct.deepCopy()));
        }
        children.add(alwaysTrue);
        raw.append(ParquetSplits.deserialize(connection, template));
        Set<Integer> passing = new HashSet<>();
        try (Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery(raw.toString())) {
            while (rs.next()) {
                passing.add(rs.getInt(1));
            }
        }
        return passing;
    }

    /** The column types of {@code SELECT * FROM <from>}, by lower-case name. */
    static Map<String, String> describeTypes(Connection connection, ObjectNode from) throws SQLException {
        return describe(connection, from);
    }

    /** The column types of {@code SELECT * FROM <from>}, by lower-case name. */
    private static Map<String, String> describe(Connection connection, ObjectNode from) throws SQLException {
        JsonNode template = ParquetSplits.serialize(connection, "SELECT * FROM __from").path("statements").get(0).deepCopy();
        ((ObjectNode) template.path("node")).set("from_table", from.deepCopy());
        Map<String, String> types = new LinkedHashMap<>();
        try (Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery("DESCRIBE " + ParquetSplits.deserialize(connection, template))) {
            while (rs.next()) {
                types.putIfAbsent(rs.getString(1).toLowerCase(Locale.ROOT), rs.getString(2));
            }
        }
        return types;
    }

    /** The conjuncts of a WHERE clause (its AND, flattened). */
    static List<JsonNode> conjuncts(JsonNode where) {
        List<JsonNode> out = new ArrayList<>();
        if (ParquetQuery.isNull(where)) {
            return out;
        }
        if (where.path("class").asText().equals("CONJUNCTION") && where.path("type").asText().equals("CONJUNCTION_AND")) {
            for (JsonNode child : where.path("children")) {
                out.addAll(conjuncts(child));
            }
        } else {
            out.add(where);
        }
        return out;
    }

    /** Whether DuckDB can decide a conjunct from the partition values alone. */
    private static boolean decidable(JsonNode node, Set<String> keys, String alias, FunctionKinds kinds) throws SQLException {
        if (node.isArray()) {
            for (JsonNode child : node) {
                if (!decidable(child, keys, alias, kinds)) {
                    return false;
                }
            }
            return true;
        }
        if (!node.isObject()) {
            return true;
        }
        if (node.has("class")) {
            String kind = node.path("class").asText();
            if (!DECIDABLE.contains(kind)) {
                return false;
            }
            if (kind.equals("COLUMN_REF")) {
                JsonNode names = node.path("column_names");
                String column = names.get(names.size() - 1).asText().toLowerCase(Locale.ROOT);
                boolean qualifiedByFrom = names.size() == 2 && !alias.isEmpty() && names.get(0).asText().equalsIgnoreCase(alias);
                return keys.contains(column) && (names.size() == 1 || qualifiedByFrom);
            }
            if (kind.equals("FUNCTION") && kinds.of(node.path("function_name").asText()) != FunctionKinds.Kind.CONSISTENT_SCALAR) {
                return false;
            }
        }
        for (JsonNode child : node) {
            if (!decidable(child, keys, alias, kinds)) {
                return false;
            }
        }
        return true;
    }

    private static Set<String> columnsOf(JsonNode node) {
        Set<String> columns = new HashSet<>();
        if (node.isObject() && node.path("class").asText().equals("COLUMN_REF")) {
            JsonNode names = node.path("column_names");
            columns.add(names.get(names.size() - 1).asText().toLowerCase(Locale.ROOT));
        }
        for (JsonNode child : node) {
            columns.addAll(columnsOf(child));
        }
        return columns;
    }

    private static JsonNode unqualified(JsonNode node) {
        if (node.isObject() && node.path("class").asText().equals("COLUMN_REF")) {
            ArrayNode names = (ArrayNode) node.path("column_names");
            String last = names.get(names.size() - 1).asText().toLowerCase(Locale.ROOT);
            names.removeAll();
            names.add(last);
        }
        for (JsonNode child : node) {
            unqualified(child);
        }
        return node;
    }

    /**
     * The Hive partition values of a path, as DuckDB reads them: each directory {@code key=value}, the value
     * percent-decoded; a key given twice, {@code NULL} or {@code __HIVE_DEFAULT_PARTITION__} has no value (the file is kept).
     */
    static Map<String, String> partitions(String path) {
        Map<String, String> values = new LinkedHashMap<>();
        Set<String> twice = new HashSet<>();
        String[] segments = path.split("/");
        for (int i = 0; i < segments.length - 1; i++) {
            int equals = segments[i].indexOf('=');
            if (equals <= 0) {
                continue;
            }
            String key = segments[i].substring(0, equals).toLowerCase(Locale.ROOT);
            Optional<String> value = decoded(segments[i].substring(equals + 1));
            if (values.containsKey(key) || twice.contains(key)) {
                twice.add(key);
                values.put(key, null);
                continue;
            }
            values.put(key, value.filter(v -> !v.equals("NULL") && !v.equals("__HIVE_DEFAULT_PARTITION__")).orElse(null));
        }
        return values;
    }

    private static Optional<String> decoded(String value) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '%') {
                if (i + 2 >= value.length()) {
                    return Optional.empty();
                }
                try {
                    bytes.write(Integer.parseInt(value.substring(i + 1, i + 3), 16));
                } catch (NumberFormatException e) {
                    return Optional.empty();
                }
                i += 2;
            } else {
                byte[] encoded = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
                bytes.write(encoded, 0, encoded.length);
            }
        }
        return Optional.of(bytes.toString(StandardCharsets.UTF_8));
    }
}
