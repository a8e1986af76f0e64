// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.handler;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlScript;
import dev.mallard.flow.sink.ResultTable;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Set;
import org.duckdb.DuckDBConnection;

/**
 * The handler's SQL, run once per batch. Statements before the last run as they are (an INSERT into a
 * state table, say); when the last one is a query its rows are kept in a temporary table the sinks read.
 */
final class HandlerSql {
    static final String RESULT_TABLE = "mallard_result";
    private static final Set<String> QUERY_KEYWORDS = Set.of("SELECT", "WITH", "FROM", "VALUES", "TABLE", "(",
            "SUMMARIZE", "DESCRIBE", "SHOW", "PIVOT", "UNPIVOT");

    private final DuckDBConnection connection;
    private final String text;
    private final List<SqlScript.Statement> statements;
    private final boolean endsInQuery;

    HandlerSql(DuckDBConnection connection, String sql, boolean batchTransaction) {
        this.connection = requireNonNull(connection, "connection is null");
        this.text = requireNonNull(sql, "sql is null");
        List<SqlScript.Statement> all = SqlScript.split(sql);
        if (all.isEmpty()) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "pipeline.handler.sql is empty; give it the query to run over each batch");
        }
        // Inside the batch's transaction the handler's own BEGIN and COMMIT would fail (DuckDB does not nest them);
        // the batch's transaction already makes its statements one, committed with the offsets.
        this.statements = batchTransaction ? all.stream().filter(statement -> !isTransactionBoundary(statement)).toList() : all;
        if (statements.isEmpty()) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "pipeline.handler.sql holds only BEGIN and COMMIT; give it the query to run over each batch");
        }
        this.endsInQuery = isQuery(statements.getLast());
    }

    /** The SQL as configured. */
    String text() {
        return text;
    }

    private static boolean isTransactionBoundary(SqlScript.Statement statement) {
        return Set.of("BEGIN", "COMMIT", "END").contains(statement.keyword()) || statement.words(2).equals("START TRANSACTION");
    }

    static boolean isQuery(SqlScript.Statement statement) {
        String body = statement.words(1);
        return QUERY_KEYWORDS.contains(body) || body.startsWith("(");
    }

    ResultTable run() {
        try (Statement statement = connection.createStatement()) {
            for (int i = 0; i < statements.size() - 1; i++) {
                statement.execute(statements.get(i).sql());
            }
            SqlScript.Statement last = statements.getLast();
            if (!endsInQuery) {
                statement.execute(last.sql());
                statement.execute("CREATE OR REPLACE TEMP TABLE " + RESULT_TABLE + " AS SELECT 1 AS none WHERE false");
                return new ResultTable(connection, RESULT_TABLE, 0);
            }
            long rows = statement.executeUpdate("CREATE OR REPLACE TEMP TABLE " + RESULT_TABLE + " AS " + last.sql());
            return new ResultTable(connection, RESULT_TABLE, rows);
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.USER_HANDLER_SQL_FAILED, "the handler SQL failed on this batch: " + e.getMessage()
                    + " (check it with `mallard dev invoke <config> <fixture.jsonl>`)", e);
        }
    }
}
