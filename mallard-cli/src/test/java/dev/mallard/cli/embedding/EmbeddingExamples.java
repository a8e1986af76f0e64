// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli.embedding;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.flow.config.PipelineConfig;
import dev.mallard.flow.config.PipelineConfigReader;
import dev.mallard.flow.pipeline.PipelineRunner;
import dev.mallard.server.MallardServer;
import dev.mallard.server.config.ServerConfig;
import dev.mallard.server.config.ServerConfigReader;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The code README.md shows for embedding Mallard in a Java program. Each method's body between the
 * {@code README} markers is quoted in README.md word for word; {@code EmbeddingExamplesIT} runs the methods and
 * checks that the README still quotes them.
 */
final class EmbeddingExamples {
    private EmbeddingExamples() {}

    /** Runs examples/city-counts.yml against {@code brokers} for two messages and returns what its console sink printed. */
    static String pipeline(Path examples, String brokers) throws Exception {
        // README:pipeline
        ConfigEnvironment environment = ConfigEnvironment.from(Map.of("SQLFLOW_KAFKA_BROKERS", brokers));
        PipelineConfig config = new PipelineConfigReader(environment)
                .read(examples.resolve("city-counts.yml")).orThrow();          // every fault at once, file:line:col
        ByteArrayOutputStream console = new ByteArrayOutputStream();           // where the console sink writes
        try (PipelineRunner runner = new PipelineRunner(config, environment,
                new PipelineRunner.Options(2, console))) {                     // stop after 2 messages; 0 = until requestStop()
            PipelineRunner.Outcome outcome = runner.run();
            System.out.println(outcome.toJson());                              // {"messages_consumed":2,"num_errors":0}
        }
        return console.toString(StandardCharsets.UTF_8);                       // one JSON object per result row
        // README:end
    }

    /** Starts a server on free ports over a database in {@code warehouse}, asks it one query over HTTP, stops it. */
    static String server(Path warehouse) throws Exception {
        // README:server
        ServerConfig config = new ServerConfigReader(ConfigEnvironment.fromSystem()).read(Optional.empty(), List.of(
                "warehouse=" + warehouse, "host=127.0.0.1", "http.port=0", "flight.port=0",
                "users.0.username=ada", "users.0.password=lovelace"));         // the keys of docs/server.md
        try (MallardServer server = MallardServer.start(config)) {             // Flight SQL and HTTP until close()
            String basic = Base64.getEncoder().encodeToString("ada:lovelace".getBytes(StandardCharsets.UTF_8));
            HttpRequest query = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/v1/query?q="
                    + URLEncoder.encode("SELECT 42 AS answer", StandardCharsets.UTF_8)))
                    .header("Authorization", "Basic " + basic).header("Accept", "application/jsonl").build();
            return HttpClient.newHttpClient().send(query, HttpResponse.BodyHandlers.ofString()).body();  // {"answer":42}
        }
        // README:end
    }

    /** Keeps a materialized view on a database file through the JDBC driver and reads it after a write. */
    static long views(Path database) throws Exception {
        // README:views
        try (Connection connection = DriverManager.getConnection("jdbc:mallard:" + database);
                Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE sales (region VARCHAR, amount INTEGER)");
            statement.execute("CREATE MATERIALIZED VIEW totals AS SELECT region, sum(amount) AS total FROM sales GROUP BY region");
            statement.executeUpdate("INSERT INTO sales VALUES ('north', 5), ('south', 7), ('north', 1)");
            try (ResultSet rows = statement.executeQuery("SELECT total FROM totals WHERE region = 'north'")) {
                rows.next();
                return rows.getLong("total");                                  // 6: current when the INSERT returned
            }
        }
        // README:end
    }
}
