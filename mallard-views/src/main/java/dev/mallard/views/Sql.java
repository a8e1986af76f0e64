package dev.mallard.views;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/** Small JDBC steps the maintainer repeats: quoting, running a statement, reading one column. */
final class Sql {
    private Sql() {}

    static String quote(String identifier) {
        return '"' + identifier.replace("\"", "\"\"") + '"';
    }

    static String literal(String text) {
        return "'" + text.replace("'", "''") + "'";
    }

    static long update(Connection connection, String sql) {
        try (Statement statement = connection.createStatement()) {
            statement.execute(sql);
            return Math.max(statement.getUpdateCount(), 0);
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "DuckDB failed on view maintenance SQL: "
                    + e.getMessage() + " (statement: " + abbreviate(sql) + ")", e);
        }
    }

    static List<String> strings(Connection connection, String sql, Object... parameters) {
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) {
                statement.setObject(i + 1, parameters[i]);
            }
            List<String> values = new ArrayList<>();
            try (ResultSet rows = statement.executeQuery()) {
                while (rows.next()) {
                    values.add(rows.getString(1));
                }
            }
            return values;
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "DuckDB failed reading the view catalog: "
                    + e.getMessage() + " (statement: " + abbreviate(sql) + ")", e);
        }
    }

    static long count(Connection connection, String sql) {
        List<String> values = strings(connection, sql);
        return values.isEmpty() || values.get(0) == null ? 0 : Long.parseLong(values.get(0));
    }

    private static String abbreviate(String sql) {
        return sql.length() <= 300 ? sql : sql.substring(0, 300) + "...";
    }
}
