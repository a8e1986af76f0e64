// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink.postgres;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mallard.core.arrow.ArrowExport;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.flow.sink.ResultTable;
import dev.mallard.flow.sink.Sink;
import java.io.IOException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Collectors;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyIn;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes each batch into a Postgres table. {@link #write} COPYs the batch into a temporary table and moves it into
 * the destination with one INSERT ... ON CONFLICT (key) DO UPDATE (upsert) or INSERT ... SELECT (append into a
 * view); append into a table COPYs into the table itself. {@link #flush} commits. The staging table and the
 * destination's column types are set up once per connection and set of result columns, not per batch, so a
 * batch costs three round trips: COPY, INSERT, COMMIT (append: COPY, COMMIT). Everything written between two flushes is one transaction, so a batch is in the table
 * whole or not at all, and a batch replayed after a crash leaves an upsert table as if delivered once.
 *
 * <p>The connection opens on first use and again after it broke; a server that cannot be reached is
 * {@code system.sink.unreachable} (retried by sink.retry), a value Postgres refuses {@code system.sink.write_failed}.
 */
public final class PostgresSink implements Sink {
    private static final Logger LOG = LoggerFactory.getLogger(PostgresSink.class);
    private static final String WHERE = "pipeline.sink.postgres";
    private static final int ARROW_BATCH_ROWS = 8192;
    /** Postgres types without an equality operator, which an upsert compares by their text. */
    private static final java.util.Set<String> WITHOUT_EQUALITY = java.util.Set.of("json", "xml", "point", "line", "lseg", "box",
            "path", "polygon", "circle", "_json", "_xml");

    public enum Mode {
        APPEND, UPSERT
    }

    /** The sink's block, checked. */
    public record Settings(PostgresDsn dsn, PostgresTable table, Mode mode, List<String> key) {
        public Settings {
            requireNonNull(dsn, "dsn is null");
            requireNonNull(table, "table is null");
            requireNonNull(mode, "mode is null");
            key = List.copyOf(key);
        }

        /**
         * @param retry the sink's retry block: its deadline bounds how long one connection attempt may take
         * @throws MallardException {@code user.config.invalid} for a bad dsn or table, or upsert without a key
         */
        public static Settings of(JsonNode block, JsonNode retry) {
            PostgresDsn dsn = PostgresDsn.parse(block.path("dsn").asText(), WHERE + ".dsn");
            Properties properties = dsn.properties();
            int deadline = Math.max(1, retry.path("deadline_seconds").asInt(10));
            properties.putIfAbsent("connectTimeout", Integer.toString(Math.min(deadline, 10)));
            properties.putIfAbsent("loginTimeout", Integer.toString(Math.min(deadline, 10)));
            properties.putIfAbsent("tcpKeepAlive", "true");
            properties.putIfAbsent("ApplicationName", "mallard");
            PostgresTable table = PostgresTable.parse(block.path("table").asText(), WHERE + ".table");
            Mode mode = Mode.valueOf(block.path("mode").asText("append").toUpperCase(Locale.ROOT));
            List<String> key = new ArrayList<>();
            block.path("key").forEach(column -> key.add(column.asText()));
            if (mode == Mode.UPSERT && key.isEmpty()) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, WHERE + ".mode is upsert but " + WHERE
                        + ".key is missing or empty; list the columns of the table's primary key or unique index");
            }
            if (mode == Mode.APPEND && !key.isEmpty()) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, WHERE + ".key is only read in upsert mode;"
                        + " set mode: upsert or remove key");
            }
            return new Settings(dsn, table, mode, key);
        }
    }

    private final Settings settings;
    private final BufferAllocator allocator;
    private Connection connection;
    private boolean inTransaction;
    /**
     * What this session knows of the destination and of its staging table; forgotten with the connection, and
     * after a failed load, whose rollback may have undone the staging table's creation.
     */
    private Session session;

    /**
     * @param direct append mode into a table (not a view): COPY into it without a staging table
     * @param columns the batch's columns (name to DuckDB type) the copy columns were made for
     * @param copyColumns the batch's columns with the destination's types
     * @param stageEmpty the staging table exists and holds no row (just created, or emptied by a commit)
     */
    private record Session(boolean direct, Map<String, String> columns, List<CopyColumn> copyColumns, boolean stageEmpty) {
        boolean fits(Map<String, String> batchColumns) {
            return columns.equals(batchColumns);
        }
    }

    public PostgresSink(Settings settings, BufferAllocator allocator) {
        this.settings = requireNonNull(settings, "settings is null");
        this.allocator = requireNonNull(allocator, "allocator is null");
    }

    @Override
    public void write(ResultTable batch) {
        if (batch.isEmpty()) {
            return;
        }
        Map<String, String> duckDbTypes = describe(batch);
        for (String column : settings.key()) {
            if (!duckDbTypes.containsKey(column)) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, WHERE + ".key names column " + column
                        + ", which the handler's result does not have; its columns are " + String.join(", ", duckDbTypes.keySet()));
            }
        }
        LoadStatements load = new LoadStatements(settings.table(), List.copyOf(duckDbTypes.keySet()), settings.mode(), settings.key());
        Connection postgres = connection();
        String step = "reading the table's columns";
        try {
            inTransaction = true;
            Session current = session(postgres, load, duckDbTypes);
            if (current.direct()) {
                step = "copying the batch";
                long copied = copy(batch, postgres, load.copyIntoTable(), current.copyColumns());
                LOG.debug("postgres batch copied table={} rows={}", settings.table(), copied);
                return;
            }
            if (!current.stageEmpty()) {
                step = "emptying the staging table";
                try (Statement statement = postgres.createStatement()) {
                    statement.execute(load.emptyStage());
                }
            }
            // From here until the commit the staging table holds rows (or, after a failure, pages of them).
            session = new Session(false, current.columns(), current.copyColumns(), false);
            step = "copying the batch";
            long copied = copy(batch, postgres, load.copy(), current.copyColumns());
            step = settings.mode() == Mode.APPEND ? "inserting the batch" : "upserting the batch";
            try (Statement statement = postgres.createStatement()) {
                int changed = statement.executeUpdate(load.merge(current.copyColumns().stream()
                        .filter(column -> WITHOUT_EQUALITY.contains(column.postgresType()))
                        .map(CopyColumn::name)
                        .collect(Collectors.toSet())));
                LOG.debug("postgres batch loaded table={} rows={} changed={}", settings.table(), copied, changed);
            }
        } catch (SQLException e) {
            throw failed(e, step);
        }
    }

    /**
     * This session's load path for the batch's columns: found once per connection and per column set, not per
     * batch. Creates the staging table (in the current transaction) when the path needs one.
     */
    private Session session(Connection postgres, LoadStatements load, Map<String, String> duckDbTypes) throws SQLException {
        if (session != null && session.fits(duckDbTypes)) {
            return session;
        }
        boolean direct = settings.mode() == Mode.APPEND && isTable(postgres);
        session = null;
        List<CopyColumn> columns;
        try (Statement statement = postgres.createStatement()) {
            if (direct) {
                columns = copyColumns(statement, load.describeTable(), duckDbTypes);
            } else {
                // One may be left from other columns, or from before a failed load this session forgot.
                statement.execute(load.dropStage());
                statement.execute(load.createStage());
                columns = copyColumns(statement, "SELECT * FROM " + LoadStatements.STAGE + " LIMIT 0", duckDbTypes);
            }
        }
        session = new Session(direct, Map.copyOf(duckDbTypes), columns, !direct);
        return session;
    }

    /** A table or partitioned table, which COPY fills; a view (say) goes through the staging table and INSERT. */
    private boolean isTable(Connection postgres) throws SQLException {
        try (var statement = postgres.prepareStatement("SELECT relkind FROM pg_class WHERE oid = to_regclass(?)")) {
            statement.setString(1, settings.table().sql());
            try (ResultSet result = statement.executeQuery()) {
                return result.next() && (result.getString(1).equals("r") || result.getString(1).equals("p"));
            }
        }
    }

    @Override
    public void flush() {
        if (!inTransaction) {
            return;
        }
        try {
            connection.commit();
            inTransaction = false;
            if (session != null && !session.direct()) {
                session = new Session(false, session.columns(), session.copyColumns(), true); // ON COMMIT DELETE ROWS
            }
        } catch (SQLException e) {
            throw failed(e, "committing the batch");
        }
    }

    private Map<String, String> describe(ResultTable batch) {
        Map<String, String> types = new LinkedHashMap<>();
        try (Statement statement = batch.connection().createStatement();
                ResultSet result = statement.executeQuery("SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM " + batch.name() + ")")) {
            while (result.next()) {
                types.put(result.getString(1), result.getString(2));
            }
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_SINK_WRITE_FAILED, "postgres sink: cannot read the batch: " + e.getMessage(), e);
        }
        return types;
    }

    private static List<CopyColumn> copyColumns(Statement statement, String noRows, Map<String, String> duckDbTypes) throws SQLException {
        Map<String, String> postgresTypes = new HashMap<>();
        try (ResultSet result = statement.executeQuery(noRows)) {
            ResultSetMetaData meta = result.getMetaData();
            for (int i = 1; i <= meta.getColumnCount(); i++) {
                postgresTypes.put(meta.getColumnName(i), meta.getColumnTypeName(i));
            }
        }
        return duckDbTypes.entrySet().stream()
                .map(column -> new CopyColumn(column.getKey(), column.getValue(), postgresTypes.getOrDefault(column.getKey(), "text")))
                .toList();
    }

    private long copy(ResultTable batch, Connection postgres, String copySql, List<CopyColumn> columns) throws SQLException {
        String select = "SELECT " + columns.stream().map(CopyColumn::expression).collect(Collectors.joining(", ")) + " FROM " + batch.name();
        CopyIn copy = postgres.unwrap(PGConnection.class).getCopyAPI().copyIn(copySql);
        try (Statement statement = batch.connection().createStatement();
                ResultSet result = statement.executeQuery(select);
                ArrowReader reader = ArrowExport.export(result, allocator, ARROW_BATCH_ROWS)) {
            CopyTextWriter writer = new CopyTextWriter(copy);
            while (reader.loadNextBatch()) {
                writer.write(reader.getVectorSchemaRoot());
            }
            return writer.finish();
        } catch (SQLException e) {
            if (copy.isActive() && !(e instanceof org.postgresql.util.PSQLException)) {
                copy.cancelCopy();
            }
            throw e;
        } catch (IOException e) {
            if (copy.isActive()) {
                copy.cancelCopy();
            }
            throw new MallardException(ErrorCode.SYSTEM_SINK_WRITE_FAILED, "postgres sink: cannot read the batch: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            if (copy.isActive()) {
                copy.cancelCopy();
            }
            throw e;
        }
    }

    private Connection connection() {
        if (connection != null) {
            return connection;
        }
        try {
            Connection opened = new org.postgresql.Driver().connect(settings.dsn().jdbcUrl(), settings.dsn().properties());
            if (opened == null) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, WHERE + ".dsn is not a URL the Postgres driver accepts");
            }
            opened.setAutoCommit(false);
            LOG.info("postgres sink connected to={} table={} mode={}", settings.dsn().description(), settings.table(),
                    settings.mode().name().toLowerCase(Locale.ROOT));
            connection = opened;
            return opened;
        } catch (SQLException e) {
            throw PostgresFailure.of(e, "connecting", settings.table(), settings.dsn().description());
        }
    }

    /** Rolls back (or drops a broken connection) so the next attempt starts clean, and says what went wrong. */
    private MallardException failed(SQLException e, String step) {
        inTransaction = false;
        // The rollback may undo the staging table's creation, or the table's columns may be what failed.
        session = null;
        MallardException failure = PostgresFailure.of(e, step, settings.table(), settings.dsn().description());
        boolean broken = failure.errorCode() == ErrorCode.SYSTEM_SINK_UNREACHABLE;
        try {
            if (!broken && connection != null && !connection.isClosed()) {
                connection.rollback();
            } else {
                broken = true;
            }
        } catch (SQLException rollbackFailed) {
            failure.addSuppressed(rollbackFailed);
            broken = true;
        }
        if (broken) {
            closeQuietly();
        }
        return failure;
    }

    private void closeQuietly() {
        session = null;
        if (connection != null) {
            try {
                connection.close();
            } catch (SQLException e) {
                LOG.debug("closing a broken postgres connection failed error={}", e.toString());
            }
            connection = null;
        }
    }

    @Override
    public void close() {
        if (connection != null) {
            try {
                if (inTransaction) {
                    connection.rollback();
                }
                connection.close();
            } catch (SQLException e) {
                LOG.warn("closing the postgres connection failed error={}", e.toString());
            }
            connection = null;
            session = null;
        }
    }

    @Override
    public String toString() {
        return "postgres sink " + settings.dsn().description() + " table " + settings.table();
    }
}
