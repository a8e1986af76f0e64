// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.handler;

import dev.mallard.flow.source.Message;
import java.nio.charset.StandardCharsets;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.duckdb.DuckDBConnection;

/**
 * Measures (not a test) how fast SQLFlow-shaped messages load: 100 batches of 5000, structured into a
 * declared table and inferred into a temp table, each followed by a GROUP BY over the batch.
 *
 * <p>Run: {@code java -cp <test classpath> dev.mallard.flow.handler.JsonBatchLoaderThroughput [batches] [size]
 * [threads]}; threads sets DuckDB's worker threads (default: DuckDB's, one per core).
 */
public final class JsonBatchLoaderThroughput {
    private static final int WARMUP_BATCHES = 20;

    private JsonBatchLoaderThroughput() {}

    public static void main(String[] args) throws SQLException {
        int batches = args.length > 0 ? Integer.parseInt(args[0]) : 100;
        int size = args.length > 1 ? Integer.parseInt(args[1]) : 5000;
        List<List<Message>> data = new ArrayList<>();
        for (int b = 0; b < batches; b++) {
            data.add(batch(b, size));
        }
        try (DuckDBConnection connection = (DuckDBConnection) DriverManager.getConnection("jdbc:duckdb:")) {
            if (args.length > 2) {
                execute(connection, "SET threads = " + Integer.parseInt(args[2]));
            }
            execute(connection, "CREATE TABLE events(ip VARCHAR, event VARCHAR, properties STRUCT(city VARCHAR, "
                    + "country VARCHAR), timestamp TIMESTAMPTZ, type VARCHAR, userId VARCHAR)");
            try (JsonBatchLoader loader = new JsonBatchLoader(connection)) {
                List<Column> columns = JsonBatchLoader.describe(connection, "events");
                SchemaInference inference = new SchemaInference();
                List<List<Message>> warmup = data.subList(0, Math.min(WARMUP_BATCHES, batches));
                structured(connection, loader, columns, warmup);
                inferred(connection, loader, inference, warmup);
                // Best of three rounds: the machine is shared, and a round can lose a core to someone else.
                double structured = 0;
                double inferred = 0;
                for (int round = 0; round < 3; round++) {
                    structured = Math.max(structured, structured(connection, loader, columns, data));
                    inferred = Math.max(inferred, inferred(connection, loader, inference, data));
                }
                double inferenceOnly = inferenceOnly(inference, data);
                System.out.printf("batches %d x %d messages, DuckDB threads %s%n", batches, size,
                        args.length > 2 ? args[2] : "default");
                System.out.printf("structured: %,.0f msgs/s%n", structured);
                System.out.printf("inferred:   %,.0f msgs/s%n", inferred);
                System.out.printf("inference alone: %,.0f msgs/s%n", inferenceOnly);
            }
        }
    }

    private static double structured(DuckDBConnection connection, JsonBatchLoader loader, List<Column> columns,
            List<List<Message>> data) throws SQLException {
        long messages = 0;
        long start = System.nanoTime();
        for (List<Message> batch : data) {
            execute(connection, "TRUNCATE events");
            loader.load(batch, "events", columns);
            messages += count(connection, "SELECT properties.city, count(*) FROM events GROUP BY 1");
        }
        return messages / ((System.nanoTime() - start) / 1e9);
    }

    private static double inferred(DuckDBConnection connection, JsonBatchLoader loader, SchemaInference inference,
            List<List<Message>> data) throws SQLException {
        long messages = 0;
        long start = System.nanoTime();
        for (List<Message> batch : data) {
            inference.reset();
            for (Message message : batch) {
                inference.add(message.value(), message.position());
            }
            loader.createAndLoad(batch, "batch", inference.columns());
            messages += count(connection, "SELECT properties.city, count(*) FROM batch GROUP BY 1");
        }
        return messages / ((System.nanoTime() - start) / 1e9);
    }

    private static double inferenceOnly(SchemaInference inference, List<List<Message>> data) {
        long messages = 0;
        long start = System.nanoTime();
        for (List<Message> batch : data) {
            inference.reset();
            for (Message message : batch) {
                inference.add(message.value(), message.position());
            }
            messages += inference.columns().size() > 0 ? batch.size() : 0;
        }
        return messages / ((System.nanoTime() - start) / 1e9);
    }

    private static List<Message> batch(int number, int size) {
        List<Message> batch = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            String city = (i & 1) == 0 ? "New York" : "Baltimore";
            String json = "{\"ip\":\"1.2.3.4\",\"event\":\"search\",\"properties\":{\"city\":\"" + city
                    + "\",\"country\":\"US\"},\"timestamp\":\"2024-01-01T00:00:00Z\",\"type\":\"track\",\"userId\":\"u"
                    + (number * size + i) + "\"}";
            batch.add(new Message("events", 0, (long) number * size + i, null, json.getBytes(StandardCharsets.UTF_8)));
        }
        return batch;
    }

    /** Sums the counts of a GROUP BY so that the result is read, not just planned. */
    private static long count(DuckDBConnection connection, String sql) throws SQLException {
        long total = 0;
        try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery(sql)) {
            while (rows.next()) {
                total += rows.getLong(2);
            }
        }
        return total;
    }

    private static void execute(DuckDBConnection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }
}
