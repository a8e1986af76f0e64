// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.validate;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mallard.core.config.ConfigProblem;
import dev.mallard.core.config.LocatedYaml;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlScript;
import dev.mallard.core.sql.SqlText;
import dev.mallard.flow.config.PipelineConfig.WindowConfig;
import dev.mallard.flow.window.WindowChecks;
import dev.mallard.views.MaterializedViews;
import dev.mallard.views.ViewSql;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.duckdb.DuckDBConnection;

/**
 * Checks the SQL of a configuration against an empty in-memory DuckDB without running anything that reaches
 * outside it: schema-only statements (CREATE TABLE, VIEW, MACRO, TYPE, ...) run in the sandbox so later
 * statements bind; DML and queries are prepared, not executed; statements that touch the outside world
 * (ATTACH, INSTALL, LOAD, COPY, USE, secrets) are not run, and what depends on them is reported as not
 * checked rather than as wrong.
 */
final class SqlChecks implements AutoCloseable {
    private static final Set<String> QUERY = Set.of("SELECT", "WITH", "FROM", "VALUES", "TABLE", "SUMMARIZE", "DESCRIBE", "SHOW", "PIVOT", "UNPIVOT");
    private static final Set<String> PREPARED = Set.of("INSERT", "UPDATE", "DELETE", "MERGE");
    private static final Set<String> SANDBOXED = Set.of("CREATE", "SET", "RESET", "ALTER", "DROP", "COMMENT");
    private static final Pattern INSERT_INTO = Pattern.compile(
            "(?is)^INSERT\\s+(?:OR\\s+\\w+\\s+)?INTO\\s+((?:\"[^\"]+\"|\\w+)(?:\\.(?:\"[^\"]+\"|\\w+))*)");
    private static final Pattern TIME_BUCKET = Pattern.compile("(?i)\\btime_bucket\\s*\\(");
    private static final Pattern CTAS = Pattern.compile(
            "(?is)^(CREATE\\s+(?:OR\\s+REPLACE\\s+)?(?:TEMP\\s+|TEMPORARY\\s+)?TABLE\\s+(?:IF\\s+NOT\\s+EXISTS\\s+)?\\S+\\s+AS\\s+)(.*)$");

    private final String file;
    private final LocatedYaml yaml;
    private final String[] renderedLines;
    private final Connection sandbox;
    private final List<String> notRun = new ArrayList<>();
    private MaterializedViews views;
    private ViewSql front;

    SqlChecks(String file, LocatedYaml yaml, String renderedText) throws SQLException {
        this.file = file;
        this.yaml = yaml;
        this.renderedLines = renderedText.split("\n", -1);
        // validate reaches nothing outside the configuration: no extension is downloaded or loaded for a statement.
        java.util.Properties settings = new java.util.Properties();
        settings.setProperty("autoinstall_known_extensions", "false");
        settings.setProperty("autoload_known_extensions", "false");
        this.sandbox = DriverManager.getConnection("jdbc:duckdb:", settings);
    }

    /** The extensions loaded in the sandbox (DuckDB's built-in ones among them). */
    List<String> loadedExtensions() throws SQLException {
        List<String> loaded = new ArrayList<>();
        try (Statement statement = sandbox.createStatement();
                ResultSet rows = statement.executeQuery("SELECT extension_name FROM duckdb_extensions() WHERE loaded")) {
            while (rows.next()) {
                loaded.add(rows.getString(1));
            }
        }
        return loaded;
    }

    /** Problems and not-run notes of one group of statements. */
    private record Outcome(List<ConfigProblem> errors, List<ConfigProblem> warnings, List<String> notRun) {}

