package dev.mallard.cli;

import dev.mallard.core.arrow.ArrowExport;
import dev.mallard.core.arrow.JsonLinesWriter;
import dev.mallard.core.engine.Engine;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlScript;
import dev.mallard.views.MaterializedViews;
import dev.mallard.views.ViewSql;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.Console;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
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
    "Run SQL on a DuckDB database with incremental materialized views, as a script or an interactive shell.",
    "CREATE [OR REPLACE] MATERIALIZED VIEW, DROP MATERIALIZED VIEW, REFRESH MATERIALIZED VIEW and the dbsp_*",
    "functions are Mallard's; other statements go to DuckDB. Runs the statements of -e; without -e, an interactive",
    "shell when standard input is a terminal (or with -i), else the statements read from standard input.",
    "Prints each query's rows."})
final class SqlCommand implements Callable<Integer> {
    enum Format { table, csv, jsonl }

    private static final String PROMPT = "mallard> ";
    private static final String CONTINUATION = "     ..> ";
    private static final String HELP = String.join("\n",
            "Statements end with ';' and may span lines. DuckDB SQL, plus:",
            "  CREATE [OR REPLACE] MATERIALIZED VIEW v AS <query>   DROP MATERIALIZED VIEW [IF EXISTS] v [CASCADE]",
            "  REFRESH MATERIALIZED VIEW v   SELECT dbsp_sync()   SELECT * FROM dbsp_stats()   SELECT * FROM dbsp_query('v')",
            "  (docs/views.md has them all)",
            ".help  this text      .quit, .exit or \\q  leave (so does the end of input)");

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** DuckDB's name for a database that lives in memory only; no file is created for it. */
    static final String IN_MEMORY = ":memory:";

    @Parameters(index = "0", arity = "0..1", paramLabel = "<database>",
            description = "The DuckDB database file (created if missing); an in-memory database when absent or " + IN_MEMORY + ".")
    Path database;

    @Option(names = {"-e", "--execute"}, paramLabel = "<sql>", description = "SQL to run: one or more statements separated by ';'.")
    String execute;

    @Option(names = {"-c", "--command"}, paramLabel = "<sql>", hidden = true,
            description = "Deprecated spelling of -e/--execute; -c means --config in the other commands.")
    String deprecatedCommand;

    @Option(names = {"-i", "--interactive"}, description = "Run the interactive shell even when standard input is not a terminal.")
    boolean interactive;

    @Option(names = "--format", defaultValue = "table", paramLabel = "<format>",
            description = "How query rows are printed: ${COMPLETION-CANDIDATES} (default ${DEFAULT-VALUE}).")
    Format format;

    /** Standard input; a test gives its own. */
    InputStream in = System.in;

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        String command = execute;
        if (deprecatedCommand != null) {
            if (execute != null) {
                throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "give the SQL once, with -e/--execute (-c is its deprecated spelling)");
            }
            spec.commandLine().getErr().println("warning: 'mallard sql -c' is deprecated: use -e/--execute for the SQL to run"
                    + " (-c means --config in the other commands)");
            spec.commandLine().getErr().flush();
            command = deprecatedCommand;
        }
        boolean inMemory = database == null || database.toString().equals(IN_MEMORY);
        try (Engine engine = inMemory ? Engine.inMemory() : Engine.onFile(database);
                MaterializedViews views = MaterializedViews.attach(engine.connection()).registerFunctions()) {
            ViewSql front = new ViewSql(views);
            if (command == null && (interactive || standardInputIsTerminal())) {
                shell(engine, front, out, inMemory);
            } else {
                String script = command != null ? command : new String(in.readAllBytes(), StandardCharsets.UTF_8);
                for (SqlScript.Statement statement : SqlScript.split(script)) {
                    try {
                        run(engine, front, statement.sql(), out);
                    } catch (MallardException e) {
                        throw new MallardException(e.errorCode(), "statement at line " + statement.line() + ": " + e.getMessage(), e);
                    }
                }
            }
        } finally {
            out.flush();
        }
        return 0;
    }

    /**
     * Reads statements line by line and runs each once its semicolon is read. A failing statement prints its
     * error and the shell goes on; {@code .quit}, {@code .exit}, {@code \q} or the end of input leave it.
     */
    private void shell(Engine engine, ViewSql front, PrintWriter out, boolean inMemory) throws IOException {
        PrintWriter err = spec.commandLine().getErr();
        BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        out.println("Mallard SQL on " + (inMemory ? "an in-memory database" : database)
                + ". End statements with ';'. .help for help, .quit to leave.");
        StringBuilder pending = new StringBuilder();
        while (true) {
            out.print(pending.isEmpty() ? PROMPT : CONTINUATION);
            out.flush();
            String line = reader.readLine();
            if (line == null) {
                out.println();
                return;
            }
            if (pending.isEmpty()) {
                String meta = line.strip();
                if (meta.equals(".quit") || meta.equals(".exit") || meta.equals("\\q")) {
                    return;
                }
                if (meta.equals(".help")) {
                    out.println(HELP);
                    continue;
                }
            }
            pending.append(line).append('\n');
            if (!SqlScript.terminated(pending.toString())) {
                continue;
            }
            for (SqlScript.Statement statement : SqlScript.split(pending.toString())) {
                try {
                    run(engine, front, statement.sql(), out);
                } catch (MallardException e) {
                    out.flush();
                    err.println("error: " + e.describe());
                    err.flush();
                }
            }
            pending.setLength(0);
        }
    }

    private void run(Engine engine, ViewSql front, String sql, PrintWriter out) {
        try (ViewSql.Result result = front.execute(sql)) {
            if (result.rows().isPresent()) {
                print(engine, result.rows().get(), out);
            } else if (format == Format.table) {
                out.println(result.message().orElse(result.updateCount() >= 0 ? "OK " + result.updateCount() : "OK"));
            }
        }
    }

    /** Whether standard input is a terminal: {@code Console.isTerminal()} where the JDK has it (22+). */
    private boolean standardInputIsTerminal() {
        Console console = System.console();
        if (console == null || in != System.in) {
            return false;
        }
        try {
            return (Boolean) Console.class.getMethod("isTerminal").invoke(console);
        } catch (ReflectiveOperationException e) {
            return true; // JDK 21 returns a console only for a terminal
        }
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
