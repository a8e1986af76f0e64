// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.window;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.flow.source.Source.Partition;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;

/**
 * One window's durable state in the pipeline's database, keyed by the window's table name so that several windows
 * share the three tables: its watermark ({@value TumblingWindow#WATERMARKS}), how far it closed
 * ({@value TumblingWindow#WINDOWS}) and, per partition, the first offset that fed each retained bucket
 * ({@value TumblingWindow#FEEDS}). Each write runs on the connection it is given, inside whatever transaction that
 * connection has open, so a write commits with the rows it describes. The tables have no index, so DuckDB reclaims
 * their updated rows.
 */
final class WindowStore {
    /** What a start finds: W, how far the window closed (each {@link Watermark#NONE} when never), and the feeds. */
    record Restored(long watermark, long closedUpTo, Map<Partition, Map<Long, Long>> feeds) {
        Restored {
            feeds = Map.copyOf(feeds);
        }
    }

    private final String window;

    WindowStore(String window) {
        this.window = requireNonNull(window, "window is null");
    }

    /** Creates the tables when missing and reads this window's state. */
    Restored restore(Connection connection) {
        try (Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE IF NOT EXISTS " + TumblingWindow.WATERMARKS
                    + " (\"window\" VARCHAR NOT NULL, watermark_us BIGINT NOT NULL, updated_at TIMESTAMPTZ NOT NULL)");
            statement.execute("CREATE TABLE IF NOT EXISTS " + TumblingWindow.WINDOWS
                    + " (\"window\" VARCHAR NOT NULL, closed_up_to_us BIGINT NOT NULL, updated_at TIMESTAMPTZ NOT NULL)");
            statement.execute("CREATE TABLE IF NOT EXISTS " + TumblingWindow.FEEDS + " (\"window\" VARCHAR NOT NULL, topic VARCHAR NOT NULL, "
                    + "\"partition\" INTEGER NOT NULL, bucket_us BIGINT NOT NULL, first_offset BIGINT NOT NULL)");
            Map<Partition, Map<Long, Long>> feeds = new HashMap<>();
            try (PreparedStatement read = connection.prepareStatement("SELECT topic, \"partition\", bucket_us, min(first_offset) FROM "
                    + TumblingWindow.FEEDS + " WHERE \"window\" = ? GROUP BY ALL")) {
                read.setString(1, window);
                try (ResultSet rows = read.executeQuery()) {
                    while (rows.next()) {
                        feeds.computeIfAbsent(new Partition(rows.getString(1), rows.getInt(2)), p -> new HashMap<>())
                                .put(rows.getLong(3), rows.getLong(4));
                    }
                }
            }
            return new Restored(latest(connection, TumblingWindow.WATERMARKS, "watermark_us"),
                    latest(connection, TumblingWindow.WINDOWS, "closed_up_to_us"), feeds);
        } catch (SQLException e) {
            throw failed("cannot read the window's state", e);
        }
    }

    private long latest(Connection connection, String table, String column) throws SQLException {
        try (PreparedStatement read = connection.prepareStatement("SELECT max(" + column + ") FROM " + table + " WHERE \"window\" = ?")) {
            read.setString(1, window);
            try (ResultSet rows = read.executeQuery()) {
                return rows.next() && rows.getObject(1) != null ? rows.getLong(1) : Watermark.NONE;
            }
        }
    }

    void recordWatermark(Connection connection, long watermark) {
        record(connection, TumblingWindow.WATERMARKS, "watermark_us", watermark);
    }

    void recordClosedUpTo(Connection connection, long closedUpTo) {
        record(connection, TumblingWindow.WINDOWS, "closed_up_to_us", closedUpTo);
    }

    void recordFeed(Connection connection, Partition partition, long bucket, long offset) {
        try (PreparedStatement insert = connection.prepareStatement("INSERT INTO " + TumblingWindow.FEEDS + " VALUES (?, ?, ?, ?, ?)")) {
            insert.setString(1, window);
            insert.setString(2, partition.topic());
            insert.setInt(3, partition.partition());
            insert.setLong(4, bucket);
            insert.setLong(5, offset);
            insert.execute();
        } catch (SQLException e) {
            throw failed("cannot record the window's offsets in " + TumblingWindow.FEEDS, e);
        }
    }

    /** Forgets the feeds of buckets starting after {@code bucket} (the open ones a hand-over rebuilds). */
    void forgetFeedsAfter(Connection connection, long bucket) {
        forgetFeeds(connection, "bucket_us > ?", bucket);
    }

    /** Forgets the feeds of buckets starting at or before {@code bucket} (rows deleted past the allowed lateness). */
    void forgetFeedsUpTo(Connection connection, long bucket) {
        forgetFeeds(connection, "bucket_us <= ?", bucket);
    }

    private void forgetFeeds(Connection connection, String condition, long bucket) {
        try (PreparedStatement delete = connection.prepareStatement("DELETE FROM " + TumblingWindow.FEEDS + " WHERE \"window\" = ? AND " + condition)) {
            delete.setString(1, window);
            delete.setLong(2, bucket);
            delete.execute();
        } catch (SQLException e) {
            throw failed("cannot update " + TumblingWindow.FEEDS, e);
        }
    }

    /** Forgets every feed of these partitions (another member owns them now). */
    void forgetPartitions(Connection connection, Collection<Partition> partitions) {
        try (PreparedStatement gone = connection.prepareStatement(
                "DELETE FROM " + TumblingWindow.FEEDS + " WHERE \"window\" = ? AND topic = ? AND \"partition\" = ?")) {
            for (Partition partition : partitions) {
                gone.setString(1, window);
                gone.setString(2, partition.topic());
                gone.setInt(3, partition.partition());
                gone.execute();
            }
        } catch (SQLException e) {
            throw failed("cannot update " + TumblingWindow.FEEDS, e);
        }
    }

    private void record(Connection connection, String table, String column, long value) {
        try (PreparedStatement update = connection.prepareStatement(
                "UPDATE " + table + " SET " + column + " = ?, updated_at = now() WHERE \"window\" = ?")) {
            update.setLong(1, value);
            update.setString(2, window);
            if (update.executeUpdate() == 0) {
                try (PreparedStatement insert = connection.prepareStatement("INSERT INTO " + table + " VALUES (?, ?, now())")) {
                    insert.setString(1, window);
                    insert.setLong(2, value);
                    insert.execute();
                }
            }
        } catch (SQLException e) {
            throw failed("cannot record the window's state in " + table, e);
        }
    }

    private static MallardException failed(String what, SQLException e) {
        return new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, what + ": " + TumblingWindow.firstLine(e), e);
    }
}
