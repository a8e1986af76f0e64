// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.io.StringWriter;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class SqlCommandTest {
    @TempDir
    Path dir;

    private String run(String... args) {
        StringWriter out = new StringWriter();
        CommandLine commandLine = Main.commandLine();
        commandLine.setOut(new PrintWriter(out));
        int exit = commandLine.execute(args);
        assertThat(exit).as(out.toString()).isZero();
        return out.toString();
    }

    @Test
    void aViewCreatedInOneRunIsMaintainedAndReadInTheNext() {
        String database = dir.resolve("shop.duckdb").toString();
        run("sql", database, "-e", "CREATE TABLE sales (region VARCHAR, amount INTEGER); "
                + "INSERT INTO sales VALUES ('north', 5), ('south', 7); "
                + "CREATE MATERIALIZED VIEW totals AS SELECT region, sum(amount) AS total FROM sales GROUP BY region");
        String table = run("sql", database, "-e", "INSERT INTO sales VALUES ('north', 1); SELECT * FROM totals ORDER BY region");
        assertThat(table).isEqualTo("OK 1\nregion | total\n-------+------\nnorth  | 6\nsouth  | 7\n(2 rows)\n");

        assertThat(run("sql", database, "--format", "csv", "-e", "SELECT * FROM totals ORDER BY region"))
                .isEqualTo("region,total\nnorth,6\nsouth,7\n");
        assertThat(run("sql", database, "--format", "jsonl", "-e", "SELECT region, CAST(total AS INTEGER) AS total FROM totals ORDER BY region"))
                .isEqualTo("{\"region\":\"north\",\"total\":6}\n{\"region\":\"south\",\"total\":7}\n");
    }

    @Test
    void theShellRunsEachStatementOnceItsSemicolonIsReadAndGoesOnAfterAnError() {
        String input = String.join("\n",
                "CREATE TABLE sales (region VARCHAR, amount INTEGER);",
                "INSERT INTO sales VALUES ('north', 5),",
                "  ('south', 7);",
                "CREATE MATERIALIZED VIEW totals AS",
                "  SELECT region, sum(amount) AS total FROM sales GROUP BY region;",
                "SELECT * FROM no_such_table;",
                "INSERT INTO sales VALUES ('north', 1); SELECT * FROM totals ORDER BY region;",
                ".quit",
                "SELECT 'never run';");
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine commandLine = Main.commandLine();
        commandLine.setOut(new PrintWriter(out));
        commandLine.setErr(new PrintWriter(err));
        SqlCommand shell = commandLine.getSubcommands().get("sql").getCommand();
        shell.in = new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8));

        int exit = commandLine.execute("sql", dir.resolve("shop.duckdb").toString(), "--interactive");

        assertThat(exit).isZero();
        assertThat(out.toString()).startsWith("Mallard SQL on ").endsWith(String.join("\n",
                "mallard> OK",
                "mallard>      ..> OK 2",
                "mallard>      ..> CREATE MATERIALIZED VIEW",
                "mallard> mallard> OK 1",
                "region | total",
                "-------+------",
                "north  | 6",
                "south  | 7",
                "(2 rows)",
                "mallard> "));
        assertThat(err.toString()).startsWith("error: user.sql.invalid: ").contains("no_such_table").doesNotContain("never run");
    }

    @Test
    void theShellLeavesAtTheEndOfInputWithAnUnterminatedStatementLeftUnrun() {
        StringWriter out = new StringWriter();
        CommandLine commandLine = Main.commandLine();
        commandLine.setOut(new PrintWriter(out));
        SqlCommand shell = commandLine.getSubcommands().get("sql").getCommand();
        shell.in = new ByteArrayInputStream("SELECT 42 AS answer;\nSELECT 'half\n".getBytes(StandardCharsets.UTF_8));

        assertThat(commandLine.execute("sql", "-i")).isZero();
        assertThat(out.toString()).contains("answer\n------\n42\n(1 row)\n").doesNotContain("half");
    }

    private record Session(int exit, String out, String err) {}

    private Session session(String input, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine commandLine = Main.commandLine();
        commandLine.setOut(new PrintWriter(out));
        commandLine.setErr(new PrintWriter(err));
        SqlCommand sql = commandLine.getSubcommands().get("sql").getCommand();
        sql.in = new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8));
        int exit = commandLine.execute(args);
        return new Session(exit, out.toString(), err.toString());
    }

    @Test
    void aTableShowsAtMostAThousandRowsAndSaysHowManyItLeftOut() {
        String table = run("sql", "-e", "SELECT range AS n FROM range(1500)");
        assertThat(table.lines().filter(line -> line.matches("[0-9]+"))).hasSize(1000);
        assertThat(table).contains("\n999\n").doesNotContain("\n1000\n")
                .endsWith("(1000 of 1500 rows shown; --max-rows 0, or .maxrows 0 in the shell, shows all)\n");
        assertThat(run("sql", "--max-rows", "0", "-e", "SELECT range AS n FROM range(1500)")).endsWith("(1500 rows)\n");
    }

    @Test
    void csvAndJsonlPrintEveryRowUnlessCappedAndPutTheNoteOnStandardError() {
        assertThat(run("sql", "--format", "csv", "-e", "SELECT range AS n FROM range(1500)").lines()).hasSize(1501);
        Session csv = session("", "sql", "--format", "csv", "--max-rows", "2", "-e", "SELECT range AS n FROM range(5)");
        assertThat(csv.out()).isEqualTo("n\n0\n1\n");
        assertThat(csv.err()).isEqualTo("note: 2 of 5 rows printed; --max-rows 0 (.maxrows 0 in the shell) prints all\n");
        // 10,000 rows come in several Arrow batches; the cap cuts inside the first.
        Session jsonl = session("", "sql", "--format", "jsonl", "--max-rows", "3", "-e", "SELECT range AS n FROM range(10000)");
        assertThat(jsonl.out()).isEqualTo("{\"n\":0}\n{\"n\":1}\n{\"n\":2}\n");
        assertThat(jsonl.err()).contains("3 of 10000 rows printed");
    }

    @Test
    void theShellListsTablesViewsAndMaterializedViewsWithoutMallardsOwnSchema() {
        Session shell = session(String.join("\n",
                "CREATE TABLE sales (region VARCHAR, amount INTEGER);",
                "CREATE VIEW big AS SELECT * FROM sales WHERE amount > 10;",
                "CREATE MATERIALIZED VIEW totals AS SELECT region, sum(amount) AS total FROM sales GROUP BY region;",
                ".tables",
                ".schema totals",
                ".schema",
                ".mode csv",
                "SELECT 1 AS one;",
                ".maxrows 1",
                "SELECT range AS n FROM range(3);",
                ".mod table",
                ".quit"), "sql", dir.resolve("shop.duckdb").toString(), "-i");
        assertThat(shell.exit()).isZero();
        assertThat(shell.out()).contains(String.join("\n",
                "name   | kind",
                "-------+------------------",
                "big    | view",
                "sales  | table",
                "totals | materialized view",
                "(3 rows)"));
        assertThat(shell.out()).contains("mallard> CREATE MATERIALIZED VIEW totals AS SELECT region, sum(amount) AS total FROM sales GROUP BY region;\n");
        assertThat(shell.out()).contains("CREATE TABLE sales(region VARCHAR, amount INTEGER);\n")
                .contains("CREATE VIEW big AS SELECT * FROM sales WHERE (amount > 10);\n")
                .doesNotContain("mallard_views").doesNotContain("state$");
        assertThat(shell.out()).contains("mallard> one\n1\n").contains("mallard> n\n0\n");
        assertThat(shell.err()).contains("note: 1 of 3 rows printed")
                .contains("error: user.cli.argument_invalid: unknown command .mod; did you mean .mode?");
    }

    @Test
    void onATerminalTheShellEditsLinesWithJLineAndKeepsAHistory() throws Exception {
        Path history = dir.resolve("history");
        StringWriter out = new StringWriter();
        CommandLine commandLine = Main.commandLine();
        commandLine.setOut(new PrintWriter(out));
        SqlCommand sql = commandLine.getSubcommands().get("sql").getCommand();
        java.io.ByteArrayOutputStream screen = new java.io.ByteArrayOutputStream();
        sql.terminal = new org.jline.terminal.impl.DumbTerminal(
                new ByteArrayInputStream("SELECT 6 * 7 AS answer;\n.quit\n".getBytes(StandardCharsets.UTF_8)), screen);
        sql.historyFile = history;

        assertThat(commandLine.execute("sql")).isZero();
        assertThat(out.toString()).contains("answer\n------\n42\n(1 row)\n");
        assertThat(screen.toString(StandardCharsets.UTF_8)).contains("mallard> ");
        assertThat(java.nio.file.Files.readString(history)).contains("SELECT 6 * 7 AS answer;").contains(".quit");
    }

    @Test
    void storageCompatibilityWritesAFileInTheOneFormatAndItsMaterializedViewsAreRefusedWithTheCode() {
        String database = dir.resolve("portable.duckdb").toString();
        assertThat(run("sql", database, "--storage-compatibility", "v1.0.0", "--format", "csv", "-e",
                "CREATE TABLE sales (region VARCHAR, amount INTEGER); "
                        + "SELECT tags['storage_version'] AS format FROM duckdb_databases() WHERE database_name = 'portable'"))
                .endsWith("format\nv1.0.0+\n");
        Session refused = session("", "sql", database, "-e",
                "CREATE MATERIALIZED VIEW totals AS SELECT region, sum(amount) AS total FROM sales GROUP BY region");
        assertThat(refused.exit()).isEqualTo(10);
        assertThat(refused.err()).contains("user.view.storage_version").contains("storage_compatibility");
    }

    @Test
    void anUnknownStorageCompatibilityIsRefusedNamingTheFlag() {
        Session refused = session("", "sql", dir.resolve("x.duckdb").toString(), "--storage-compatibility", "v1.1", "-e", "SELECT 1");
        assertThat(refused.exit()).isEqualTo(10);
        assertThat(refused.err()).contains("user.config.invalid").contains("--storage-compatibility");
    }
}