    Check commands() {
        Outcome outcome = new Outcome(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
        JsonNode commands = yaml.root().path("commands");
        for (int i = 0; i < commands.size(); i++) {
            JsonNode sql = commands.get(i).path("sql");
            if (sql.isTextual()) {
                runScript("commands[" + i + "].sql", sql.asText(), outcome);
            }
        }
        return toCheck("sql.commands", outcome, commands.isEmpty());
    }

    Check tables() {
        Outcome outcome = new Outcome(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
        JsonNode tables = yaml.root().path("tables").path("sql");
        for (int i = 0; i < tables.size(); i++) {
            JsonNode sql = tables.get(i).path("sql");
            if (sql.isTextual()) {
                runScript("tables.sql[" + i + "].sql", sql.asText(), outcome);
            }
            JsonNode window = tables.get(i).path("window");
            if (window.isObject() && outcome.errors().isEmpty()) {
                checkWindow("tables.sql[" + i + "].window", tables.get(i).path("name").asText(), window, outcome);
            }
            JsonNode polled = tables.get(i).path("manager").path("tumbling_window");
            if (polled.isObject() && outcome.errors().isEmpty()) {
                for (String key : List.of("collect_closed_windows_sql", "delete_closed_windows_sql")) {
                    if (polled.path(key).isTextual()) {
                        bindOnly("tables.sql[" + i + "].manager.tumbling_window." + key, polled.path(key).asText(), outcome);
                    }
                }
            }
        }
        return toCheck("sql.tables", outcome, tables.isEmpty());
    }

    /** A window's table and emit_sql, when the table exists in the sandbox (it may come from an ATTACH not run here). */
    private void checkWindow(String path, String table, JsonNode window, Outcome outcome) {
        try (PreparedStatement exists = sandbox.prepareStatement("SELECT count(*) FROM duckdb_tables() WHERE table_name = ?")) {
            exists.setString(1, table);
            try (ResultSet rows = exists.executeQuery()) {
                rows.next();
                if (rows.getLong(1) == 0) {
                    outcome.notRun().add(path + " (table " + table + " was not created in the sandbox)");
                    return;
                }
            }
        } catch (SQLException e) {
            outcome.notRun().add(path + " (" + e.getMessage() + ")");
            return;
        }
        WindowChecks.table(sandbox, table, window.path("time_column").asText(), window.path("size_seconds").asLong())
                .ifPresent(problem -> outcome.errors().add(windowProblem(path + ".time_column", problem)));
        String emitSql = window.path("emit_sql").isTextual() ? window.path("emit_sql").asText() : WindowConfig.DEFAULT_EMIT_SQL;
        WindowChecks.emitSql(sandbox, table, emitSql)
                .ifPresent(problem -> outcome.errors().add(windowProblem(path + ".emit_sql", problem)));
    }

    /** Binds each statement of a polled window's query against the sandbox's tables without running it. */
    private void bindOnly(String path, String script, Outcome outcome) {
        for (SqlScript.Statement statement : SqlScript.split(script)) {
            try (PreparedStatement prepared = sandbox.prepareStatement(statement.sql())) {
                // Prepared is bound: enough to name a missing table or column.
            } catch (SQLException e) {
                outcome.errors().add(problem(path, script, statement, firstLine(e)));
            }
        }
    }

    private ConfigProblem windowProblem(String path, String message) {
        LocatedYaml.Location at = yaml.locate(path);
        return new ConfigProblem(file, at.line(), at.column(), path, ErrorCode.USER_CONFIG_INVALID, message);
    }

    /** Checks the handler SQL; returns the result's columns when the last statement is a query that bound. */
    Check handler(List<String[]> resultColumns) {
        JsonNode handler = yaml.root().path("pipeline").path("handler");
        JsonNode sql = handler.path("sql");
        if (!sql.isTextual()) {
            return Check.skipped("sql.handler", "pipeline.handler.sql is missing (reported above)");
        }
        String path = "pipeline.handler.sql";
        String type = handler.path("type").asText();
        List<SqlScript.Statement> statements = SqlScript.split(sql.asText());
        Outcome outcome = new Outcome(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
        if (!type.equals("handlers.StructuredBatch")) {
            for (SqlScript.Statement statement : statements) {
                syntaxOnly(path, sql.asText(), statement, outcome);
            }
            if (!outcome.errors().isEmpty()) {
                return toCheck("sql.handler", outcome, false);
            }
            return Check.skipped("sql.handler", "syntax checked; binding not checked: " + type
                    + " infers the table `batch` from the data; bind the SQL with `mallard dev invoke <config> <fixture.jsonl>`");
        }
        for (int i = 0; i < statements.size(); i++) {
            SqlScript.Statement statement = statements.get(i);
            try (PreparedStatement prepared = sandbox.prepareStatement(statement.sql())) {
                if (i == statements.size() - 1 && QUERY.contains(statement.keyword())) {
                    ResultSetMetaData meta = prepared.getMetaData();
                    for (int c = 1; meta != null && c <= meta.getColumnCount(); c++) {
                        resultColumns.add(new String[] {meta.getColumnLabel(c), meta.getColumnTypeName(c)});
                    }
                }
            } catch (SQLException e) {
                report(path, sql.asText(), statement, e, outcome);
            }
        }
        return toCheck("sql.handler", outcome, false);
    }

    Check sink(List<String[]> resultColumns) {
        JsonNode sink = yaml.root().path("pipeline").path("sink");
        if (!"sqlcommand".equals(sink.path("type").asText())) {
            return Check.skipped("sql.sink", "the sink runs no SQL");
        }
        JsonNode sql = sink.path("sqlcommand").path("sql");
        if (!sql.isTextual()) {
            return Check.skipped("sql.sink", "pipeline.sink.sqlcommand.sql is missing (reported above)");
        }
        if (resultColumns.isEmpty()) {
            return Check.skipped("sql.sink", "the columns of sqlflow_sink_batch are known only when the handler's SQL "
                    + "binds here (StructuredBatch); run the pipeline with `mallard dev invoke` to see its rows");
        }
        StringBuilder create = new StringBuilder("CREATE OR REPLACE TEMP TABLE sqlflow_sink_batch (");
        for (int i = 0; i < resultColumns.size(); i++) {
            create.append(i == 0 ? "" : ", ").append(SqlText.identifier(resultColumns.get(i)[0])).append(" ")
                    .append(resultColumns.get(i)[1]);
        }
        Outcome outcome = new Outcome(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
        try (Statement statement = sandbox.createStatement()) {
            statement.execute(create.append(')').toString());
        } catch (SQLException e) {
            return Check.skipped("sql.sink", "cannot stand in for sqlflow_sink_batch: " + firstLine(e));
        }
        String text = sql.asText();
        for (JsonNode substitution : sink.path("sqlcommand").path("substitutions")) {
            text = text.replace(substitution.path("var").asText(), "00000000-0000-4000-8000-000000000000");
        }
        for (SqlScript.Statement statement : SqlScript.split(text)) {
            try (PreparedStatement ignored = sandbox.prepareStatement(statement.sql())) {
                // Preparing binds the statement against the stand-in batch without writing anything.
            } catch (SQLException e) {
                report("pipeline.sink.sqlcommand.sql", text, statement, e, outcome);
            }
        }
        return toCheck("sql.sink", outcome, false);
    }

    private void runScript(String path, String script, Outcome outcome) {
        for (SqlScript.Statement statement : SqlScript.split(script)) {
            String keyword = statement.keyword();
            try {
                if (ViewSql.recognizes(statement.sql())) {
                    runViewStatement(path, script, statement, outcome);
                } else if (QUERY.contains(keyword) || PREPARED.contains(keyword)) {
                    try (PreparedStatement ignored = sandbox.prepareStatement(statement.sql())) {
                        // Prepared, never executed.
                    }
                } else if (SANDBOXED.contains(keyword) && !statement.words(2).equals("CREATE SECRET")
                        && !statement.words(4).contains("SECRET")) {
                    Matcher ctas = CTAS.matcher(statement.sql());
                    String sql = ctas.matches() ? ctas.group(1) + "SELECT * FROM (" + ctas.group(2) + ") LIMIT 0" : statement.sql();
                    try (Statement executed = sandbox.createStatement()) {
                        executed.execute(sql);
                    } catch (SQLException e) {
                        if ((keyword.equals("SET") || keyword.equals("RESET")) && fullMessage(e).startsWith("Catalog Error")) {
                            // A setting DuckDB does not know without an extension (httpfs's s3_*): validate loads none.
                            outcome.warnings().add(problem(path, script, statement, fullMessage(e) + " (not checked: validate loads no "
                                    + "extensions; the pipeline's DuckDB loads them when it runs)"));
                            continue;
                        }
                        throw e;
                    }
                } else {
                    String note = keyword + " on line " + lineOf(path, script, statement);
                    notRun.add(note);
                    outcome.notRun().add(note);
                }
            } catch (SQLException e) {
                report(path, script, statement, e, outcome);
            }
        }
    }

    /**
     * A view statement runs in the sandbox through the views' front door, so a view over the sandbox's (empty)
     * tables is compiled as the pipeline would compile it: an unsupported query is refused here.
     */
    private void runViewStatement(String path, String script, SqlScript.Statement statement, Outcome outcome) {
        try {
            if (front == null) {
                views = MaterializedViews.attach(sandbox.unwrap(DuckDBConnection.class));
                front = new ViewSql(views);
            }
            front.execute(statement.sql()).close();
        } catch (SQLException e) {
            report(path, script, statement, e, outcome);
        } catch (MallardException e) {
            outcome.errors().add(problem(path, script, statement, e.errorCode(), e.getMessage()));
        }
    }

    /**
     * Each window's buckets: a handler statement that inserts into a window's table must cut its buckets as
     * {@code time_bucket(INTERVAL '<size_seconds> seconds', event_time)}, the buckets the window judges lateness and
     * closes on (the interval is compared by DuckDB, so {@code INTERVAL 1 HOUR} is a 3600-second window's too). A
     * StructuredBatch table must have {@code event_time TIMESTAMPTZ}, where the record's time arrives.
     */
    Check window() {
        JsonNode tables = yaml.root().path("tables").path("sql");
        Outcome outcome = new Outcome(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
        boolean any = false;
        JsonNode handler = yaml.root().path("pipeline").path("handler");
        String script = handler.path("sql").asText("");
        List<SqlScript.Statement> statements = SqlScript.split(script);
        for (int i = 0; i < tables.size(); i++) {
            JsonNode window = tables.get(i).path("window");
            if (!window.isObject()) {
                continue;
            }
            any = true;
            String table = tables.get(i).path("name").asText();
            long size = window.path("size_seconds").asLong();
            String expected = "time_bucket(INTERVAL '" + size + " seconds', event_time)";
            boolean inserts = false;
            for (SqlScript.Statement statement : statements) {
                Matcher insert = INSERT_INTO.matcher(statement.sql().strip());
                if (!insert.find() || !unquoted(lastPart(insert.group(1))).equalsIgnoreCase(table)) {
                    continue;
                }
                inserts = true;
                List<List<String>> calls = timeBucketCalls(statement.sql());
                if (calls.isEmpty()) {
                    outcome.errors().add(handlerProblem(script, statement, "inserts into window table " + table + " without " + expected
                            + ": the window closes and judges lateness on those buckets; cut them with exactly that expression"));
                }
                for (List<String> arguments : calls) {
                    if (!bucketsLike(arguments, size)) {
                        outcome.errors().add(handlerProblem(script, statement, "window table " + table + " is filled with time_bucket("
                                + String.join(", ", arguments) + "); a " + size + "-second window needs " + expected
                                + " (no origin or offset: the window's buckets start at time_bucket's own origin)"));
                    }
                }
            }
            if (!inserts) {
                outcome.warnings().add(windowProblem("pipeline.handler.sql", "the handler does not INSERT INTO window table " + table
                        + " (checked per statement); whatever fills it must cut buckets as " + expected));
            }
        }
        if (!any) {
            return Check.skipped("sql.window", "no table declares a window");
        }
        if (handler.path("type").asText().equals("handlers.StructuredBatch") && handler.path("table").isTextual()) {
            String table = handler.path("table").asText();
            try (PreparedStatement column = sandbox.prepareStatement(
                    "SELECT data_type FROM duckdb_columns() WHERE table_name = ? AND column_name = 'event_time'")) {
                column.setString(1, table);
                try (ResultSet rows = column.executeQuery()) {
                    if (!rows.next()) {
                        outcome.errors().add(windowProblem("pipeline.handler.table", "StructuredBatch table " + table
                                + " has no event_time column, where a windowed pipeline's record time arrives; add `event_time TIMESTAMPTZ`"));
                    } else if (!rows.getString(1).equals("TIMESTAMP WITH TIME ZONE")) {
                        outcome.errors().add(windowProblem("pipeline.handler.table", "StructuredBatch table " + table + " declares event_time "
                                + rows.getString(1) + "; a windowed pipeline needs `event_time TIMESTAMPTZ`"));
                    }
                }
            } catch (SQLException e) {
                outcome.notRun().add("pipeline.handler.table (" + firstLine(e) + ")");
            }
        }
        return toCheck("sql.window", outcome, false);
    }

    /** The arguments of every time_bucket call in a statement, as text split at the top-level commas. */
    private static List<List<String>> timeBucketCalls(String sql) {
        List<List<String>> calls = new ArrayList<>();
        Matcher call = TIME_BUCKET.matcher(sql);
        while (call.find()) {
            List<String> arguments = new ArrayList<>();
            int depth = 0;
            char quote = 0;
            StringBuilder argument = new StringBuilder();
            for (int i = call.end(); i < sql.length(); i++) {
                char c = sql.charAt(i);
                if (quote != 0) {
                    if (c == quote) {
                        quote = 0;
                    }
                } else if (c == '\'' || c == '"') {
                    quote = c;
                } else if (c == '(') {
                    depth++;
                } else if (c == ')' && depth-- == 0) {
                    arguments.add(argument.toString().strip());
                    break;
                } else if (c == ',' && depth == 0) {
                    arguments.add(argument.toString().strip());
                    argument.setLength(0);
                    continue;
                }
                argument.append(c);
            }
            calls.add(arguments);
        }
        return calls;
    }

    /** Whether time_bucket's arguments are (an interval DuckDB equals to this many seconds, event_time). */
    private boolean bucketsLike(List<String> arguments, long sizeSeconds) {
        if (arguments.size() != 2 || !unquoted(lastPart(arguments.get(1))).equalsIgnoreCase("event_time")) {
            return false;
        }
        try (PreparedStatement same = sandbox.prepareStatement("SELECT (" + arguments.get(0) + ")::INTERVAL = to_seconds(?)")) {
            same.setLong(1, sizeSeconds);
            try (ResultSet rows = same.executeQuery()) {
                return rows.next() && rows.getBoolean(1);
            }
        } catch (SQLException e) {
            return false;
        }
    }

    private static String lastPart(String name) {
        int dot = name.lastIndexOf('.');
        return dot < 0 ? name.strip() : name.substring(dot + 1).strip();
    }

    private static String unquoted(String name) {
        return name.length() >= 2 && name.startsWith("\"") && name.endsWith("\"") ? name.substring(1, name.length() - 1).replace("\"\"", "\"") : name;
    }

    private ConfigProblem handlerProblem(String script, SqlScript.Statement statement, String message) {
        String path = "pipeline.handler.sql";
        int line = lineOf(path, script, statement);
        LocatedYaml.Location at = yaml.locate(path);
        return new ConfigProblem(file, line, line == at.line() ? at.column() : 1, path, ErrorCode.USER_CONFIG_INVALID, message);
    }

    /** Prepares a statement and reports only parser errors: binding needs tables this check cannot know. */
    private void syntaxOnly(String path, String script, SqlScript.Statement statement, Outcome outcome) {
        try (PreparedStatement ignored = sandbox.prepareStatement(statement.sql())) {
            // Bound as well: nothing more to say.
        } catch (SQLException e) {
            String message = firstLine(e);
            if (message.startsWith("Parser Error")) {
                outcome.errors().add(problem(path, script, statement, message));
            }
        }
    }

    private void report(String path, String script, SqlScript.Statement statement, SQLException e, Outcome outcome) {
        String message = fullMessage(e);
        boolean mayDependOnSkipped = !notRun.isEmpty()
                && (message.startsWith("Catalog Error") || message.startsWith("Binder Error") || message.startsWith("IO Error"));
        if (message.startsWith("IO Error")) {
            outcome.warnings().add(problem(path, script, statement, message
                    + " (a file that is not here may exist where the pipeline runs; not checked further)"));
        } else if (mayDependOnSkipped) {
            outcome.warnings().add(problem(path, script, statement, message + " (not checked further: it may depend on "
                    + String.join(", ", notRun) + ", which validate does not run)"));
        } else {
            outcome.errors().add(problem(path, script, statement, message));
        }
    }

    private ConfigProblem problem(String path, String script, SqlScript.Statement statement, String message) {
        return problem(path, script, statement, ErrorCode.USER_SQL_INVALID, message);
    }

    private ConfigProblem problem(String path, String script, SqlScript.Statement statement, ErrorCode code, String message) {
        int line = lineOf(path, script, statement);
        LocatedYaml.Location at = yaml.locate(path);
        return new ConfigProblem(file, line, line == at.line() ? at.column() : 1, path, code, message);
    }

    /** The file line of a statement: a block scalar ({@code sql: |}) starts on the line after its key. */
    private int lineOf(String path, String script, SqlScript.Statement statement) {
        LocatedYaml.Location at = yaml.locate(path);
        int keyLine = at.line();
        String text = keyLine >= 1 && keyLine <= renderedLines.length ? renderedLines[keyLine - 1] : "";
        int colon = text.indexOf(':');
        String after = colon >= 0 ? text.substring(colon + 1).strip() : "";
        boolean block = after.startsWith("|") || after.startsWith(">");
        return block ? keyLine + statement.line() : keyLine + statement.line() - 1;
    }

    /** DuckDB's whole message on one line: its hints (what to install, what to run) are after the first. */
    private static String fullMessage(SQLException e) {
        return String.join(" ", String.valueOf(e.getMessage()).lines().map(String::strip).filter(line -> !line.isEmpty()).toList());
    }

    private static String firstLine(SQLException e) {
        String message = String.valueOf(e.getMessage());
        int newline = message.indexOf('\n');
        return newline < 0 ? message : message.substring(0, newline);
    }

    private Check toCheck(String name, Outcome outcome, boolean nothingToCheck) {
        if (nothingToCheck) {
            return Check.skipped(name, "there is no SQL to check");
        }
        Optional<String> skipped = outcome.notRun().isEmpty() ? Optional.empty()
                : Optional.of("not run by validate (they reach outside the configuration): " + String.join(", ", outcome.notRun()));
        return Check.of(name, outcome.errors(), outcome.warnings(), skipped);
    }

    @Override
    public void close() throws SQLException {
        if (views != null) {
            views.close();
        }
        sandbox.close();
    }
}
