package dev.mallard.cli;

import dev.mallard.core.arrow.ArrowExport;
import dev.mallard.core.arrow.JsonLinesWriter;
import dev.mallard.core.engine.Engine;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlScript;
import dev.mallard.views.MaterializedViews;
import dev.mallard.views.ViewSql;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.apache.arrow.vector.ipc.ArrowReader;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "sql", description = {
    "Run SQL on a DuckDB database with incremental materialized views: CREATE [OR REPLACE] MATERIALIZED VIEW,",
    "DROP MATERIALIZED VIEW, REFRESH MATERIALIZED VIEW and the dbsp_* functions; other statements go to DuckDB.",
    "Runs the statements of -c, or else those read from standard input, and prints each query's rows."})
final class SqlCommand implements Callable<Integer> {
    enum Format { table, csv, jsonl }

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Parameters(index = "0", arity = "0..1", paramLabel = "<database>",
            description = "The DuckDB database file (created if missing); an in-memory database when absent.")
    Path database;

    @Option(names = {"-c", "--command"}, paramLabel = "<sql>", description = "SQL to run: one or more statements separated by ';'.")
    String command;

    @Option(names = "--format", defaultValue = "table", paramLabel = "<format>",
            description = "How query rows are printed: ${COMPLETION-CANDIDATES} (default ${DEFAULT-VALUE}).")
    Format format;

    @Override
    public Integer call() throws IOException {
        String script = command != null ? command : readStandardInput();
        PrintWriter out = spec.commandLine().getOut();
        try (Engine engine = database == null ? Engine.inMemory() : Engine.onFile(database);
                MaterializedViews views = MaterializedViews.attach(engine.connection()).registerFunctions()) {
            ViewSql front = new ViewSql(views);
            for (SqlScript.Statement statement : SqlScript.split(script)) {
                try (ViewSql.Result result = front.execute(statement.sql())) {
                    if (result.rows().isPresent()) {
                        print(engine, result.rows().get(), out);
                    } else if (format == Format.table) {
                        out.println(result.message().orElse(result.updateCount() >= 0 ? "OK " + result.updateCount() : "OK"));
                    }
                } catch (MallardException e) {
                    throw new MallardException(e.errorCode(), "statement at line " + statement.line() + ": " + e.getMessage(), e);
                }
            }
        } finally {
            out.flush();
        }
        return 0;
    }

    private String readStandardInput() throws IOException {
        InputStream in = System.in;
        return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }

    private void print(Engine engine, ResultSet rows, PrintWriter out) {
        try {
            switch (format) {
                case jsonl -> printJsonLines(engine, rows, out);
                case csv -> printCsv(rows, out);
                case table -> printTable(rows, out);
            }
        } catch (SQLException | IOException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "reading the query's rows failed: " + e.getMessage(), e);
        }
    }

    private static void printJsonLines(Engine engine, ResultSet rows, PrintWriter out) throws IOException {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        JsonLinesWriter writer = new JsonLinesWriter(buffer);
        try (ArrowReader reader = ArrowExport.export(rows, engine.allocator(), 4096)) {
            while (reader.loadNextBatch()) {
                writer.write(reader.getVectorSchemaRoot(), reader);
                writer.flush();
                out.print(buffer.toString(StandardCharsets.UTF_8));
                buffer.reset();
            }
        }
    }

    private static void printCsv(ResultSet rows, PrintWriter out) throws SQLException {
        ResultSetMetaData meta = rows.getMetaData();
        int columns = meta.getColumnCount();
        List<String> header = new ArrayList<>();
        for (int i = 1; i <= columns; i++) {
            header.add(csv(meta.getColumnLabel(i)));
        }
        out.println(String.join(",", header));
        while (rows.next()) {
            List<String> values = new ArrayList<>();
            for (int i = 1; i <= columns; i++) {
                String value = rows.getString(i);
                values.add(value == null ? "" : csv(value));
            }
            out.println(String.join(",", values));
        }
    }

    private static String csv(String value) {
        boolean quote = value.isEmpty() || value.contains(",") || value.contains("\"") || value.contains("\n") || value.contains("\r");
        return quote ? '"' + value.replace("\"", "\"\"") + '"' : value;
    }

    private static void printTable(ResultSet rows, PrintWriter out) throws SQLException {
        ResultSetMetaData meta = rows.getMetaData();
        int columns = meta.getColumnCount();
        List<String[]> lines = new ArrayList<>();
        String[] header = new String[columns];
        int[] widths = new int[columns];
        for (int i = 0; i < columns; i++) {
            header[i] = meta.getColumnLabel(i + 1);
            widths[i] = header[i].length();
        }
        while (rows.next()) {
            String[] line = new String[columns];
            for (int i = 0; i < columns; i++) {
                String value = rows.getString(i + 1);
                line[i] = value == null ? "NULL" : value;
                widths[i] = Math.max(widths[i], line[i].length());
            }
            lines.add(line);
        }
        out.println(row(header, widths));
        StringBuilder rule = new StringBuilder();
        for (int i = 0; i < columns; i++) {
            rule.append(i == 0 ? "" : "-+-").append("-".repeat(widths[i]));
        }
        out.println(rule);
        for (String[] line : lines) {
            out.println(row(line, widths));
        }
        out.println("(" + lines.size() + (lines.size() == 1 ? " row)" : " rows)"));
    }

    private static String row(String[] values, int[] widths) {
        StringBuilder line = new StringBuilder();
        for (int i = 0; i < values.length; i++) {
            line.append(i == 0 ? "" : " | ").append(values[i]).append(" ".repeat(widths[i] - values[i].length()));
        }
        return line.toString().stripTrailing();
    }
}
