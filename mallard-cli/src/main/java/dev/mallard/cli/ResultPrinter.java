// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.arrow.ArrowExport;
import dev.mallard.core.arrow.JsonLinesWriter;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.ArrowReader;

/**
 * Prints a query's rows in {@code mallard sql}'s formats, at most {@code maxRows} of them (0: all). Rows are printed
 * on {@code out}; a note that rows were left out goes to the table's footer, or to {@code err} for csv and jsonl
 * so their output stays data only.
 */
final class ResultPrinter {
    enum Format { table, csv, jsonl }

    /** The rows of one result: from DuckDB's JDBC ResultSet, or from Arrow record batches. */
    interface Rows {
        List<String> columns();

        /** Advances to the next row; false at the end. */
        boolean next();

        /** The current row's value of column {@code index} as text, null for SQL NULL. */
        String value(int index);
    }

    private Format format;
    private long maxRows;
    private final PrintWriter out;
    private final PrintWriter err;

    ResultPrinter(Format format, long maxRows, PrintWriter out, PrintWriter err) {
        this.format = requireNonNull(format, "format is null");
        this.maxRows = maxRows;
        this.out = requireNonNull(out, "out is null");
        this.err = requireNonNull(err, "err is null");
    }

    Format format() {
        return format;
    }

    void format(Format format) {
        this.format = requireNonNull(format, "format is null");
    }

    long maxRows() {
        return maxRows;
    }

    void maxRows(long maxRows) {
        this.maxRows = maxRows;
    }

    /** A statement's status line ({@code OK 1}, {@code CREATE MATERIALIZED VIEW}); printed in table format only. */
    void status(String message) {
        if (format == Format.table) {
            out.println(message);
        }
    }

    /** Prints a DuckDB result: jsonl through Arrow (the console sink's encoding), the others from the ResultSet. */
    void print(ResultSet resultSet, BufferAllocator allocator) {
        try {
            if (format == Format.jsonl) {
                try (ArrowReader reader = ArrowExport.export(resultSet, allocator, 4096)) {
                    long total = 0;
                    while (reader.loadNextBatch()) {
                        total += printJsonLines(reader.getVectorSchemaRoot(), reader, total);
                    }
                    noteLeftOut(total);
                }
            } else {
                print(jdbcRows(resultSet));
            }
        } catch (SQLException | IOException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "reading the query's rows failed: " + e.getMessage(), e);
        }
    }

    /**
     * Prints one batch of Arrow rows as JSON lines, skipping those past the cap; {@code before} rows came earlier.
     * Returns the batch's row count.
     */
    long printJsonLines(VectorSchemaRoot root, DictionaryProvider dictionaries, long before) throws IOException {
        int rows = root.getRowCount();
        long room = maxRows == 0 ? rows : Math.max(0, Math.min(rows, maxRows - before));
        if (room > 0) {
            ByteArrayOutputStream buffer = new ByteArrayOutputStream();
            JsonLinesWriter writer = new JsonLinesWriter(buffer);
            if (room == rows) {
                writer.write(root, dictionaries);
            } else {
                try (VectorSchemaRoot head = root.slice(0, (int) room)) {
                    writer.write(head, dictionaries);
                }
            }
            writer.flush();
            out.print(buffer.toString(StandardCharsets.UTF_8));
        }
        return rows;
    }

    /** After the last batch of a jsonl result: the note when the cap left rows out. */
    void noteLeftOut(long total) {
        if (maxRows > 0 && total > maxRows) {
            out.flush();
            err.println("note: " + maxRows + " of " + total + " rows printed; --max-rows 0 (.maxrows 0 in the shell) prints all");
            err.flush();
        }
    }

    /** Prints rows in table or csv format (jsonl needs Arrow batches: {@link #printJsonLines}). */
    void print(Rows rows) {
        List<String> columns = rows.columns();
        if (format == Format.csv) {
            out.println(String.join(",", columns.stream().map(ResultPrinter::csv).toList()));
        }
        List<String[]> kept = new ArrayList<>();
        long total = 0;
        while (rows.next()) {
            total++;
            if (maxRows > 0 && total > maxRows) {
                continue; // counted for the note, not printed
            }
            String[] line = new String[columns.size()];
            for (int i = 0; i < line.length; i++) {
                line[i] = rows.value(i);
            }
            if (format == Format.csv) {
                List<String> values = new ArrayList<>();
                for (String value : line) {
                    values.add(value == null ? "" : csv(value));
                }
                out.println(String.join(",", values));
            } else {
                kept.add(line);
            }
        }
        if (format == Format.table) {
            printTable(columns, kept, total);
        } else {
            noteLeftOut(total);
        }
    }

    private void printTable(List<String> columns, List<String[]> lines, long total) {
        int[] widths = new int[columns.size()];
        for (int i = 0; i < widths.length; i++) {
            widths[i] = columns.get(i).length();
        }
        for (String[] line : lines) {
            for (int i = 0; i < widths.length; i++) {
                line[i] = line[i] == null ? "NULL" : line[i];
                widths[i] = Math.max(widths[i], line[i].length());
            }
        }
        out.println(row(columns.toArray(String[]::new), widths));
        StringBuilder rule = new StringBuilder();
        for (int i = 0; i < widths.length; i++) {
            rule.append(i == 0 ? "" : "-+-").append("-".repeat(widths[i]));
        }
        out.println(rule);
        for (String[] line : lines) {
            out.println(row(line, widths));
        }
        if (lines.size() < total) {
            out.println("(" + lines.size() + " of " + total + " rows shown; --max-rows 0, or .maxrows 0 in the shell, shows all)");
        } else {
            out.println("(" + total + (total == 1 ? " row)" : " rows)"));
        }
    }

    private static String row(String[] values, int[] widths) {
        StringBuilder line = new StringBuilder();
        for (int i = 0; i < values.length; i++) {
            line.append(i == 0 ? "" : " | ").append(values[i]).append(" ".repeat(widths[i] - values[i].length()));
        }
        return line.toString().stripTrailing();
    }

    private static String csv(String value) {
        boolean quote = value.isEmpty() || value.contains(",") || value.contains("\"") || value.contains("\n") || value.contains("\r");
        return quote ? '"' + value.replace("\"", "\"\"") + '"' : value;
    }

    static Rows jdbcRows(ResultSet resultSet) throws SQLException {
        ResultSetMetaData meta = resultSet.getMetaData();
        List<String> columns = new ArrayList<>();
        for (int i = 1; i <= meta.getColumnCount(); i++) {
            columns.add(meta.getColumnLabel(i));
        }
        return new Rows() {
            @Override
            public List<String> columns() {
                return columns;
            }

            @Override
            public boolean next() {
                try {
                    return resultSet.next();
                } catch (SQLException e) {
                    throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "reading the query's rows failed: " + e.getMessage(), e);
                }
            }

            @Override
            public String value(int index) {
                try {
                    return resultSet.getString(index + 1);
                } catch (SQLException e) {
                    throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "reading the query's rows failed: " + e.getMessage(), e);
                }
            }
        };
    }

    /** The rows of one Arrow batch. */
    static Rows arrowRows(VectorSchemaRoot root) {
        List<String> columns = root.getSchema().getFields().stream().map(field -> field.getName()).toList();
        return new Rows() {
            private int row = -1;

            @Override
            public List<String> columns() {
                return columns;
            }

            @Override
            public boolean next() {
                return ++row < root.getRowCount();
            }

            @Override
            public String value(int index) {
                FieldVector vector = root.getVector(index);
                Object value = vector.getObject(row);
                return value == null ? null : value.toString();
            }
        };
    }
}
