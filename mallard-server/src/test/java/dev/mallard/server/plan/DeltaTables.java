// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.plan;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Delta Lake tables written by hand for tests: Parquet data files written with DuckDB (key and value; the partition
 * columns only in the directories and the log, as Spark writes them), JSON commits, a Parquet checkpoint and
 * {@code _last_checkpoint}.
 */
public final class DeltaTables {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String SCHEMA = "{\"type\":\"struct\",\"fields\":["
            + "{\"name\":\"key\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}},"
            + "{\"name\":\"value\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}},"
            + "{\"name\":\"dt\",\"type\":\"date\",\"nullable\":true,\"metadata\":{}},"
            + "{\"name\":\"p\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}}]}";

    private DeltaTables() {}

    /**
     * A table partitioned by dt and p over three versions: commit 0 adds three files, commit 1 two more, a checkpoint
     * at version 1 (after which commit 0 is deleted, as log cleanup does), commit 2 removes {@code dt=2024-01-01/p=x}
     * (its file stays on disk) and adds {@code dt=2024-11-01/p=c}. Live: five files, ten rows.
     */
    public static Path example(Connection connection, Path root) throws Exception {
        Path table = root.resolve("delta_table");
        List<String> commit0 = new ArrayList<>();
        commit0.add(protocol(1, List.of()));
        commit0.add(metaData());
        List<String> adds0 = List.of(add(connection, table, "2025-01-01", "a b", 1), add(connection, table, "2025-01-01", "1", 2),
                add(connection, table, "2024-01-01", "x", 3));
        commit0.addAll(adds0);
        commit(table, 0, commit0);
        List<String> adds1 = List.of(add(connection, table, "2024-05-01", "c", 4), add(connection, table, "2025-03-01", "b", 5));
        commit(table, 1, adds1);
        List<String> checkpoint = new ArrayList<>(commit0);
        checkpoint.addAll(adds1);
        checkpoint(connection, table, 1, checkpoint);
        Files.delete(log(table).resolve(String.format("%020d.json", 0)));
        String removed = "dt=2024-01-01/p=x/part-3.parquet";
        commit(table, 2, List.of("{\"remove\":{\"path\":\"" + removed + "\",\"deletionTimestamp\":1,\"dataChange\":true}}",
                add(connection, table, "2024-11-01", "c", 6)));
        return table;
    }

    /** The example table's live rows as {@code key\tvalue\tdt\tp}, sorted. */
    public static List<String> exampleRows() {
        List<String> rows = new ArrayList<>();
        String[][] live = {{"2025-01-01", "a b", "1"}, {"2025-01-01", "1", "2"}, {"2024-05-01", "c", "4"}, {"2025-03-01", "b", "5"}, {"2024-11-01", "c", "6"}};
        for (String[] file : live) {
            for (String row : List.of("k" + file[2] + "a\tv" + file[2] + "a", "k" + file[2] + "b\tv" + file[2] + "b")) {
                rows.add(row + "\t" + file[0] + "\t" + file[1]);
            }
        }
        Collections.sort(rows);
        return rows;
    }

    /** A table of one commit whose protocol asks for {@code readerVersion} and {@code readerFeatures}. */
    public static Path withProtocol(Connection connection, Path root, int readerVersion, List<String> readerFeatures) throws Exception {
        Path table = root.resolve("delta_protocol_" + readerVersion + "_" + String.join("_", readerFeatures));
        commit(table, 0, List.of(protocol(readerVersion, readerFeatures), metaData(), add(connection, table, "2025-01-01", "1", 1)));
        return table;
    }

    /** A table with commits 0 and 2 and no checkpoint: commit 1 is missing. */
    public static Path withAGap(Connection connection, Path root) throws Exception {
        Path table = root.resolve("delta_gap");
        commit(table, 0, List.of(protocol(1, List.of()), metaData(), add(connection, table, "2025-01-01", "1", 1)));
        commit(table, 2, List.of(add(connection, table, "2025-01-01", "2", 2)));
        return table;
    }

