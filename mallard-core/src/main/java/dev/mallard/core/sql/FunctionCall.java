// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.sql;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * A function a statement calls: a scalar, aggregate or window function, or a table function in a FROM clause.
 *
 * @param name the function's name, lower-cased (DuckDB's function names are case-insensitive)
 * @param arguments each argument's expression as DuckDB serialised it
 */
public record FunctionCall(String schema, String name, boolean tableFunction, List<JsonNode> arguments) {
    public FunctionCall {
        requireNonNull(schema, "schema is null");
        name = requireNonNull(name, "name is null").toLowerCase(Locale.ROOT);
        arguments = List.copyOf(arguments);
    }

    /** Whether every argument is a constant (a literal), with no name ({@code name := value}). */
    public boolean constantArguments() {
        return arguments.stream().allMatch(FunctionCall::isConstant);
    }

    /** The argument at {@code index} when it is a string literal. */
    public Optional<String> stringArgument(int index) {
        if (index >= arguments.size() || !isConstant(arguments.get(index))) {
            return Optional.empty();
        }
        JsonNode literal = arguments.get(index).path("literal");
        return literal.path("kind").asText("").equals("STRING") ? Optional.of(literal.path("text").asText()) : Optional.empty();
    }

    static boolean isConstant(JsonNode argument) {
        return argument.path("class").asText("").equals("CONSTANT");
    }
}
