// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.plan;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Splits one query over Parquet files into queries over disjoint groups of its files, read from DuckDB's parse tree.
 * A query splits when the union of its rows over the groups is its rows: one {@code read_parquet} (or
 * {@code parquet_scan}) call and no other table, reached through SELECTs without aggregates, windows, DISTINCT,
 * LIMIT, GROUP BY, HAVING, QUALIFY, SAMPLE, CTEs or subquery expressions, and through {@code UNION ALL [BY NAME]}
 * whose other branches are {@code WHERE false}. Any other query is one split, the query itself (fail closed).
 */
final class ParquetSplits {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ParquetSplits() {}

    /** One group of files and the query over them; {@code files} is empty for the whole query, unsplit. */
    record Planned(String sql, long size, List<String> files) {
        Planned {
            requireNonNull(sql, "sql is null");
            files = List.copyOf(files);
        }
    }

    /**
     * @param splitSize the bytes a split reads at most before the next starts (a split holds at least one file, as DazzleDuck's);
     *     0 or less for one split, the whole query (its {@code read_delta} call, if any, read as the table's live files)
     */
    static List<Planned> plan(Connection connection, String sql, long splitSize) throws SQLException {
        requireNonNull(sql, "sql is null");
        JsonNode parsed = serialize(connection, sql);
        Optional<DeltaCall.Expanded> delta = DeltaCall.expand(connection, parsed);
        if (delta.isPresent()) {
            sql = delta.get().sql();
            parsed = serialize(connection, sql);
            if (splitSize <= 0) {
                return List.of(new Planned(sql, -1, List.of()));
            }
        } else if (splitSize <= 0) {
            return List.of(new Planned(sql, -1, List.of()));
        }
        Optional<ParquetQuery> query = parsed.path("error").asBoolean(true) || parsed.path("statements").size() != 1
                ? Optional.empty() : ParquetQuery.of(parsed.path("statements").get(0), new FunctionKinds(connection));
        if (query.isEmpty()) {
            return List.of(new Planned(sql, -1, List.of()));
        }
        List<DataFile> files = delta.isPresent() ? delta.get().files() : query.get().files(connection);
        if (files.isEmpty()) {
            // DuckDB answers such a query with its own error; the whole query keeps that answer.
            return List.of(new Planned(sql, -1, List.of()));
        }
        List<DataFile> kept = HivePruning.prune(connection, query.get(), files);
        java.util.Map<String, String> pinned = query.get().hivePartitioning() && !query.get().hiveTypes()
                ? HivePruning.partitionTypes(connection, query.get(), files) : java.util.Map.of();
        List<Planned> splits = new ArrayList<>();
        List<DataFile> current = new ArrayList<>();
        long size = 0;
        for (DataFile file : kept) {
            current.add(file);
            size += file.size();
            if (size > splitSize) {
                splits.add(split(connection, query.get(), current, size, pinned));
                current = new ArrayList<>();
                size = 0;
            }
        }
        if (!current.isEmpty()) {
            splits.add(split(connection, query.get(), current, size, pinned));
        }
        return List.copyOf(splits);
    }

    private static Planned split(Connection connection, ParquetQuery query, List<DataFile> files, long size, java.util.Map<String, String> pinned)
            throws SQLException {
        List<String> paths = files.stream().map(DataFile::path).toList();
        return new Planned(query.overFiles(connection, paths, pinned), size, paths);
    }

    static JsonNode serialize(Connection connection, String sql) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement("SELECT json_serialize_sql(?::VARCHAR)")) {
            statement.setString(1, sql);
            try (ResultSet rs = statement.executeQuery()) {
                rs.next();
                return JSON.readTree(rs.getString(1));
            }
        } catch (JsonProcessingException e) {
            throw new MallardException(ErrorCode.USER_SQL_TOO_DEEP, "the query's parse tree is too deep to plan; flatten it or plan without x-dd-split-size");
        }
    }

    /** The SQL text of one statement's tree. */
    static String deserialize(Connection connection, JsonNode statement) throws SQLException {
        ObjectNode wrapper = JSON.createObjectNode();
        wrapper.put("error", false);
        ArrayNode statements = wrapper.putArray("statements");
        statements.add(statement);
        try (PreparedStatement prepared = connection.prepareStatement("SELECT json_deserialize_sql(?::JSON)")) {
            prepared.setString(1, wrapper.toString());
            try (ResultSet rs = prepared.executeQuery()) {
                rs.next();
                return rs.getString(1);
            }
        }
    }

    /** One file a query reads and its size in bytes. */
    record DataFile(String path, long size) {
        DataFile {
            requireNonNull(path, "path is null");
        }
    }
}
