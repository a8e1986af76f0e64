package dev.mallard.flow.sink.postgres;

import static java.util.Objects.requireNonNull;

import java.util.List;
import java.util.stream.Collectors;

/**
 * The SQL of one load: a staging table shaped like the destination's columns, the COPY into it, and the one
 * statement that moves the staged rows into the destination. In upsert mode the staged rows are first reduced to
 * the last row per key (in batch order), as if each had been applied in turn, so a batch that repeats a key
 * neither fails ("ON CONFLICT DO UPDATE command cannot affect row a second time") nor depends on chance.
 */
record LoadStatements(PostgresTable table, List<String> columns, PostgresSink.Mode mode, List<String> key) {
    static final String STAGE = "mallard_stage";
    static final String ROW_NUMBER = "mallard_row";

    LoadStatements {
        requireNonNull(table, "table is null");
        columns = List.copyOf(columns);
        requireNonNull(mode, "mode is null");
        key = List.copyOf(key);
    }

    /** Takes the destination's types for the batch's columns, and none of its constraints. */
    String createStage() {
        return "CREATE TEMP TABLE " + STAGE + " ON COMMIT DROP AS SELECT " + list(columns) + " FROM " + table.sql() + " WITH NO DATA";
    }

    /** In upsert mode, numbers the staged rows in the order COPY delivers them. */
    String numberStagedRows() {
        return "ALTER TABLE " + STAGE + " ADD COLUMN " + ROW_NUMBER + " bigint GENERATED ALWAYS AS IDENTITY";
    }

    String copy() {
        return "COPY " + STAGE + " (" + list(columns) + ") FROM STDIN";
    }

    String merge() {
        String insert = "INSERT INTO " + table.sql() + " (" + list(columns) + ") ";
        if (mode == PostgresSink.Mode.APPEND) {
            return insert + "SELECT " + list(columns) + " FROM " + STAGE;
        }
        String keys = list(key);
        String lastPerKey = "SELECT DISTINCT ON (" + keys + ") " + list(columns) + " FROM " + STAGE + " ORDER BY " + keys + ", "
                + ROW_NUMBER + " DESC";
        List<String> values = columns.stream().filter(column -> !key.contains(column)).toList();
        String action = values.isEmpty() ? "DO NOTHING"
                : "DO UPDATE SET " + values.stream().map(PostgresTable::quote).map(c -> c + " = EXCLUDED." + c).collect(Collectors.joining(", "));
        return insert + lastPerKey + " ON CONFLICT (" + keys + ") " + action;
    }

    private static String list(List<String> names) {
        return names.stream().map(PostgresTable::quote).collect(Collectors.joining(", "));
    }
}