    /** A table whose one file has a deletion vector. */
    public static Path withADeletionVector(Connection connection, Path root) throws Exception {
        Path table = root.resolve("delta_dv");
        ObjectNode add = (ObjectNode) JSON.readTree(add(connection, table, "2025-01-01", "1", 1));
        ((ObjectNode) add.path("add")).putObject("deletionVector").put("storageType", "i").put("pathOrInlineDv", "wi5b=000010000siXQKl0rr91000f55c8Xg0@fX");
        commit(table, 0, List.of(protocol(3, List.of("deletionVectors")).replace("\"minWriterVersion\":2", "\"minWriterVersion\":7"), metaData(), add.toString()));
        return table;
    }

    static String protocol(int readerVersion, List<String> readerFeatures) throws Exception {
        ObjectNode action = JSON.createObjectNode();
        ObjectNode protocol = action.putObject("protocol").put("minReaderVersion", readerVersion).put("minWriterVersion", 2);
        if (readerVersion == 3) {
            readerFeatures.forEach(protocol.putArray("readerFeatures")::add);
        }
        return action.toString();
    }

    static String metaData() {
        ObjectNode action = JSON.createObjectNode();
        ObjectNode metaData = action.putObject("metaData").put("id", "46a86799-0000-4000-8000-000000000001");
        metaData.putObject("format").put("provider", "parquet").putObject("options");
        metaData.put("schemaString", SCHEMA);
        metaData.putArray("partitionColumns").add("dt").add("p");
        metaData.putObject("configuration");
        metaData.put("createdTime", 1742105940310L);
        return action.toString();
    }

    /** Writes file {@code n} (rows kNa/vNa and kNb/vNb) under {@code dt=/p=} and answers its add action. */
    static String add(Connection connection, Path table, String dt, String p, int n) throws Exception {
        String relative = "dt=" + dt + "/p=" + p + "/part-" + n + ".parquet";
        Path file = table.resolve(relative);
        HiveTables.write(connection, file, "SELECT 'k" + n + "' || s AS key, 'v" + n + "' || s AS value FROM (VALUES ('a'), ('b')) t(s)");
        ObjectNode action = JSON.createObjectNode();
        ObjectNode add = action.putObject("add").put("path", relative.replace(" ", "%20"));
        add.putObject("partitionValues").put("dt", dt).put("p", p);
        add.put("size", Files.size(file)).put("modificationTime", 1742105940762L + n).put("dataChange", true);
        return action.toString();
    }

    static void commit(Path table, long version, List<String> actions) throws Exception {
        Files.createDirectories(log(table));
        Files.writeString(log(table).resolve(String.format("%020d.json", version)), String.join("\n", actions) + "\n", StandardCharsets.UTF_8);
    }

    /** A checkpoint of these actions (protocol, metaData, add) as Parquet, with {@code _last_checkpoint} naming it. */
    static void checkpoint(Connection connection, Path table, long version, List<String> actions) throws Exception {
        Path json = table.resolve("checkpoint-source.json");
        Files.writeString(json, String.join("\n", actions) + "\n", StandardCharsets.UTF_8);
        Path parquet = log(table).resolve(String.format("%020d.checkpoint.parquet", version));
        String columns = "{protocol: 'STRUCT(minReaderVersion INTEGER, minWriterVersion INTEGER)', "
                + "metaData: 'STRUCT(id VARCHAR, format STRUCT(provider VARCHAR, options MAP(VARCHAR, VARCHAR)), schemaString VARCHAR, "
                + "partitionColumns VARCHAR[], configuration MAP(VARCHAR, VARCHAR), createdTime BIGINT)', "
                + "add: 'STRUCT(path VARCHAR, partitionValues MAP(VARCHAR, VARCHAR), size BIGINT, modificationTime BIGINT, dataChange BOOLEAN)', "
                + "remove: 'STRUCT(path VARCHAR, deletionTimestamp BIGINT, dataChange BOOLEAN)'}";
        try (Statement statement = connection.createStatement()) {
            statement.execute("COPY (SELECT * FROM read_json('" + json + "', columns = " + columns + ", format = 'newline_delimited')) TO '"
                    + parquet + "' (FORMAT parquet)");
        }
        Files.delete(json);
        Files.writeString(log(table).resolve("_last_checkpoint"), "{\"version\":" + version + ",\"size\":" + actions.size() + "}\n");
    }

    private static Path log(Path table) {
        return table.resolve("_delta_log");
    }
}
