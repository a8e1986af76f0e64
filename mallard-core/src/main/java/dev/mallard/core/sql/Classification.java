// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.sql;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * What a SQL text is, from DuckDB's parse tree: its statements in order (a text DuckDB does not serialise counts
 * as one statement of kind {@link StatementKind#OTHER} or {@link StatementKind#UNPARSED}, however many it holds).
 */
public record Classification(String sql, List<ClassifiedStatement> statements) {
    public Classification {
        java.util.Objects.requireNonNull(sql, "sql is null");
        statements = List.copyOf(statements);
        if (statements.isEmpty()) {
            throw new IllegalArgumentException("a classification has at least one statement");
        }
    }

    /** Whether the text is one statement. A text of kind OTHER or UNPARSED may hold several: it counts as one. */
    public boolean single() {
        return statements.size() == 1;
    }

    /** The one statement; use after {@link #single()}. */
    public ClassifiedStatement statement() {
        if (!single()) {
            throw new IllegalStateException("the text holds " + statements.size() + " statements");
        }
        return statements.getFirst();
    }

    /**
     * Every statement reached: these, what they run through {@code query()}/{@code query_table()} and what an
     * {@code EXPLAIN} explains, at any depth.
     */
    public List<ClassifiedStatement> reached() {
        List<ClassifiedStatement> out = new ArrayList<>();
        visit(out::add);
        return out;
    }

    private void visit(Consumer<ClassifiedStatement> visitor) {
        for (ClassifiedStatement statement : statements) {
            visitor.accept(statement);
            statement.nested().forEach(inner -> inner.visit(visitor));
            statement.explained().ifPresent(inner -> inner.visit(visitor));
        }
    }

    /** Every function called by any statement reached. */
    public List<FunctionCall> functions() {
        return reached().stream().flatMap(statement -> statement.functions().stream()).toList();
    }

    /** Every table named by any statement reached. */
    public Set<TableReference> tables() {
        return reached().stream().flatMap(statement -> statement.tables().stream()).collect(Collectors.toUnmodifiableSet());
    }
}
