// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink.postgres;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.error.Redactor;
import java.sql.SQLException;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

/**
 * Turns what Postgres or the driver said into Mallard's error: a server that cannot be reached (connection
 * exceptions, class 08, and a server shutting down or not yet accepting connections) is
 * {@code system.sink.unreachable}, which the sink.retry ladder retries; anything else, a value Postgres refuses
 * first, is {@code system.sink.write_failed}, named by its column where Postgres says which.
 */
final class PostgresFailure {
    // COPY's context line: COPY mallard_stage, line 3, column amount: "abc"
    private static final Pattern COPY_COLUMN = Pattern.compile("COPY \\S+, line (\\d+), column (.+?)(?::|$)", Pattern.MULTILINE);

    private PostgresFailure() {}

    static boolean isUnreachable(SQLException e) {
        String state = e.getSQLState();
        if (state == null) {
            return false;
        }
        return state.startsWith("08") || state.equals("57P01") || state.equals("57P02") || state.equals("57P03")
                || state.equals("53300");
    }

    static MallardException of(SQLException e, String what, PostgresTable table, String where) {
        String detail = Redactor.redact(e.getMessage());
        if (isUnreachable(e)) {
            return new MallardException(ErrorCode.SYSTEM_SINK_UNREACHABLE, "postgres sink: cannot reach " + where + " while "
                    + what + ": " + detail, e);
        }
        Optional<String> column = column(e);
        String message = column
                .map(name -> "postgres sink: table " + table + " column " + name + " refused a value: " + detail)
                .orElse("postgres sink: " + what + " on table " + table + " failed: " + detail);
        return new MallardException(ErrorCode.SYSTEM_SINK_WRITE_FAILED, message + hint(e.getSQLState()), e);
    }

    /** The column Postgres blames, from its error fields or from COPY's context line. */
    static Optional<String> column(SQLException e) {
        if (e instanceof PSQLException psql && psql.getServerErrorMessage() != null) {
            ServerErrorMessage server = psql.getServerErrorMessage();
            if (server.getColumn() != null) {
                return Optional.of(server.getColumn());
            }
            if (server.getWhere() != null) {
                Matcher matcher = COPY_COLUMN.matcher(server.getWhere());
                if (matcher.find()) {
                    return Optional.of(matcher.group(2) + " (batch row " + matcher.group(1) + ")");
                }
            }
        }
        return Optional.empty();
    }

    private static String hint(String state) {
        if (state == null) {
            return "";
        }
        return switch (state) {
            case "42P10" -> "; upsert needs a unique index or primary key on exactly the columns of pipeline.sink.postgres.key";
            case "42P01" -> "; create the table first (Mallard does not create it) or fix pipeline.sink.postgres.table";
            case "42703" -> "; the handler's result columns must be columns of the table, by name";
            case "28P01", "28000" -> "; check the user and password of pipeline.sink.postgres.dsn";
            default -> "";
        };
    }
}
