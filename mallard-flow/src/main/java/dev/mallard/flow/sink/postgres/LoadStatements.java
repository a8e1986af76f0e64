// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink.postgres;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.sql.SqlText;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The SQL of one load: a staging table shaped like the destination's columns, the COPY into it, and the one
 * statement that moves the staged rows into the destination. In upsert mode the staged rows are first reduced to
 * the last row per key (in batch order), as if each had been applied in turn, so a batch that repeats a key
 * neither fails ("ON CONFLICT DO UPDATE command cannot affect row a second time") nor depends on chance. Batch
 * order is the staged rows' physical order ({@code ctid}): one COPY fills the empty table front to back, and
 * nothing updates or deletes in it. (A numbering column would cost a sequence call per row: COPY ran 3-5 times
 * slower with one.) A row whose values equal the stored ones is left alone, so a replayed batch writes nothing.
 *
 * <p>The staging table lives as long as the session and is emptied by every commit ({@code ON COMMIT DELETE
 * ROWS}): creating and dropping one per batch wrote catalog rows (and their WAL) every time. The sink empties it
 * with {@link #emptyStage()} whenever it may hold rows, so a COPY always starts on an empty table.
 *
 * <p>Append mode into a table (not a view) skips the staging table: {@link #copyIntoTable()} COPYs into the
 * destination itself, in the same transaction, so a batch is still all in or all out.
 */
record LoadStatements(PostgresTable table, List<String> columns, PostgresSink.Mode mode, List<String> key) {
    static final String STAGE = "mallard_stage";
    private static final String TARGET = "mallard_target";

    LoadStatements {
        requireNonNull(table, "table is null");
        columns = List.copyOf(columns);
        requireNonNull(mode, "mode is null");
        key = List.copyOf(key);
    }

    /** Takes the destination's types for the batch's columns, and none of its constraints; emptied by each commit. */
    String createStage() {
        return "CREATE TEMP TABLE " + STAGE + " ON COMMIT DELETE ROWS AS SELECT " + list(columns) + " FROM " + table.sql() + " WITH NO DATA";
    }

    String dropStage() {
        return "DROP TABLE IF EXISTS pg_temp." + STAGE;
    }

    /** Gives the staging table a new, empty file: rows of a rolled-back load leave pages a COPY could fill out of order. */
    String emptyStage() {
        return "TRUNCATE pg_temp." + STAGE;
    }

    String copy() {
        return "COPY " + STAGE + " (" + list(columns) + ") FROM STDIN";
    }

    /** Append mode's COPY straight into the destination. */
    String copyIntoTable() {
        return "COPY " + table.sql() + " (" + list(columns) + ") FROM STDIN";
    }

    /** No rows, only the destination's types of the batch's columns. */
    String describeTable() {
        return "SELECT " + list(columns) + " FROM " + table.sql() + " LIMIT 0";
    }

    /**
     * @param textCompared columns whose type has no equality operator (json, xml, geometric types): compared by
     *     their text to decide whether a row changed
     */
    String merge(Set<String> textCompared) {
        String insert = "INSERT INTO " + table.sql() + " AS " + TARGET + " (" + list(columns) + ") ";
        if (mode == PostgresSink.Mode.APPEND) {
            return insert + "SELECT " + list(columns) + " FROM " + STAGE;
        }
        String keys = list(key);
        String lastPerKey = "SELECT DISTINCT ON (" + keys + ") " + list(columns) + " FROM " + STAGE + " ORDER BY " + keys + ", ctid DESC";
        List<String> values = columns.stream().filter(column -> !key.contains(column)).toList();
        if (values.isEmpty()) {
            return insert + lastPerKey + " ON CONFLICT (" + keys + ") DO NOTHING";
        }
        String set = values.stream().map(SqlText::identifier).map(c -> c + " = EXCLUDED." + c).collect(Collectors.joining(", "));
        String stored = values.stream().map(c -> compared(TARGET + "." + SqlText.identifier(c), textCompared.contains(c))).collect(Collectors.joining(", "));
        String incoming = values.stream().map(c -> compared("EXCLUDED." + SqlText.identifier(c), textCompared.contains(c))).collect(Collectors.joining(", "));
        return insert + lastPerKey + " ON CONFLICT (" + keys + ") DO UPDATE SET " + set
                + " WHERE ROW(" + stored + ") IS DISTINCT FROM ROW(" + incoming + ")";
    }

    private static String compared(String column, boolean asText) {
        return asText ? column + "::text" : column;
    }

    private static String list(List<String> names) {
        return names.stream().map(SqlText::identifier).collect(Collectors.joining(", "));
    }
}
