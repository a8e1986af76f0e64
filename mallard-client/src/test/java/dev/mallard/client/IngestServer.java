// SPDX-License-Identifier: Apache-2.0
package dev.mallard.client;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.server.MallardServer;
import dev.mallard.server.config.ServerConfigReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/** A real Mallard server in this JVM on free ports, with ingestion queues, and a DuckDB reading the files they wrote. */
final class IngestServer {
    static final String USER = "ada";
    static final String PASSWORD = "lovelace";

    private IngestServer() {}

    /** Starts a server on {@code warehouse} with one queue per name, each writing under {@code <warehouse>/<name>}. */
    static MallardServer start(Path warehouse, String... queues) {
        return start(warehouse, List.of(), queues);
    }

    /** The same, with more {@code --conf key=value} settings. */
    static MallardServer start(Path warehouse, List<String> settings, String... queues) {
        List<String> conf = new ArrayList<>(List.of("warehouse=" + warehouse, "host=127.0.0.1", "http.port=0", "flight.port=0",
                "users.0.username=" + USER, "users.0.password=" + PASSWORD));
        for (int i = 0; i < queues.length; i++) {
            conf.add("ingestion.queues." + i + ".name=" + queues[i]);
        }
        conf.addAll(settings);
        return MallardServer.start(new ServerConfigReader(ConfigEnvironment.from(Map.of()), Map.of()).read(Optional.empty(), conf));
    }

    /** Runs {@code sql} over {@code rows}, a view of every Parquet file under {@code <warehouse>/<queue>}. */
    static List<List<Object>> query(Path warehouse, String queue, String sql) throws Exception {
        Path dir = warehouse.resolve(queue);
        boolean any;
        try (Stream<Path> files = Files.exists(dir) ? Files.walk(dir) : Stream.empty()) {
            any = files.anyMatch(f -> f.getFileName().toString().endsWith(".parquet"));
        }
        try (Connection duck = DriverManager.getConnection("jdbc:duckdb:"); Statement statement = duck.createStatement()) {
            if (any) {
                statement.execute("CREATE VIEW rows AS SELECT * FROM read_parquet('" + dir.toString().replace("'", "''") + "/**/*.parquet')");
            } else {
                statement.execute("CREATE VIEW rows AS SELECT * FROM (SELECT 1::BIGINT AS id, 1 AS thread, 'x' AS note) WHERE false");
            }
            List<List<Object>> out = new ArrayList<>();
            try (ResultSet rs = statement.executeQuery(sql)) {
                int n = rs.getMetaData().getColumnCount();
                while (rs.next()) {
                    List<Object> row = new ArrayList<>();
                    for (int c = 1; c <= n; c++) {
                        row.add(rs.getObject(c));
                    }
                    out.add(row);
                }
            }
            return out;
        }
    }

    /** {@code count(*)}, {@code count(DISTINCT id)} and {@code sum(id)} over the queue's rows. */
    static List<Object> counts(Path warehouse, String queue) throws Exception {
        return query(warehouse, queue, "SELECT count(*), count(DISTINCT id), coalesce(sum(id), 0)::BIGINT FROM rows").get(0);
    }
}
