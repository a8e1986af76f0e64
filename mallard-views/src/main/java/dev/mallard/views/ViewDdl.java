// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.util.ArrayList;
import java.util.List;

/**
 * A materialized-view statement of the front door, read from the statement's tokens ({@link SqlTokens}): DuckDB's
 * parser has no {@code MATERIALIZED VIEW}, and {@code json_serialize_sql} parses only SELECT, so the statement's
 * head is read token by token and its query is handed to DuckDB's parser (by the compiler) as the text after
 * {@code AS}. Comments anywhere, any letter case and line breaks, quoted names ({@code "v"}) and names qualified by
 * the current schema or database ({@code main.v}, {@code db.main.v}) are accepted; a head that starts like one of
 * these statements but does not fit is refused, never passed on.
 *
 * <p>{@code CREATE [OR REPLACE] MATERIALIZED VIEW [IF NOT EXISTS] name AS query},
 * {@code DROP MATERIALIZED VIEW [IF EXISTS] name [CASCADE | RESTRICT]}, {@code REFRESH MATERIALIZED VIEW name}.
 */
record ViewDdl(Verb verb, boolean replace, boolean ifMatters, String name, String query, boolean cascade) {
    enum Verb { CREATE, DROP, REFRESH }

    ViewDdl {
        requireNonNull(verb, "verb is null");
        requireNonNull(name, "name is null");
        requireNonNull(query, "query is null");
    }

    /** Whether the tokens start a CREATE, DROP or REFRESH of a materialized view. */
    static boolean isViewDdl(List<SqlTokens.Token> tokens) {
        int i = 0;
        if (tokens.isEmpty()) {
            return false;
        }
        SqlTokens.Token first = tokens.get(0);
        if (!(first.is("CREATE") || first.is("DROP") || first.is("REFRESH"))) {
            return false;
        }
        i = 1;
        if (first.is("CREATE") && at(tokens, 1, "OR") && at(tokens, 2, "REPLACE")) {
            i = 3;
        }
        return at(tokens, i, "MATERIALIZED");
    }

    static ViewDdl parse(String sql, List<SqlTokens.Token> tokens, MaterializedViews views) {
        Cursor cursor = new Cursor(sql, tokens);
        SqlTokens.Token first = cursor.next();
        if (first.is("CREATE")) {
            boolean replace = cursor.accept("OR");
            if (replace) {
                cursor.expect("REPLACE");
            }
            cursor.expect("MATERIALIZED");
            cursor.expect("VIEW");
            boolean ifNotExists = cursor.accept("IF");
            if (ifNotExists) {
                cursor.expect("NOT");
                cursor.expect("EXISTS");
            }
            String name = cursor.name(views);
            SqlTokens.Token as = cursor.expect("AS");
            String query = sql.substring(as.end()).strip();
            if (query.isEmpty()) {
                throw cursor.invalid("a query after AS");
            }
            return new ViewDdl(Verb.CREATE, replace, ifNotExists, name, query, false);
        }
        if (first.is("DROP")) {
            cursor.expect("MATERIALIZED");
            cursor.expect("VIEW");
            boolean ifExists = cursor.accept("IF");
            if (ifExists) {
                cursor.expect("EXISTS");
            }
            String name = cursor.name(views);
            boolean cascade = cursor.accept("CASCADE");
            if (!cascade) {
                cursor.accept("RESTRICT");
            }
            cursor.end();
            return new ViewDdl(Verb.DROP, false, ifExists, name, "", cascade);
        }
        cursor.expect("MATERIALIZED");
        cursor.expect("VIEW");
        String name = cursor.name(views);
        cursor.end();
        return new ViewDdl(Verb.REFRESH, false, false, name, "", false);
    }

