// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import dev.mallard.core.engine.StorageCompatibility;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlScript;
import java.io.BufferedReader;
import java.io.Console;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import org.jline.reader.EndOfFileException;
import org.jline.reader.LineReader;
import org.jline.reader.LineReaderBuilder;
import org.jline.reader.UserInterruptException;
import org.jline.terminal.Terminal;
import org.jline.terminal.TerminalBuilder;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "sql", description = {
    "Run SQL on a DuckDB database with incremental materialized views, as a script or an interactive shell.",
    "CREATE [OR REPLACE] MATERIALIZED VIEW, DROP MATERIALIZED VIEW, REFRESH MATERIALIZED VIEW and the dbsp_* functions are",
    "Mallard's; other statements go to DuckDB. Runs the statements of -e; without -e, an interactive shell when standard",
    "input is a terminal (or with -i), else the statements read from standard input. With --server, the statements run on",
    "a running mallard server over Arrow Flight SQL instead. Prints each query's rows."})
final class SqlCommand implements Callable<Integer> {
    /** DuckDB's name for a database that lives in memory only; no file is created for it. */
    static final String IN_MEMORY = ":memory:";
    /** Rows a table shows unless --max-rows or .maxrows says otherwise; csv and jsonl print all by default. */
    static final long DEFAULT_TABLE_ROWS = 1_000;
    static final String PASSWORD_VARIABLE = "MALLARD_PASSWORD";

    private static final String PROMPT = "mallard> ";
    private static final String CONTINUATION = "     ..> ";
    private static final String HELP = String.join("\n",
            "Statements end with ';' and may span lines. DuckDB SQL, plus:",
            "  CREATE [OR REPLACE] MATERIALIZED VIEW v AS <query>   DROP MATERIALIZED VIEW [IF EXISTS] v [CASCADE]",
            "  REFRESH MATERIALIZED VIEW v   SELECT dbsp_sync()   SELECT * FROM dbsp_stats()   SELECT * FROM dbsp_query('v')",
            "  (docs/views.md has them all)",
            ".tables                 the tables, views and materialized views",
            ".schema [name]          their CREATE statements (of one, with a name)",
            ".mode table|csv|jsonl   how rows are printed",
            ".maxrows N              print at most N rows of a result (0: all)",
            ".help  this text      .quit, .exit or \\q  leave (so does the end of input)");

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

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
    ResultPrinter.Format format;

    @Option(names = "--max-rows", paramLabel = "N",
            description = "Print at most N rows of each result, with a note when rows were left out; 0 prints all."
                    + " Default: " + DEFAULT_TABLE_ROWS + " in table format, all in csv and jsonl.")
    Long maxRows;

    @Option(names = "--server", paramLabel = "<url>",
            description = "Run on a mallard server over Arrow Flight SQL: grpc+tcp://host:59307 (grpc+tls:// with TLS)."
                    + " The password comes from " + PASSWORD_VARIABLE + ".")
    String server;

    @Option(names = "--storage-compatibility", paramLabel = "<release>",
            description = "The oldest DuckDB release that must open a database file this creates: v1.0.0 (or a later 1.x)"
                    + " writes a file DuckDB 1.x opens, without materialized views; latest (the default, DuckDB's own) the"
                    + " 2.0 format. An existing file keeps its format.")
    String storageCompatibility;

    @Option(names = {"-u", "--user"}, paramLabel = "<name>", description = "The user to log in as with --server.")
    String user;

