// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.sql;

/** What kind of statement DuckDB's parser found. */
public enum StatementKind {
    /** A query DuckDB serialises: SELECT, VALUES, set operations, CTEs (whose bodies may still write, see {@link ClassifiedStatement#writes()}). */
    QUERY,
    /** {@code EXPLAIN} of one query; the query is {@link ClassifiedStatement#explained()}. */
    EXPLAIN,
    /** {@code EXPLAIN ANALYZE} of one query, which runs it; the query is {@link ClassifiedStatement#explained()}. */
    EXPLAIN_ANALYZE,
    /**
     * A statement DuckDB parses but does not serialise (INSERT, CREATE, COPY, SET, ATTACH, PRAGMA, CALL, ...), or a
     * text of several statements of which one is such: nothing is known of what it reaches.
     */
    OTHER,
    /** A text DuckDB's parser refuses: a syntax error, or a statement of another grammar (the views' DDL). */
    UNPARSED
}
