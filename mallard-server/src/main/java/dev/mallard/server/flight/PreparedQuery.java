// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.flight;

import static java.util.Objects.requireNonNull;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import dev.mallard.server.session.ResultStream;
import dev.mallard.server.session.Session;
import java.util.List;
import java.util.Optional;
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
    private volatile List<List<Object>> parameters = List.of();

    PreparedQuery(String sql, PreparedStatement statement, Schema datasetSchema, Schema parameterSchema) {
        this.sql = requireNonNull(sql, "sql is null");
        this.statement = statement;
        this.datasetSchema = requireNonNull(datasetSchema, "datasetSchema is null");
        this.parameterSchema = requireNonNull(parameterSchema, "parameterSchema is null");
    }

    /** A front-door text that ran at prepare; {@code first} is its outcome, answered by its first execution. */
    static PreparedQuery throughViews(String sql, Session.Outcome first, Schema datasetSchema) {
        PreparedQuery prepared = new PreparedQuery(sql, null, datasetSchema, new Schema(List.of()));
        prepared.firstOutcome = requireNonNull(first, "first is null");
        return prepared;
    }

    boolean runsThroughViews() {
        return statement == null;
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