    /** Standard input; a test gives its own. */
    InputStream in = System.in;
    /** The environment (for the password); a test gives its own. */
    Map<String, String> environment = System.getenv();
    /** The shell's terminal; null uses the system's when standard input is one. A test gives its own. */
    Terminal terminal;
    /** Where the shell keeps its history on a terminal. */
    Path historyFile = Path.of(System.getProperty("user.home"), ".mallard_sql_history");

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        String command = statements(err);
        quietLogs();
        ResultPrinter printer = new ResultPrinter(format, maxRows != null ? maxRows : format == ResultPrinter.Format.table ? DEFAULT_TABLE_ROWS : 0, out, err);
        if (printer.maxRows() < 0) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "--max-rows must be 0 (all) or more, was " + maxRows);
        }
        try (SqlTarget target = target()) {
            if (command == null && (interactive || terminal != null || standardInputIsTerminal())) {
                shell(target, printer, out, err);
            } else {
                String script = command != null ? command : new String(in.readAllBytes(), StandardCharsets.UTF_8);
                for (SqlScript.Statement statement : SqlScript.split(script)) {
                    try {
                        target.run(statement.sql(), printer);
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

    private String statements(PrintWriter err) {
        if (deprecatedCommand == null) {
            return execute;
        }
        if (execute != null) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "give the SQL once, with -e/--execute (-c is its deprecated spelling)");
        }
        err.println("warning: 'mallard sql -c' is deprecated: use -e/--execute for the SQL to run (-c means --config in the other commands)");
        err.flush();
        return deprecatedCommand;
    }

    /**
     * The views' lifecycle lines (a view created, a reconcile) are INFO; in a SQL session its status lines say the
     * same, so unless a log level was asked for, only warnings and errors are logged (on stderr, as always).
     */
    private void quietLogs() {
        if (environment.containsKey("MALLARD_LOG_LEVEL") || environment.containsKey("SQLFLOW_LOG_LEVEL")) {
            return;
        }
        if (LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME) instanceof Logger root && root.getLevel() != null
                && root.getLevel().isGreaterOrEqual(Level.INFO) && !root.getLevel().isGreaterOrEqual(Level.WARN)) {
            root.setLevel(Level.WARN);
        }
    }

    private SqlTarget target() {
        if (server == null) {
            if (user != null) {
                throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "--user goes with --server");
            }
            return SqlTarget.local(database, storageCompatibility == null ? StorageCompatibility.DEFAULT
                    : StorageCompatibility.of(storageCompatibility, "--storage-compatibility"));
        }
        if (database != null || storageCompatibility != null) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "name a database file (and its --storage-compatibility)"
                    + " or --server, not both: the server serves its own database");
        }
        URI location;
        try {
            location = new URI(server);
        } catch (URISyntaxException e) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "--server " + server + " is not a URL: " + e.getMessage());
        }
        String scheme = location.getScheme() == null ? "" : location.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("grpc+tcp") && !scheme.equals("grpc+tls") || location.getHost() == null || location.getPort() < 0) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID,
                    "--server takes grpc+tcp://host:port or grpc+tls://host:port (the server's Flight SQL port, 59307 by default), not " + server);
        }
        if (user == null) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "--server needs --user <name>; the password comes from " + PASSWORD_VARIABLE);
        }
        String password = environment.get(PASSWORD_VARIABLE);
        if (password == null) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID,
                    "set " + PASSWORD_VARIABLE + " to the password of " + user + " (it is never taken on the command line)");
        }
        return SqlTarget.server(location, user, password);
    }

    /** One line of the shell's input at a time; null at the end. */
    private interface LineSource extends AutoCloseable {
        String readLine(String prompt) throws IOException;

        @Override
        void close() throws IOException;
    }

    private LineSource lines(PrintWriter out) throws IOException {
        if (terminal != null || (in == System.in && standardInputIsTerminal())) {
            Terminal shellTerminal = terminal != null ? terminal : TerminalBuilder.builder().system(true).build();
            LineReader reader = LineReaderBuilder.builder().terminal(shellTerminal).appName("mallard")
                    .variable(LineReader.HISTORY_FILE, historyFile)
                    // A statement spans lines; the shell, not JLine, decides when it is complete.
                    .option(LineReader.Option.DISABLE_EVENT_EXPANSION, true)
                    .build();
            return new LineSource() {
                @Override
                public String readLine(String prompt) {
                    try {
                        return reader.readLine(prompt);
                    } catch (UserInterruptException e) {
                        return "";
                    } catch (EndOfFileException e) {
                        return null;
                    }
                }

                @Override
                public void close() throws IOException {
                    reader.getHistory().save();
                    if (terminal == null) {
                        shellTerminal.close();
                    }
                }
            };
        }
        BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        return new LineSource() {
            @Override
            public String readLine(String prompt) throws IOException {
                out.print(prompt);
                out.flush();
                return reader.readLine();
            }

            @Override
            public void close() {
                // standard input is not ours to close
            }
        };
    }

    /**
     * Reads statements line by line and runs each once its semicolon is read. A failing statement prints its
     * error and the shell goes on; {@code .quit}, {@code .exit}, {@code \q} or the end of input leave it.
     */
    private void shell(SqlTarget target, ResultPrinter printer, PrintWriter out, PrintWriter err) throws IOException {
        out.println("Mallard SQL on " + target.describe() + ". End statements with ';'. .help for help, .quit to leave.");
        StringBuilder pending = new StringBuilder();
        try (LineSource source = lines(out)) {
            while (true) {
                String line = source.readLine(pending.isEmpty() ? PROMPT : CONTINUATION);
                if (line == null) {
                    out.println();
                    return;
                }
                if (pending.isEmpty()) {
                    String meta = line.strip();
                    if (meta.equals(".quit") || meta.equals(".exit") || meta.equals("\\q")) {
                        return;
                    }
                    if (meta.startsWith(".")) {
                        try {
                            new ShellCommands(target, printer).run(meta, out);
                        } catch (MallardException e) {
                            out.flush();
                            err.println("error: " + e.describe());
                            err.flush();
                        }
                        out.flush();
                        continue;
                    }
                }
                pending.append(line).append('\n');
                if (!SqlScript.terminated(pending.toString())) {
                    continue;
                }
                for (SqlScript.Statement statement : SqlScript.split(pending.toString())) {
                    try {
                        target.run(statement.sql(), printer);
                    } catch (MallardException e) {
                        out.flush();
                        err.println("error: " + e.describe());
                        err.flush();
                    }
                }
                out.flush();
                pending.setLength(0);
            }
        }
    }

    static String help() {
        return HELP;
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
}
