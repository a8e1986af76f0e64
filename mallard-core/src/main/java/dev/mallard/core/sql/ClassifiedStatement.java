// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.sql;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * One statement of a text, as DuckDB's parser reads it.
 *
 * @param kind what kind of statement it is
 * @param tree the statement as {@code json_serialize_sql} gives it (for {@link StatementKind#QUERY}); empty otherwise
 * @param writes whether its tree holds a statement that changes data or files ({@code WITH x AS (DELETE ... RETURNING *)},
 *     a CTE's {@code COPY ... TO}); always true for {@link StatementKind#OTHER}, which is not looked into
 * @param tables every table, view or CTE name it reads or writes, in subqueries and CTEs too
 * @param functions every function it calls, table functions included, in the order met
 * @param nested the texts it runs through {@code query()} / {@code query_table()}, classified in turn
 * @param parameters how many prepared-statement parameters ({@code ?}, {@code $1}) it has
 * @param explained the query an {@code EXPLAIN [ANALYZE]} explains
 * @param topLevelCall the call when the whole statement is one function call and nothing else:
 *     {@code SELECT f(<constants>)} or {@code SELECT * FROM f(<constants>)}, without alias, filter, modifier or CTE
 * @param problem DuckDB's parser error for {@link StatementKind#UNPARSED}, why nothing is known for {@link StatementKind#OTHER}
 */
public record ClassifiedStatement(
        StatementKind kind,
        Optional<JsonNode> tree,
        boolean writes,
        Set<TableReference> tables,
        List<FunctionCall> functions,
        List<Classification> nested,
        int parameters,
        Optional<Classification> explained,
        Optional<FunctionCall> topLevelCall,
        Optional<String> problem) {
    public ClassifiedStatement {
        requireNonNull(kind, "kind is null");
        requireNonNull(tree, "tree is null");
        tables = Set.copyOf(tables);
        functions = List.copyOf(functions);
        nested = List.copyOf(nested);
        requireNonNull(explained, "explained is null");
        requireNonNull(topLevelCall, "topLevelCall is null");
        requireNonNull(problem, "problem is null");
    }

    static ClassifiedStatement opaque(StatementKind kind, String problem) {
        return new ClassifiedStatement(kind, Optional.empty(), kind == StatementKind.OTHER, Set.of(), List.of(), List.of(), 0,
                Optional.empty(), Optional.empty(), Optional.of(problem));
    }

    /** The table functions it calls. */
    public List<FunctionCall> tableFunctions() {
        return functions.stream().filter(FunctionCall::tableFunction).toList();
    }
}
