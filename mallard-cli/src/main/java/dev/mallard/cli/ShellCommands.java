// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlText;
import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;

/**
 * The shell's dot commands. {@code .tables} and {@code .schema} are plain SQL over DuckDB's catalog functions, so
 * they work the same on a local database and through {@code --server}; Mallard's own {@code mallard_views} schema
 * is left out, and a materialized view is listed as one (from its catalog), not as the DuckDB view it reads through.
 */
final class ShellCommands {
    private static final List<String> COMMANDS = List.of(".tables", ".schema", ".mode", ".maxrows", ".help", ".quit", ".exit");

    /** Tables and plain views of the current database, Mallard's schema left out; {0} is the materialized-view names. */
    private static final String TABLES = """
            SELECT name, kind FROM (
              SELECT table_name AS name, 'table' AS kind FROM duckdb_tables()
                WHERE database_name = current_database() AND schema_name <> 'mallard_views' AND NOT internal AND NOT temporary
              UNION ALL
              SELECT view_name, CASE WHEN view_name IN (%s) THEN 'materialized view' ELSE 'view' END FROM duckdb_views()
                WHERE database_name = current_database() AND schema_name <> 'mallard_views' AND NOT internal AND NOT temporary
            ) ORDER BY name""";

    private static final String SCHEMA = """
            SELECT sql FROM (
              SELECT table_name AS name, sql FROM duckdb_tables()
                WHERE database_name = current_database() AND schema_name <> 'mallard_views' AND NOT internal AND NOT temporary
              UNION ALL
              SELECT view_name, CASE WHEN view_name IN (%s) THEN NULL ELSE sql END FROM duckdb_views()
                WHERE database_name = current_database() AND schema_name <> 'mallard_views' AND NOT internal AND NOT temporary
              %s
            ) WHERE sql IS NOT NULL %s ORDER BY name""";

    private static final String MATERIALIZED = "SELECT name FROM mallard_views.views";
    private static final String MATERIALIZED_SCHEMA =
            "UNION ALL SELECT name, 'CREATE MATERIALIZED VIEW ' || name || ' AS ' || sql || ';' FROM mallard_views.views";
    private static final String HAS_CATALOG =
            "SELECT count(*) AS n FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'mallard_views' AND table_name = 'views'";

    private final SqlTarget target;
    private final ResultPrinter printer;

    ShellCommands(SqlTarget target, ResultPrinter printer) {
        this.target = requireNonNull(target, "target is null");
        this.printer = requireNonNull(printer, "printer is null");
    }

    void run(String line, PrintWriter out) {
        String[] words = line.strip().split("\\s+", 2);
        String argument = words.length > 1 ? words[1].strip() : "";
        switch (words[0]) {
            case ".help" -> out.println(SqlCommand.help());
            case ".tables" -> {
                boolean views = hasViewsCatalog();
                target.run(TABLES.formatted(views ? MATERIALIZED : "NULL"), printer);
            }
            case ".schema" -> {
                boolean views = hasViewsCatalog();
                String only = argument.isEmpty() ? "" : "AND name = " + SqlText.literal(argument);
                // The statements print as they are, one per line, whatever the mode.
                for (List<String> row : target.rows(SCHEMA.formatted(views ? MATERIALIZED : "NULL", views ? MATERIALIZED_SCHEMA : "", only))) {
                    out.println(row.get(0));
                }
            }
            case ".mode" -> {
                try {
                    printer.format(ResultPrinter.Format.valueOf(argument.toLowerCase(Locale.ROOT)));
                } catch (IllegalArgumentException e) {
                    throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, ".mode takes table, csv or jsonl, not '" + argument + "'");
                }
            }
            case ".maxrows" -> {
                try {
                    long rows = Long.parseLong(argument);
                    if (rows < 0) {
                        throw new NumberFormatException();
                    }
                    printer.maxRows(rows);
                } catch (NumberFormatException e) {
                    throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, ".maxrows takes a count, 0 for all, not '" + argument + "'");
                }
            }
            default -> {
                String closest = CommandNames.closest(words[0], COMMANDS).map(c -> "; did you mean " + c + "?").orElse("");
                throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "unknown command " + words[0] + closest + " (.help lists them)");
            }
        }
    }

    private boolean hasViewsCatalog() {
        return Long.parseLong(target.rows(HAS_CATALOG).get(0).get(0)) > 0;
    }
}
