// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static java.util.Objects.requireNonNull;

import java.sql.Connection;
import java.util.HashSet;
import java.util.Set;

/**
 * The temporary tables a connection's syncs fill again at every sync, kept for the connection's life: created once
 * (with column definitions, see {@link Sql#createEmpty}) and then emptied and filled by prepared statements. Replacing
 * one with {@code CREATE OR REPLACE TEMP TABLE} at every sync cost the most of a single-row sync of a MIN/MAX view
 * (docs/benchmarks.md, issue 21) and made DuckDB bind every statement that reads it again.
 *
 * <p>Which tables exist is known in Java, so a sync spends no statement asking. Whatever may have removed one (a
 * rollback of the transaction that created it, a refresh, a rescan or a drop of its view's state) calls
 * {@link #forgetAll}: the next sync then creates it again, so forgetting too much costs one creation and never a
 * wrong result.
 */
final class ScratchTables {
    private final Connection connection;
    /** The connection's statements prepared once; null: every statement runs as text and every table is replaced. */
    private final StatementCache statements;
    private final Set<String> created = new HashSet<>();

    private ScratchTables(Connection connection, StatementCache statements) {
        this.connection = requireNonNull(connection, "connection is null");
        this.statements = statements;
    }

    /** Tables kept for the connection's life, the statements over them prepared once in {@code statements}. */
    static ScratchTables kept(Connection connection, StatementCache statements) {
        return new ScratchTables(connection, requireNonNull(statements, "statements is null"));
    }

    /**
     * Tables replaced at every fill and statements run as text: for a program run once over a connection (a view
     * moved through its output Z-set, which other views' programs share the scratch names of).
     */
    static ScratchTables replacedEachTime(Connection connection) {
        return new ScratchTables(connection, null);
    }

    /** Runs a statement that changes rows; returns its update count. */
    long update(String sql) {
        return statements == null ? Sql.update(connection, sql) : statements.update(sql);
    }

    /** The first column of a query's first row, as text. */
    String first(String sql) {
        if (statements == null) {
            return Sql.strings(connection, sql).get(0);
        }
        String[] first = new String[1];
        statements.query(sql, row -> {
            if (first[0] == null) {
                first[0] = row.getString(1);
            }
        });
        return first[0];
    }

    /**
     * Makes the temporary table {@code relation} hold the rows of {@code query}, and only them: created with the
     * query's columns at its first use since it was last forgotten, emptied and refilled after. Returns the rows
     * it now holds.
     */
    long fill(String relation, String query) {
        if (statements == null) {
            return Sql.update(connection, "CREATE OR REPLACE TEMP TABLE " + relation + " AS " + query);
        }
        if (created.contains(relation)) {
            statements.update("DELETE FROM " + relation);
        } else {
            Sql.update(connection, "DROP TABLE IF EXISTS " + relation);
            Sql.createEmpty(connection, "CREATE TEMP TABLE " + relation, query, "");
            created.add(relation);
        }
        return statements.update("INSERT INTO " + relation + " " + query);
    }

    /** Forgets every table: each is created again (dropped first, if it is still there) at its next {@link #fill}. */
    void forgetAll() {
        created.clear();
    }
}
