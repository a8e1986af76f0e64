// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.pipeline;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.core.engine.Engine;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlText;
import dev.mallard.flow.metrics.PipelineMetrics;
import dev.mallard.flow.state.OffsetStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.duckdb.DuckDBConnection;

/**
 * What a stateful pipeline's database holds: offsets, table sizes, file size. {@code /stats} reads it on a
 * connection of its own, so a request never touches the pipeline thread's connection; it sees committed data.
 */
final class StateStats implements AutoCloseable {
    private static final String TABLES = "SELECT table_name, estimated_size FROM duckdb_tables() WHERE NOT temporary AND database_name = current_database()";

    private final Path file;
    private final DuckDBConnection session;
    private final ObjectMapper mapper = new ObjectMapper();

    StateStats(Engine engine, Path file) {
        this.file = requireNonNull(file, "file is null");
        this.session = engine.newSession();
    }

    /**
     * The {@code state} object of /stats, in SQLFlow's shape: the file, its size, every table's exact row count (the
     * offsets and the pipeline's identity, engine bookkeeping, left out as SQLFlow leaves out its own) and the offsets.
     * Synchronized: requests arrive on many threads, and one connection serves them.
     */
    synchronized ObjectNode state() {
        ObjectNode root = mapper.createObjectNode();
        root.put("path", file.toString());
        root.put("size_bytes", size());
        try (Statement statement = session.createStatement()) {
            List<String> names = new ArrayList<>();
            try (ResultSet rows = statement.executeQuery(TABLES + " AND table_name NOT IN ('" + OffsetStore.TABLE + "', '"
                    + OffsetStore.IDENTITY_TABLE + "') AND schema_name = 'main' ORDER BY 1")) {
                while (rows.next()) {
                    names.add(rows.getString(1));
                }
            }
            ArrayNode tables = root.putArray("tables");
            for (String name : names) {
                try (ResultSet rows = statement.executeQuery("SELECT count(*) FROM main." + SqlText.identifier(name))) {
                    rows.next();
                    tables.addObject().put("name", name).put("rows", rows.getLong(1));
                }
            }
            ArrayNode offsets = root.putArray("offsets");
            try (ResultSet rows = statement.executeQuery("SELECT topic, \"partition\", next_offset, committed_at::VARCHAR FROM "
                    + OffsetStore.TABLE + " ORDER BY 1, 2")) {
                while (rows.next()) {
                    // Mallard does not keep the leader epoch: -1 is Kafka's "unknown".
                    offsets.addObject().put("topic", rows.getString(1)).put("partition", rows.getInt(2))
                            .put("offset", rows.getLong(3)).put("leader_epoch", -1).put("committed_at", rows.getString(4));
                }
            }
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot read the state for /stats: " + e.getMessage(), e);
        }
        return root;
    }

    /** Updates the state gauges after a commit, on the pipeline's thread. */
    synchronized void observe(PipelineMetrics metrics) {
        metrics.stateDbSize(size());
        try (Statement statement = session.createStatement(); ResultSet rows = statement.executeQuery(TABLES)) {
            while (rows.next()) {
                metrics.stateTableRows(rows.getString(1), rows.getLong(2));
            }
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot read table sizes: " + e.getMessage(), e);
        }
    }

    private long size() {
        try {
            return Files.size(file);
        } catch (IOException e) {
            return 0;
        }
    }

    @Override
    public void close() {
        try {
            session.close();
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "closing the stats session failed: " + e.getMessage(), e);
        }
    }
}
