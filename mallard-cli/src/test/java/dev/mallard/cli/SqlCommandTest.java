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
}