    ViewSql.Result run(MaterializedViews views) {
        switch (verb) {
            case CREATE -> {
                if (ifMatters && views.names().stream().anyMatch(name::equalsIgnoreCase)) {
                    return ViewSql.Result.message("CREATE MATERIALIZED VIEW (exists)");
                }
                if (replace) {
                    views.createOrReplaceView(name, query);
                } else {
                    views.createView(name, query);
                }
                return ViewSql.Result.message("CREATE MATERIALIZED VIEW");
            }
            case DROP -> {
                if (ifMatters) {
                    if (cascade) {
                        views.dropViewCascadeIfExists(name);
                    } else {
                        views.dropViewIfExists(name);
                    }
                } else if (cascade) {
                    views.dropViewCascade(name);
                } else {
                    views.dropView(name);
                }
                return ViewSql.Result.message("DROP MATERIALIZED VIEW");
            }
            default -> {
                views.refresh(name);
                return ViewSql.Result.message("REFRESH MATERIALIZED VIEW");
            }
        }
    }

    private static boolean at(List<SqlTokens.Token> tokens, int i, String keyword) {
        return i < tokens.size() && tokens.get(i).is(keyword);
    }

    /** Reads the head's tokens in order; every refusal says which spelling was expected. */
    private static final class Cursor {
        private static final String FORMS = "CREATE [OR REPLACE] MATERIALIZED VIEW [IF NOT EXISTS] name AS query, "
                + "DROP MATERIALIZED VIEW [IF EXISTS] name [CASCADE | RESTRICT] or REFRESH MATERIALIZED VIEW name";
        private final String sql;
        private final List<SqlTokens.Token> tokens;
        private int next;

        Cursor(String sql, List<SqlTokens.Token> tokens) {
            this.sql = sql;
            this.tokens = tokens;
        }

        SqlTokens.Token next() {
            if (next >= tokens.size()) {
                throw invalid("more");
            }
            return tokens.get(next++);
        }

        boolean accept(String keyword) {
            if (next < tokens.size() && tokens.get(next).is(keyword)) {
                next++;
                return true;
            }
            return false;
        }

        SqlTokens.Token expect(String keyword) {
            if (next < tokens.size() && tokens.get(next).is(keyword)) {
                return tokens.get(next++);
            }
            throw invalid(keyword);
        }

        /** {@code name}, {@code schema.name} or {@code database.schema.name}, the qualifiers those of the views' home. */
        String name(MaterializedViews views) {
            List<String> parts = new ArrayList<>();
            parts.add(namePart());
            while (next < tokens.size() && tokens.get(next).isSymbol('.')) {
                next++;
                parts.add(namePart());
            }
            if (parts.size() > 3) {
                throw invalid("a name of at most three parts (database.schema.name)");
            }
            String name = parts.get(parts.size() - 1);
            if (parts.size() > 1) {
                String schema = views.homeSchema();
                String database = views.homeDatabase();
                boolean fits = parts.size() == 2
                        ? parts.get(0).equalsIgnoreCase(schema) || parts.get(0).equalsIgnoreCase(database)
                        : parts.get(0).equalsIgnoreCase(database) && parts.get(1).equalsIgnoreCase(schema);
                if (!fits) {
                    throw new MallardException(ErrorCode.USER_VIEW_UNSUPPORTED, "materialized view "
                            + String.join(".", parts) + ": materialized views live in the current schema " + database + "."
                            + schema + "; name it " + name + " (or " + schema + "." + name + "), or USE the schema first");
                }
            }
            return name;
        }

        private String namePart() {
            if (next < tokens.size() && tokens.get(next).isName()) {
                return tokens.get(next++).value();
            }
            throw invalid("a name");
        }

        void end() {
            while (next < tokens.size() && tokens.get(next).isSymbol(';')) {
                next++;
            }
            if (next < tokens.size()) {
                throw invalid("the end of the statement");
            }
        }

        MallardException invalid(String expected) {
            String at = next < tokens.size() ? "at " + sql.substring(tokens.get(next).start(),
                    Math.min(sql.length(), tokens.get(next).start() + 40)) : "at the end";
            return new MallardException(ErrorCode.USER_SQL_INVALID, "cannot read the materialized view statement: expected "
                    + expected + " " + at + "; the forms are " + FORMS);
        }
    }
}
