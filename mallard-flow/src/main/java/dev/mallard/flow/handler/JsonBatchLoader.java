package dev.mallard.flow.handler;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.flow.source.Message;
import java.nio.charset.StandardCharsets;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.duckdb.DuckDBAppender;
import org.duckdb.DuckDBConnection;

/**
 * Moves a batch of raw JSON messages into a DuckDB table in one statement.
 *
 * <p>The message bytes go into a temp table {@code mallard_raw(line VARCHAR)} through the appender, then
 * {@code json_extract(line, [paths])} parses each line once and one expression per column converts its part:
 * <ul>
 *   <li>VARCHAR: {@code ->> '$'}, which unquotes and decodes escapes (a cast to VARCHAR would keep the
 *       quotes); an object, list or number arriving there is kept as its JSON text.
 *   <li>JSON: the extracted JSON as it is, bar a JSON null, which becomes NULL.
 *   <li>STRUCT, MAP, UNION and lists: {@code json_transform}, which makes a missing nested key NULL. It is
 *       also lenient about types: a nested value that does not convert becomes NULL rather than an error.
 *   <li>Anything else: {@code CAST}, which fails on a value that does not convert.
 * </ul>
 * A missing key and an explicit null both load as NULL.
 *
 * <p>When the statement fails, each message is tried on its own (only then) and a
 * {@link BadMessagesException} names every message that does not fit, its column and DuckDB's reason. Nothing
 * of the batch is written in that case.
 *
 * <p>Uses the caller's connection and must stay on the thread that owns it. Table names are single
 * identifiers, always quoted.
 */
public final class JsonBatchLoader {
    private static final String RAW_TABLE = "mallard_raw";
    private static final String RAW = "temp.main." + RAW_TABLE;
    private static final Pattern NESTED = Pattern.compile("(?i)^\\s*(STRUCT|MAP|UNION)\\s*\\(.*|.*\\]\\s*$", Pattern.DOTALL);
    private static final int ERRORS_IN_MESSAGE = 3;

    private final DuckDBConnection connection;
    private final Function<Message, String> where;

    /** A loader that names messages by {@link Message#position()}. */
    public JsonBatchLoader(DuckDBConnection connection) {
        this(connection, Message::position);
    }

    /**
     * @param where how an error names a message, e.g. {@code m -> "line " + (m.offset() + 1)} for a file
     */
    public JsonBatchLoader(DuckDBConnection connection, Function<Message, String> where) {
        this.connection = requireNonNull(connection, "connection is null");
        this.where = requireNonNull(where, "where is null");
        execute("CREATE OR REPLACE TEMP TABLE " + RAW_TABLE + "(line VARCHAR)");
    }

    /**
     * Inserts the batch into an existing table (handlers.StructuredBatch). The caller empties the table when
     * it wants to; this only inserts. Blank messages are skipped.
     *
     * @param columns the columns to fill, each read from the top-level key of the same name; typically
     *     {@link #describe(DuckDBConnection, String)} of the table
     * @return the number of rows inserted
     * @throws BadMessagesException when messages do not fit; nothing is inserted then
     */
    public long load(List<Message> batch, String targetTable, List<Column> columns) {
        requireNonNull(batch, "batch is null");
        requireNonNull(targetTable, "targetTable is null");
        requireColumns(columns);
        StringBuilder names = new StringBuilder();
        for (Column column : columns) {
            if (!names.isEmpty()) {
                names.append(", ");
            }
            names.append(SqlText.identifier(column.name()));
        }
        String sql = "INSERT INTO " + SqlText.identifier(targetTable) + " (" + names + ") "
                + select(columns, false, "FROM " + RAW, "line");
        return run(batch, columns, false, sql, "table \"" + targetTable + "\"");
    }

    /**
     * Creates (or replaces) a temp table whose columns have exactly the given types and loads the batch into
     * it (handlers.InferredMemBatch, with columns from {@link SchemaInference}). An empty batch makes an empty
     * table.
     *
     * @return the number of rows loaded
     * @throws BadMessagesException when messages do not fit; the table is then left as it was
     */
    public long createAndLoad(List<Message> batch, String table, List<Column> columns) {
        requireNonNull(batch, "batch is null");
        requireNonNull(table, "table is null");
        requireNonNull(columns, "columns is null");
        if (columns.isEmpty()) {
            throw new MallardException(ErrorCode.USER_HANDLER_PARSE_FAILED,
                    "cannot create table \"" + table + "\" without columns: the batch's first message is an "
                            + "empty object {}; send messages with at least one key, or declare the table and "
                            + "use handlers.StructuredBatch");
        }
        String sql = "CREATE OR REPLACE TEMP TABLE " + SqlText.identifier(table) + " AS "
                + select(columns, true, "FROM " + RAW, "line");
        return run(batch, columns, true, sql, "table \"" + table + "\"");
    }

