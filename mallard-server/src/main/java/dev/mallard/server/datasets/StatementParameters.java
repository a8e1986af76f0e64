// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.datasets;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mallard.core.config.ConfigProblem;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A dataset statement's {@code $name} parameters, read from DuckDB's parse tree ({@code json_serialize_sql}): the
 * statement respelt with positional parameters ({@code $1}, {@code $2}, as DuckDB numbered the names) and the name
 * each position binds. DuckDB's JDBC driver binds by position only. The respelling replaces exactly the spans the
 * parse tree reports for parameter nodes and checks each span reads {@code $name}, so nothing else of the text moves.
 */
record StatementParameters(String positionalSql, List<String> names) {
    private static final ObjectMapper JSON = new ObjectMapper();

    StatementParameters {
        requireNonNull(positionalSql, "positionalSql is null");
        names = List.copyOf(requireNonNull(names, "names is null"));
    }

    /** @throws MallardException {@code user.sql.invalid} when the text is not one parsable statement with named parameters only */
    static StatementParameters of(Connection connection, String sql) {
        JsonNode tree;
        try (PreparedStatement statement = connection.prepareStatement("SELECT json_serialize_sql(?::VARCHAR)")) {
            statement.setString(1, sql);
            try (ResultSet rows = statement.executeQuery()) {
                rows.next();
                tree = JSON.readTree(rows.getString(1));
            }
        } catch (SQLException | java.io.IOException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot read the dataset statement's parse tree: " + e.getMessage(), e);
        }
        if (tree.path("error").asBoolean(false)) {
            throw new MallardException(ErrorCode.USER_SQL_INVALID, "the dataset statement does not parse as a query: "
                    + tree.path("error_message").asText("unknown error"));
        }
        JsonNode statements = tree.path("statements");
        if (statements.size() != 1) {
            throw new MallardException(ErrorCode.USER_SQL_INVALID, "a dataset statement is one query; this text holds " + statements.size());
        }
        JsonNode statement = statements.get(0);
        Map<Integer, String> byIndex = new TreeMap<>();
        for (JsonNode entry : statement.path("named_param_map")) {
            byIndex.put(entry.path("value").asInt(), entry.path("key").asText());
        }
        List<JsonNode> parameters = new ArrayList<>();
        collect(statement.path("node"), parameters);
        byte[] text = sql.getBytes(StandardCharsets.UTF_8);
        parameters.sort(Comparator.comparingLong((JsonNode node) -> node.path("query_location").asLong()).reversed());
        Map<String, Integer> indexOf = new TreeMap<>();
        byIndex.forEach((index, name) -> indexOf.put(name, index));
        byte[] out = text;
        for (JsonNode parameter : parameters) {
            String name = parameter.path("identifier").asText();
            Integer index = indexOf.get(name);
            long at = parameter.path("query_location").asLong(-1);
            long length = parameter.path("query_location_length").asLong(0);
            String expected = "$" + name;
            if (index == null || at < 0 || at + length > text.length
                    || !new String(text, (int) at, (int) length, StandardCharsets.UTF_8).equals(expected)) {
                throw new MallardException(ErrorCode.USER_SQL_INVALID, "a dataset statement names its parameters $name; this one holds a "
                        + "parameter written otherwise (" + (name.matches("[0-9]+") ? "$" + name + " or ?" : name) + "), which it cannot bind");
            }
            byte[] replacement = ("$" + index).getBytes(StandardCharsets.UTF_8);
            byte[] next = new byte[out.length - (int) length + replacement.length];
            System.arraycopy(out, 0, next, 0, (int) at);
            System.arraycopy(replacement, 0, next, (int) at, replacement.length);
            System.arraycopy(out, (int) (at + length), next, (int) at + replacement.length, out.length - (int) (at + length));
            out = next;
        }
        List<String> names = new ArrayList<>(byIndex.values());
        for (int i = 0; i < names.size(); i++) {
            if (!byIndex.containsKey(i + 1)) {
                throw new MallardException(ErrorCode.USER_SQL_INVALID, "the dataset statement's parameters are not numbered 1.." + names.size());
            }
        }
        return new StatementParameters(new String(out, StandardCharsets.UTF_8), names);
    }

    private static void collect(JsonNode node, List<JsonNode> into) {
        if (node.isObject()) {
            if ("PARAMETER".equals(node.path("class").asText())) {
                into.add(node);
            }
            node.forEach(child -> collect(child, into));
        } else if (node.isArray()) {
            node.forEach(child -> collect(child, into));
        }
    }

    /** For {@code mallard validate}: every statement parses as one query, and every parameter it names is a declared param. */
    static List<ConfigProblem> check(String file, ServeConfig config) {
        List<ConfigProblem> problems = new ArrayList<>();
        try (Connection connection = DriverManager.getConnection("jdbc:duckdb:")) {
            for (ServeConfig.Dataset dataset : config.serve().datasets()) {
                for (String sql : dataset.statements()) {
                    try {
                        StatementParameters parameters = of(connection, sql);
                        for (String name : parameters.names()) {
                            if (dataset.param(name).isEmpty()) {
                                problems.add(new ConfigProblem(file, 0, 0, "serve.datasets", ErrorCode.USER_CONFIG_INVALID, "dataset " + dataset.name()
                                        + " binds $" + name + ", which is not one of its params; declare it under params"));
                            }
                        }
                    } catch (MallardException e) {
                        problems.add(new ConfigProblem(file, 0, 0, "serve.datasets", e.errorCode(), "dataset " + dataset.name() + ": " + e.getMessage()));
                    }
                }
            }
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot open an in-memory DuckDB: " + e.getMessage(), e);
        }
        return problems;
    }
}
