package dev.mallard.server.flight;

import static java.util.Objects.requireNonNull;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import org.apache.arrow.vector.types.pojo.Schema;

/** A prepared statement of a session, with the schemas it announced and the parameters last bound to it. */
final class PreparedQuery implements AutoCloseable {
    private final String sql;
    private final PreparedStatement statement;
    private final Schema datasetSchema;
    private final Schema parameterSchema;
    private volatile List<List<Object>> parameters = List.of();

    PreparedQuery(String sql, PreparedStatement statement, Schema datasetSchema, Schema parameterSchema) {
        this.sql = requireNonNull(sql, "sql is null");
        this.statement = requireNonNull(statement, "statement is null");
        this.datasetSchema = requireNonNull(datasetSchema, "datasetSchema is null");
        this.parameterSchema = requireNonNull(parameterSchema, "parameterSchema is null");
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
        statement.close();
    }
}
