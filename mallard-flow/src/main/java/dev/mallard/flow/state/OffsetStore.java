// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.state;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlText;
import dev.mallard.flow.source.Source.Partition;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.duckdb.DuckDBConnection;

/**
 * The source positions a pipeline's state reflects, kept in {@code sqlflow_offsets} beside the handler's
 * tables and written in the same transaction as the batch that advanced them.
 */
public final class OffsetStore {
    public static final String TABLE = "sqlflow_offsets";

    private final DuckDBConnection connection;
    private final String offsetsTable;
    private final Map<Partition, Long> stored = new HashMap<>();

    public static final String IDENTITY_TABLE = "sqlflow_pipeline";

    /**
     * Opens the offsets of the state file {@code file} for the pipeline {@code identity}: a file that records another
     * pipeline is refused; one that records none (new, or written before files recorded it) is claimed.
     */
    public OffsetStore(DuckDBConnection connection, PipelineIdentity identity, java.nio.file.Path file) {
        this(connection, identity, file, Optional.empty());
    }

    /**
     * As {@link #OffsetStore(DuckDBConnection, PipelineIdentity, java.nio.file.Path)}, with the two tables in {@code schema}
     * (created when missing): a database several pipelines share, a server's, keeps each one's offsets apart.
     */
    public OffsetStore(DuckDBConnection connection, PipelineIdentity identity, java.nio.file.Path file, Optional<String> schema) {
        this.connection = requireNonNull(connection, "connection is null");
        requireNonNull(identity, "identity is null");
        requireNonNull(file, "file is null");
        requireNonNull(schema, "schema is null");
        String prefix = schema.map(name -> SqlText.identifier(name) + ".").orElse("");
        String identityTable = prefix + IDENTITY_TABLE;
        this.offsetsTable = prefix + TABLE;
        try (Statement statement = connection.createStatement()) {
            if (schema.isPresent()) {
                statement.execute("CREATE SCHEMA IF NOT EXISTS " + SqlText.identifier(schema.get()));
            }
            statement.execute("CREATE TABLE IF NOT EXISTS " + identityTable
                    + " (name VARCHAR NOT NULL, topics VARCHAR[] NOT NULL, group_id VARCHAR NOT NULL)");
            Optional<PipelineIdentity> recorded = Optional.empty();
            try (ResultSet rows = statement.executeQuery("SELECT name, topics, group_id FROM " + identityTable)) {
                if (rows.next()) {
                    Object[] topics = (Object[]) rows.getArray(2).getArray();
                    recorded = Optional.of(new PipelineIdentity(rows.getString(1),
                            java.util.Arrays.stream(topics).map(String::valueOf).toList(), rows.getString(3)));
                }
            }
            if (recorded.isPresent() && !recorded.get().equals(identity)) {
                throw new MallardException(ErrorCode.USER_STATE_MISMATCH, "state file " + file + " belongs to the pipeline "
                        + recorded.get() + ", not to this one (" + identity + "); give this pipeline a state.path of its own, "
                        + "or delete the file to start it over");
            }
            if (recorded.isEmpty()) {
                try (PreparedStatement insert = connection.prepareStatement("INSERT INTO " + identityTable + " VALUES (?, ?, ?)")) {
                    insert.setString(1, identity.name());
                    insert.setArray(2, connection.createArrayOf("VARCHAR", identity.topics().toArray()));
                    insert.setString(3, identity.group());
                    insert.execute();
                }
            }
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot read " + IDENTITY_TABLE + ": " + e.getMessage(), e);
        }
        try (Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE IF NOT EXISTS " + offsetsTable
                    + " (topic VARCHAR NOT NULL, \"partition\" INTEGER NOT NULL, next_offset BIGINT NOT NULL, committed_at TIMESTAMPTZ NOT NULL,"
                    + " PRIMARY KEY (topic, \"partition\"))");
            try (ResultSet rows = statement.executeQuery("SELECT topic, \"partition\", next_offset FROM " + offsetsTable)) {
                while (rows.next()) {
                    stored.put(new Partition(rows.getString(1), rows.getInt(2)), rows.getLong(3));
                }
            }
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot read " + TABLE + ": " + e.getMessage(), e);
        }
    }

    public Optional<Long> next(Partition partition) {
        return Optional.ofNullable(stored.get(partition));
    }

    public Map<Partition, Long> all() {
        return Map.copyOf(stored);
    }

    /** Records positions inside the caller's open transaction; visible to {@link #next} once written. */
    public void record(Map<Partition, Long> nextOffsets) {
        try (PreparedStatement upsert = connection.prepareStatement("INSERT OR REPLACE INTO " + offsetsTable + " VALUES (?, ?, ?, now())")) {
            for (Map.Entry<Partition, Long> entry : nextOffsets.entrySet()) {
                upsert.setString(1, entry.getKey().topic());
                upsert.setInt(2, entry.getKey().partition());
                upsert.setLong(3, entry.getValue());
                // One execute per partition: DuckDB's executeBatch opens a transaction of its own, and this runs in the batch's.
                upsert.execute();
            }
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot record offsets in " + TABLE + ": " + e.getMessage(), e);
        }
        stored.putAll(nextOffsets);
    }
}