    /** The columns of a table and their DuckDB types, in table order, as {@code DESCRIBE} reports them. */
    public static List<Column> describe(DuckDBConnection connection, String table) {
        requireNonNull(connection, "connection is null");
        requireNonNull(table, "table is null");
        List<Column> columns = new ArrayList<>();
        try (Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("DESCRIBE " + SqlText.identifier(table))) {
            while (rows.next()) {
                columns.add(new Column(rows.getString("column_name"), rows.getString("column_type")));
            }
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.USER_HANDLER_SQL_FAILED,
                    "cannot read the columns of table \"" + table + "\": " + firstLine(e)
                            + "; create the table before the pipeline starts", e);
        }
        return List.copyOf(columns);
    }

    private long run(List<Message> batch, List<Column> columns, boolean castAll, String sql, String target) {
        execute("TRUNCATE " + RAW);
        RuntimeException failure = null;
        try {
            List<BadMessage> bad = new ArrayList<>();
            long rows = append(batch, bad);
            if (!bad.isEmpty()) {
                throw diagnose(batch, columns, castAll, bad, null, target);
            }
            try (Statement statement = connection.createStatement()) {
                statement.execute(sql);
            } catch (SQLException e) {
                throw diagnose(batch, columns, castAll, bad, e, target);
            }
            return rows;
        } catch (RuntimeException e) {
            failure = e;
            throw e;
        } finally {
            // Free the batch's text now rather than at the next batch, without hiding why the batch failed.
            try {
                execute("TRUNCATE " + RAW);
            } catch (MallardException e) {
                if (failure == null) {
                    throw e;
                }
                failure.addSuppressed(e);
            }
        }
    }

    private long append(List<Message> batch, List<BadMessage> bad) {
        long rows = 0;
        try (DuckDBAppender appender = connection.createAppender("temp", "main", RAW_TABLE)) {
            for (int i = 0; i < batch.size(); i++) {
                Message message = batch.get(i);
                byte[] value = message.value();
                int kind = RawJson.classify(value);
                if (kind == RawJson.OBJECT) {
                    appender.beginRow().append(value).endRow();
                    rows++;
                } else if (kind != RawJson.BLANK) {
                    bad.add(new BadMessage(i, message, where.apply(message), null, RawJson.describe(kind)));
                }
            }
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED,
                    "could not append a batch to DuckDB: " + firstLine(e), e);
        }
        return rows;
    }

    /**
     * Finds the messages that made the statement fail by trying each one alone. Slow, and only run once the
     * batch has failed.
     */
    private MallardException diagnose(List<Message> batch, List<Column> columns, boolean castAll,
            List<BadMessage> known, SQLException cause, String target) {
        List<BadMessage> bad = new ArrayList<>(known);
        boolean[] done = new boolean[batch.size()];
        for (BadMessage message : known) {
            done[message.index()] = true;
        }
        String wholeSql = select(columns, castAll, "", "CAST(? AS VARCHAR)");
        PreparedStatement whole = null;
        try {
            for (int i = 0; i < batch.size(); i++) {
                Message message = batch.get(i);
                if (done[i] || RawJson.isBlank(message.value())) {
                    continue;
                }
                String text = new String(message.value(), StandardCharsets.UTF_8);
                if (whole == null) {
                    whole = connection.prepareStatement(wholeSql);
                }
                try {
                    evaluate(whole, text);
                } catch (SQLException e) {
                    // DuckDB closes a statement that failed, so prepare a fresh one for the next message.
                    closeQuietly(whole);
                    whole = null;
                    bad.add(locate(i, message, text, columns, castAll, e));
                }
            }
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED,
                    "could not check the messages of a failed batch for " + target + ": " + firstLine(e), e);
        } finally {
            closeQuietly(whole);
        }
        if (bad.isEmpty()) {
            return new MallardException(ErrorCode.USER_HANDLER_SQL_FAILED,
                    "loading a batch of " + batch.size() + " messages into " + target + " failed, though each "
                            + "message converts on its own: " + (cause == null ? "unknown" : firstLine(cause))
                            + "; check the table's constraints", cause);
        }
        bad.sort(Comparator.comparingInt(BadMessage::index));
        StringBuilder text = new StringBuilder();
        text.append(bad.size()).append(bad.size() == 1 ? " message does" : " messages do")
                .append(" not fit ").append(target).append(": ");
        for (int i = 0; i < Math.min(ERRORS_IN_MESSAGE, bad.size()); i++) {
            if (i > 0) {
                text.append("; ");
            }
            text.append(bad.get(i).describe());
        }
        if (bad.size() > ERRORS_IN_MESSAGE) {
            text.append("; and ").append(bad.size() - ERRORS_IN_MESSAGE).append(" more");
        }
        text.append(". Fix the messages, or the table's column types so that the values fit.");
        return new BadMessagesException(text.toString(), bad, cause);
    }

    /** Names the first column whose expression fails for one message, or the message when it is not JSON. */
    private BadMessage locate(int index, Message message, String text, List<Column> columns, boolean castAll,
            SQLException failure) {
        String position = where.apply(message);
        String paths = paths(columns);
        try (PreparedStatement parse = connection.prepareStatement(
                "SELECT json_extract(CAST(? AS VARCHAR), " + paths + ")")) {
            evaluate(parse, text);
        } catch (SQLException e) {
            return new BadMessage(index, message, position, null, "the message is not valid JSON: " + firstLine(e));
        }
        for (int c = 0; c < columns.size(); c++) {
            Column column = columns.get(c);
            String sql = "SELECT " + expression(c + 1, column, castAll)
                    + " FROM (SELECT json_extract(CAST(? AS VARCHAR), " + paths + ") AS j)";
            try (PreparedStatement one = connection.prepareStatement(sql)) {
                evaluate(one, text);
            } catch (SQLException e) {
                return new BadMessage(index, message, position, column.name(), firstLine(e));
            }
        }
        return new BadMessage(index, message, position, null, firstLine(failure));
    }

    private static void evaluate(PreparedStatement statement, String text) throws SQLException {
        statement.setString(1, text);
        try (ResultSet rows = statement.executeQuery()) {
            while (rows.next()) {
                rows.getObject(1);
            }
        }
    }

    /** {@code SELECT <one expression per column> FROM (SELECT json_extract(<line>, [paths]) AS j <from>)}. */
    private static String select(List<Column> columns, boolean castAll, String from, String line) {
        StringBuilder sql = new StringBuilder("SELECT ");
        for (int c = 0; c < columns.size(); c++) {
            if (c > 0) {
                sql.append(", ");
            }
            Column column = columns.get(c);
            sql.append(expression(c + 1, column, castAll)).append(" AS ").append(SqlText.identifier(column.name()));
        }
        sql.append(" FROM (SELECT json_extract(").append(line).append(", ").append(paths(columns))
                .append(") AS j");
        if (!from.isEmpty()) {
            sql.append(' ').append(from);
        }
        return sql.append(')').toString();
    }

    private static String paths(List<Column> columns) {
        StringBuilder paths = new StringBuilder("[");
        for (int c = 0; c < columns.size(); c++) {
            if (c > 0) {
                paths.append(", ");
            }
            paths.append(SqlText.literal(SqlText.topLevelPointer(columns.get(c).name())));
        }
        return paths.append(']').toString();
    }

    /** The expression that turns the column's extracted JSON ({@code j[index]}) into a value of its type. */
    static String expression(int index, Column column, boolean castAll) {
        String json = "j[" + index + "]";
        String type = column.type().strip();
        String upper = type.toUpperCase(Locale.ROOT);
        String expression;
        if (upper.equals("VARCHAR") || upper.equals("TEXT") || upper.equals("STRING")) {
            expression = "(" + json + " ->> '$')";
        } else if (upper.equals("JSON")) {
            // json_extract gives a JSON null as the JSON text null; the column wants SQL NULL, as for a missing key.
            expression = "nullif(" + json + ", 'null')";
        } else if (NESTED.matcher(type).matches()) {
            // The type as a JSON string is a structure json_transform accepts whole, so no type parsing here.
            expression = "json_transform(" + json + ", " + SqlText.literal(SqlText.jsonString(type)) + ")";
        } else {
            return "CAST(" + json + " AS " + type + ")";
        }
        return castAll ? "CAST(" + expression + " AS " + type + ")" : expression;
    }

    private static void requireColumns(List<Column> columns) {
        requireNonNull(columns, "columns is null");
        if (columns.isEmpty()) {
            throw new IllegalArgumentException("columns is empty");
        }
    }

    private void execute(String sql) {
        try (Statement statement = connection.createStatement()) {
            statement.execute(sql);
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "DuckDB failed on " + sql + ": " + firstLine(e), e);
        }
    }

    private static void closeQuietly(PreparedStatement statement) {
        if (statement == null) {
            return;
        }
        try {
            statement.close();
        } catch (SQLException ignored) {
            // Closing a statement DuckDB already closed after an error: nothing left to release.
        }
    }

    private static String firstLine(SQLException e) {
        String message = e.getMessage() == null ? e.toString() : e.getMessage();
        int newline = message.indexOf('\n');
        return (newline < 0 ? message : message.substring(0, newline)).strip();
    }
}
