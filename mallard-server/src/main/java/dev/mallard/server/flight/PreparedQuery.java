package dev.mallard.server.flight;

import static java.util.Objects.requireNonNull;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import dev.mallard.server.session.ResultStream;
import dev.mallard.server.session.Session;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A prepared statement of a session, with the schemas it announced and the parameters last bound to it. A text for
 * the views' front door (a view statement or a {@code dbsp_*} call, which DuckDB cannot prepare) has no DuckDB
 * statement: it ran when prepared, so that its schema is known, and its first execution answers that outcome.
 */
final class PreparedQuery implements AutoCloseable {
    private final String sql;
    private final PreparedStatement statement;
    private Session.Outcome firstOutcome;
    private final Schema datasetSchema;
    private final Schema parameterSchema;
    private final long preparedAt;
    private volatile List<List<Object>> parameters = List.of();
    private final AtomicInteger running = new AtomicInteger();

    /** @param preparedAt the session's {@link Session#changes()} when DuckDB prepared the statement */
    PreparedQuery(String sql, PreparedStatement statement, Schema datasetSchema, Schema parameterSchema, long preparedAt) {
        this.sql = requireNonNull(sql, "sql is null");
        this.statement = statement;
        this.datasetSchema = requireNonNull(datasetSchema, "datasetSchema is null");
        this.parameterSchema = requireNonNull(parameterSchema, "parameterSchema is null");
        this.preparedAt = preparedAt;
    }

    /** A front-door text that ran at prepare; {@code first} is its outcome, answered by its first execution. */
    static PreparedQuery throughViews(String sql, Session.Outcome first, Schema datasetSchema, long preparedAt) {
        PreparedQuery prepared = new PreparedQuery(sql, null, datasetSchema, new Schema(List.of()), preparedAt);
        prepared.firstOutcome = requireNonNull(first, "first is null");
        return prepared;
    }

    /** The same DuckDB statement and schemas under a new handle, with no parameters bound: a kept statement reused. */
    PreparedQuery reopened() {
        return new PreparedQuery(sql, statement, datasetSchema, parameterSchema, preparedAt);
    }

    boolean runsThroughViews() {
        return statement == null;
    }

    long preparedAt() {
        return preparedAt;
    }

    /**
     * Whether the session may keep this statement for the next prepare of its text once the client closes it: a
     * DuckDB statement of one SQL statement (DuckDB runs the others of a text when preparing it, so reusing such a
     * text would skip them) that no DoGet is executing now.
     */
    boolean reusable() {
        return statement != null && running.get() == 0 && isOneStatement(sql);
    }

    /** No {@code ;} before the end of the text but trailing ones; a {@code ;} inside a literal only costs the reuse. */
    static boolean isOneStatement(String sql) {
        int end = sql.length();
        while (end > 0 && (sql.charAt(end - 1) == ';' || Character.isWhitespace(sql.charAt(end - 1)))) {
            end--;
        }
        return sql.lastIndexOf(';', end - 1) < 0;
    }

    /** Marks an execution in a DoGet; {@link #reusable()} is false until it ends. */
    void executing() {
        running.incrementAndGet();
    }

    void executed() {
        running.decrementAndGet();
    }

    /** The outcome of the run at prepare, once; later executions run the text again. */
    synchronized Optional<Session.Outcome> takeFirstOutcome() {
        Optional<Session.Outcome> first = Optional.ofNullable(firstOutcome);
        firstOutcome = null;
        return first;
    }

    String sql() {
        return sql;
    }

    PreparedStatement statement() {
        return statement;
    }

    Schema datasetSchema() {
        return datasetSchema;
    }

    Schema parameterSchema() {
        return parameterSchema;
    }

    /** Rows of parameter values; a query uses the first, an update runs once per row. */
    List<List<Object>> parameters() {
        return parameters;
    }

    void bind(List<List<Object>> rows) {
        this.parameters = List.copyOf(rows.stream().map(java.util.Collections::unmodifiableList).toList());
    }

    /** Sets one row of values on the statement; call under the session's lock. */
    void apply(List<Object> row) throws SQLException {
        statement.clearParameters();
        for (int i = 0; i < row.size(); i++) {
            statement.setObject(i + 1, row.get(i));
        }
    }

    @Override
    public void close() throws SQLException {
        takeFirstOutcome().flatMap(Session.Outcome::rows).ifPresent(ResultStream::close);
        if (statement != null) {
            statement.close();
        }
    }
}
