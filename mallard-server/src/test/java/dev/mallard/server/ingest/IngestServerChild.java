// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.ingest;

import dev.mallard.server.MallardServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A server in a process of its own for {@link IngestCrashIT}, which kills it with SIGKILL: queue {@code events}
 * partitioned by {@code bucket} (so one batch is several files) and inserted into the table {@code events_rows} of a
 * database file, its HTTP port written to {@code <root>/port}. With a second argument {@code backpressure}, the
 * server of {@link IngestMemoryBoundIT} instead: an in-memory database and one queue {@code events} held to
 * {@link IngestMemoryBoundIT#MAX_PENDING_WRITE}, whose writer waits {@link IngestMemoryBoundIT#FLUSH_INTERVAL} before each flush.
 */
public final class IngestServerChild {
    private IngestServerChild() {}

    static IngestionConfig ingestion() {
        return IngestFixtures.queues(new IngestionConfig.Queue("events", "lake/events", Optional.of("SELECT *, id % 3 AS bucket FROM __this"),
                List.of("bucket"), List.of(), "parquet", IngestionConfig.DEFAULT_TARGET_FILE_SIZE, Duration.ZERO, Map.of(), Optional.empty())
                .withTable("events_rows"));
    }

    public static void main(String[] args) throws Exception {
        Path root = Path.of(args[0]);
        List<dev.mallard.server.config.UserAccount> users = List.of(new dev.mallard.server.config.UserAccount(IngestFixtures.USER,
                dev.mallard.server.auth.PasswordHash.of(IngestFixtures.PASSWORD)));
        MallardServer server;
        if (args.length > 1 && args[1].equals("backpressure")) {
            IngestionConfig.Queue events = new IngestionConfig.Queue("events", "lake/events", Optional.empty(), List.of(), List.of(), "parquet",
                    IngestionConfig.DEFAULT_TARGET_FILE_SIZE, IngestMemoryBoundIT.FLUSH_INTERVAL, Map.of(), Optional.empty());
            server = MallardServer.start(IngestFixtures.config(root, dev.mallard.server.config.AccessMode.COMPLETE, new IngestionConfig(List.of(events),
                    Optional.empty(), Optional.empty(), IngestMemoryBoundIT.MAX_PENDING_WRITE), users));
        } else {
            // A database file: the queue's table and its progress survive the kill, so a restart must not insert a commit twice.
            server = MallardServer.start(IngestFixtures.config(root, dev.mallard.server.config.AccessMode.COMPLETE, ingestion(), users,
                    Optional.of(root.resolve("mallard.duckdb"))));
        }
        Path port = root.resolve("port");
        Path next = root.resolve("port.next");
        Files.writeString(next, String.valueOf(server.httpPort()));
        Files.move(next, port, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        // Runs until killed.
        Thread.currentThread().join();
    }
}
