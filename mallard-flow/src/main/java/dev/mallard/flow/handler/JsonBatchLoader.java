// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.handler;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlText;
import dev.mallard.core.sql.TableName;
import dev.mallard.flow.source.Message;
import java.nio.charset.StandardCharsets;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.duckdb.DuckDBConnection;

/**
 * Moves a batch of raw JSON messages into a DuckDB table in one statement.
 *
 * <p>The message bytes reach DuckDB as one Arrow column (see {@link ArrowLines}); one statement then parses
 * each line once and converts every column (see {@link Extraction}): VARCHAR keeps the decoded string (or the
 * JSON text of anything else), scalar types are cast strictly, STRUCT/MAP/list columns go through
 * {@code json_transform}, which makes missing nested keys NULL but also turns a nested value of the wrong
 * type into NULL. A missing key and an explicit null both load as NULL. Blank messages are skipped.
 *
 * <p>When the statement fails, each message is tried on its own (only then) and a
 * {@link BadMessagesException} names every message that does not fit, its column and DuckDB's reason. Nothing
 * of the batch is written in that case.
 *
 * <p>Uses the caller's connection and must stay on the thread that owns it. Table names are single
 * identifiers, always quoted. Closing the loader frees its Arrow memory, not the connection.
 */
public final class JsonBatchLoader implements AutoCloseable {
    private static final int ERRORS_IN_MESSAGE = 3;
    // One message and where it came from as parameters, named once even when two extractions read it.
    private static final String ONE_LINE = "FROM (SELECT CAST(? AS VARCHAR) AS line, CAST(? AS VARCHAR) AS " + ArrowLines.TOPIC
            + ", CAST(? AS INTEGER) AS " + ArrowLines.PARTITION + ", CAST(? AS BIGINT) AS " + ArrowLines.OFFSET
            + ", make_timestamptz(CAST(? AS BIGINT)) AS " + ArrowLines.EVENT_TIME + ")";

    private final DuckDBConnection connection;
    private final Function<Message, String> where;
    private final RecordColumns records;
    private final Optional<EventTimeReader> eventTimes;
    private final BufferAllocator allocator = new RootAllocator();

    /** A loader that names messages by {@link Message#position()}, with no event time configured. */
    public JsonBatchLoader(DuckDBConnection connection) {
        this(connection, Message::position, RecordColumns.NONE);
    }

    /**
     * @param where how an error names a message, e.g. {@code m -> "line " + (m.offset() + 1)} for a file
     * @param records which columns are filled from the record rather than its JSON
     */
    public JsonBatchLoader(DuckDBConnection connection, Function<Message, String> where, RecordColumns records) {
        this.connection = requireNonNull(connection, "connection is null");
        this.where = requireNonNull(where, "where is null");
        this.records = requireNonNull(records, "records is null");
        this.eventTimes = EventTimeReader.of(records);
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
        return load(batch, TableName.of(requireNonNull(targetTable, "targetTable is null")), columns);
    }

    /** {@link #load(List, String, List)} into a table that may be qualified by its schema or database. */
    public long load(List<Message> batch, TableName targetTable, List<Column> columns) {
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
        Extraction extraction = new Extraction(columns, false, records);
        String sql = "INSERT INTO " + targetTable.quoted() + " (" + names + ") "
                + extraction.select("line", "FROM " + ArrowLines.VIEW);
        return run(batch, extraction, sql, "table \"" + targetTable + "\"");
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
        Extraction extraction = new Extraction(columns, true, records);
        String sql = "CREATE OR REPLACE TEMP TABLE " + SqlText.identifier(table) + " AS "
                + extraction.select("line", "FROM " + ArrowLines.VIEW);
        return run(batch, extraction, sql, "table \"" + table + "\"");
    }

    /** The columns of a table and their DuckDB types, in table order, as {@code DESCRIBE} reports them. */
    public static List<Column> describe(DuckDBConnection connection, String table) {
        return describe(connection, TableName.of(requireNonNull(table, "table is null")));
    }

