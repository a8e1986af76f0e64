// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.plan;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlText;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * DazzleDuck's {@code read_delta('<table>')}, found on the parse tree and replaced by a {@code read_parquet} call over
 * the table's live files (its {@link DeltaLog}), partition columns typed as the table's schema types them
 * ({@code hive_types}). The rewritten query is then planned as any Parquet query, so Hive pruning decides which files
 * a predicate leaves out; the log's partition values are those of the paths ({@link DeltaLog} refuses a file where they
 * differ).
 */
final class DeltaCall {
    private static final String READ_DELTA = "read_delta";

    private DeltaCall() {}

    /** The query with its {@code read_delta} call read as files, and those files with their logged sizes. */
    record Expanded(String sql, List<ParquetSplits.DataFile> files) {
        Expanded {
            requireNonNull(sql, "sql is null");
            files = List.copyOf(files);
        }
    }

    /** Empty when the parsed text calls no {@code read_delta}. */
    static Optional<Expanded> expand(Connection connection, JsonNode parsed) throws SQLException {
        List<ObjectNode> calls = new ArrayList<>();
        find(parsed, calls);
        if (calls.isEmpty()) {
            return Optional.empty();
        }
        if (calls.size() > 1 || parsed.path("statements").size() != 1) {
            throw new MallardException(ErrorCode.USER_DELTA_UNSUPPORTED, "a planned query reads one read_delta table at most, in one statement; "
                    + "plan each table on its own");
        }
        ObjectNode call = (ObjectNode) calls.getFirst().path("function");
        JsonNode arguments = call.has("arguments") ? call.path("arguments") : call.path("children");
        JsonNode first = arguments.size() == 1 ? arguments.get(0) : null;
        if (first != null && first.has("expression")) {
            first = first.path("expression");
        }
        if (first == null || !first.path("class").asText().equals("CONSTANT") || !first.path("literal").path("kind").asText().equals("STRING")) {
            throw new MallardException(ErrorCode.USER_DELTA_UNSUPPORTED, "read_delta takes one argument, the table's directory as a string, "
                    + "as read_delta('warehouse/delta_table')");
        }
        DeltaLog.Snapshot snapshot = DeltaLog.read(connection, first.path("literal").path("text").asText());
        if (snapshot.files().isEmpty()) {
            throw new MallardException(ErrorCode.USER_DELTA_UNSUPPORTED, "the Delta table " + first.path("literal").path("text").asText()
                    + " has no live data files at version " + snapshot.version() + "; there is nothing to plan");
        }
        StringBuilder replacement = new StringBuilder("SELECT * FROM read_parquet([");
        for (int i = 0; i < snapshot.files().size(); i++) {
            replacement.append(i == 0 ? "" : ", ").append(SqlText.literal(snapshot.files().get(i).path()));
        }
        replacement.append("], hive_partitioning = ").append(!snapshot.partitionTypes().isEmpty());
        if (!snapshot.partitionTypes().isEmpty()) {
            replacement.append(", hive_types = {");
            int i = 0;
            for (Map.Entry<String, String> type : snapshot.partitionTypes().entrySet()) {
                replacement.append(i++ == 0 ? "" : ", ").append(SqlText.literal(type.getKey())).append(": ")
                        .append(type.getValue());
            }
            replacement.append('}');
        }
        JsonNode readParquet = ParquetSplits.serialize(connection, replacement.append(')').toString())
                .path("statements").get(0).path("node").path("from_table").path("function");
        JsonNode copy = parsed.path("statements").get(0).deepCopy();
        List<ObjectNode> inCopy = new ArrayList<>();
        find(copy, inCopy);
        inCopy.getFirst().set("function", readParquet);
        return Optional.of(new Expanded(ParquetSplits.deserialize(connection, copy), snapshot.files()));
    }

    private static void find(JsonNode node, List<ObjectNode> calls) {
        if (node.isObject() && node.path("type").asText("").equals("TABLE_FUNCTION")
                && node.path("function").path("function_name").asText("").toLowerCase(Locale.ROOT).equals(READ_DELTA)) {
            calls.add((ObjectNode) node);
        }
        for (JsonNode child : node) {
            find(child, calls);
        }
    }
}
