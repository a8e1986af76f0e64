// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.server.MallardServer;
import dev.mallard.server.config.ServerConfigReader;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code mallard sql --server}: the same statements, formats and dot commands, run by a server over Flight SQL. */
class SqlOverFlightIT {
    @TempDir
    static Path warehouse;

    private static MallardServer server;
    private static String url;

    record Result(int exit, String out, String err) {}

    @BeforeAll
    static void startServer() {
        server = MallardServer.start(new ServerConfigReader(ConfigEnvironment.from(Map.of())).read(Optional.empty(), List.of(
                "warehouse=" + warehouse, "host=127.0.0.1", "http.port=0", "flight.port=0",
                "users.0.username=ada", "users.0.password=lovelace")));
        url = "grpc+tcp://127.0.0.1:" + server.flightPort();
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    private static Result mallard(String password, String input, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine commandLine = Main.commandLine();
        commandLine.setOut(new PrintWriter(out, true));
        commandLine.setErr(new PrintWriter(err, true));
        SqlCommand sql = commandLine.getSubcommands().get("sql").getCommand();
        sql.environment = password == null ? Map.of() : Map.of(SqlCommand.PASSWORD_VARIABLE, password);
        sql.in = new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8));
        int exit = Main.execute(commandLine, args);
        return new Result(exit, out.toString(), err.toString());
    }

    @Test
    void statementsAndViewsRunOnTheServerAndTheirRowsPrintAsLocally() {
        Result setup = mallard("lovelace", "", "sql", "--server", url, "-u", "ada", "-e",
                "CREATE TABLE flight_sales (region VARCHAR, amount INTEGER); INSERT INTO flight_sales VALUES ('north', 5), ('south', 7); "
                        + "CREATE MATERIALIZED VIEW flight_totals AS SELECT region, sum(amount) AS total FROM flight_sales GROUP BY region; "
                        + "INSERT INTO flight_sales VALUES ('north', 1)");
        assertThat(setup.exit()).as(setup.err()).isZero();

        Result table = mallard("lovelace", "", "sql", "--server", url, "-u", "ada", "-e",
                "SELECT region, CAST(total AS INTEGER) AS total FROM flight_totals ORDER BY region");
        assertThat(table.exit()).as(table.err()).isZero();
        assertThat(table.out()).isEqualTo("region | total\n-------+------\nnorth  | 6\nsouth  | 7\n(2 rows)\n");

        Result jsonl = mallard("lovelace", "", "sql", "--server", url, "-u", "ada", "--format", "jsonl", "--max-rows", "1", "-e",
                "SELECT region FROM flight_totals ORDER BY region");
        assertThat(jsonl.out()).isEqualTo("{\"region\":\"north\"}\n");
        assertThat(jsonl.err()).contains("1 of 2 rows printed");
    }

    @Test
    void theShellsDotCommandsWorkOverFlight() {
        Result shell = mallard("lovelace", "CREATE TABLE IF NOT EXISTS flight_listed (x INTEGER);\n.tables\n.schema flight_listed\n.quit\n",
                "sql", "--server", url, "-u", "ada", "-i");
        assertThat(shell.exit()).as(shell.err()).isZero();
        assertThat(shell.out()).startsWith("Mallard SQL on " + url + ".").contains("flight_listed | table")
                .contains("CREATE TABLE flight_listed(x INTEGER);");
        assertThat(shell.err()).isEmpty();
    }

    @Test
    void aWrongPasswordIsAnAuthenticationFailure() {
        Result result = mallard("not-it", "", "sql", "--server", url, "-u", "ada", "-e", "SELECT 1");
        assertThat(result.exit()).isEqualTo(10);
        assertThat(result.err()).contains("error: user.auth.failed").doesNotContain("not-it");
    }

    @Test
    void theServerModeNeedsAUserAPasswordAndAFlightUrl() {
        assertThat(mallard(null, "", "sql", "--server", url, "-u", "ada", "-e", "SELECT 1").err()).contains("set MALLARD_PASSWORD");
        assertThat(mallard("lovelace", "", "sql", "--server", url, "-e", "SELECT 1").err()).contains("--server needs --user");
        Result http = mallard("lovelace", "", "sql", "--server", "http://127.0.0.1:8081", "-u", "ada", "-e", "SELECT 1");
        assertThat(http.exit()).isEqualTo(2);
        assertThat(http.err()).contains("grpc+tcp://host:port");
    }
}