    /** {@link #describe(DuckDBConnection, String)} of a table that may be qualified by its schema or database. */
    public static List<Column> describe(DuckDBConnection connection, TableName table) {
        requireNonNull(connection, "connection is null");
        requireNonNull(table, "table is null");
        List<Column> columns = new ArrayList<>();
        try (Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("DESCRIBE " + table.quoted())) {
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

    /** Frees the loader's Arrow memory. The connection stays open: it belongs to the caller. */
    @Override
    public void close() {
        allocator.close();
    }

    private long run(List<Message> batch, Extraction extraction, String sql, String target) {
        List<BadMessage> bad = new ArrayList<>();
        List<Message> lines = new ArrayList<>(batch.size());
        for (int i = 0; i < batch.size(); i++) {
            Message message = batch.get(i);
            int kind = RawJson.classify(message.value());
            if (kind == RawJson.OBJECT && eventTimes.isPresent() && !message.hasEventTime()) {
                try {
                    message = message.withEventTime(eventTimes.get().read(message.value()));
                } catch (IllegalArgumentException e) {
                    bad.add(new BadMessage(i, message, where.apply(message), RecordColumns.EVENT_TIME, e.getMessage()));
                    continue;
                }
            }
            if (kind == RawJson.OBJECT) {
                lines.add(message);
            } else if (kind != RawJson.BLANK) {
                bad.add(new BadMessage(i, message, where.apply(message), null, RawJson.describe(kind)));
            }
        }
        if (!bad.isEmpty()) {
            throw diagnose(batch, extraction, bad, null, target);
        }
        SQLException failure = null;
        try (ArrowLines registered = ArrowLines.register(connection, allocator, lines);
                Statement statement = connection.createStatement()) {
            statement.execute(sql);
        } catch (SQLException e) {
            failure = e;
        }
        if (failure != null) {
            if (isStatementError(failure)) {
                throw new MallardException(ErrorCode.USER_HANDLER_SQL_FAILED,
                        "loading a batch into " + target + " failed before reading any message: "
                                + firstLine(failure) + "; check the table's name and column types", failure);
            }
            throw diagnose(batch, extraction, bad, failure, target);
        }
        return lines.size();
    }

    /**
     * Finds the messages that made the statement fail by trying each one alone. Slow, and only run once the
     * batch has failed.
     */
    private MallardException diagnose(List<Message> batch, Extraction extraction, List<BadMessage> known,
            SQLException cause, String target) {
        List<BadMessage> bad = new ArrayList<>(known);
        boolean[] done = new boolean[batch.size()];
        for (BadMessage message : known) {
            done[message.index()] = true;
        }
        String wholeSql = extraction.select("line", ONE_LINE);
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
                    evaluate(whole, message, text);
                } catch (SQLException e) {
                    // DuckDB closes a statement that failed, so prepare a fresh one for the next message.
                    closeQuietly(whole);
                    whole = null;
                    bad.add(locate(i, message, text, extraction, e));
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
    private BadMessage locate(int index, Message message, String text, Extraction extraction, SQLException failure) {
        String position = where.apply(message);
        try (PreparedStatement parse = connection.prepareStatement("SELECT CAST(? AS JSON)")) {
            parse.setString(1, text);
            drain(parse);
        } catch (SQLException e) {
            return new BadMessage(index, message, position, null, "the message is not valid JSON: " + firstLine(e));
        }
        List<Column> columns = extraction.columns();
        for (int c = 0; c < columns.size(); c++) {
            try (PreparedStatement one = connection.prepareStatement(extraction.selectOne(c, "line", ONE_LINE))) {
                evaluate(one, message, text);
            } catch (SQLException e) {
                return new BadMessage(index, message, position, columns.get(c).name(), firstLine(e));
            }
        }
        return new BadMessage(index, message, position, null, firstLine(failure));
    }

    /** An error of the statement itself (a name, a type), which trying each message alone would blame on all. */
    private static boolean isStatementError(SQLException e) {
        String message = e.getMessage() == null ? "" : e.getMessage();
        return message.startsWith("Binder Error") || message.startsWith("Catalog Error")
                || message.startsWith("Parser Error");
    }

    private static void evaluate(PreparedStatement statement, Message message, String text) throws SQLException {
        statement.setString(1, text);
        statement.setString(2, message.topic());
        statement.setInt(3, RecordColumns.partitionOf(message));
        statement.setLong(4, message.offset());
        if (message.hasEventTime()) {
            statement.setLong(5, message.eventTime());
        } else {
            statement.setNull(5, java.sql.Types.BIGINT);
        }
        drain(statement);
    }

    private static void drain(PreparedStatement statement) throws SQLException {
        try (ResultSet rows = statement.executeQuery()) {
            while (rows.next()) {
                rows.getObject(1);
            }
        }
    }

    private static void requireColumns(List<Column> columns) {
        requireNonNull(columns, "columns is null");
        if (columns.isEmpty()) {
            throw new IllegalArgumentException("columns is empty");
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
