// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.ingest;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.arrow.ArrowExport;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlText;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.duckdb.DuckDBConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Parquet warehouse: a flush is written by DuckDB ({@code COPY ... TO}) into the queue's staging directory, each
 * file fsynced; then its registration is appended to the queue's {@link CommitLog} and fsynced (the commit); then each
 * file is renamed atomically into the queue's directory and the queue's view is replaced by one over every committed
 * file. A crash before the commit leaves only staged files, deleted on restart; one after it is finished on restart
 * (the staged files renamed into place). Readers of the view see whole flushes only.
 */
final class WarehouseWriter implements IngestionWriter {
    private static final Logger LOG = LoggerFactory.getLogger(WarehouseWriter.class);
    private static final String BATCH_COLUMN = "__mallard_batch";

    private final IngestionConfig.Queue queue;
    private final Path directory;
    private final Path staging;
    private final CommitLog log;
    private final DuckDBConnection connection;
    /** DazzleDuck's {@code x-dd-format: arrow}: files of Arrow IPC streams. */
    static final String ARROW_FORMAT = "arrow";
    private static final int ARROW_BATCH_ROWS = 10_000;

    private final BufferAllocator allocator;
    private final Clock clock;
    private final List<String> files = new ArrayList<>();
    private final java.util.function.LongConsumer tableWritten;
    private long nextSeq;

    /**
     * @param directory the queue's directory in the warehouse (already checked to be inside it)
     * @param staging the queue's directory under {@code temp_write_location}
     * @param logFile the queue's commit log
     * @param connection the queue's own writing connection; closed with the writer
     * @param tableWritten told the rows after each insert into the queue's table (the views' sync)
     */
    WarehouseWriter(IngestionConfig.Queue queue, Path directory, Path staging, Path logFile, DuckDBConnection connection,
            BufferAllocator allocator, Clock clock, java.util.function.LongConsumer tableWritten) {
        this.tableWritten = requireNonNull(tableWritten, "tableWritten is null");
        this.queue = requireNonNull(queue, "queue is null");
        this.directory = requireNonNull(directory, "directory is null");
        this.staging = requireNonNull(staging, "staging is null");
        this.connection = requireNonNull(connection, "connection is null");
        this.allocator = requireNonNull(allocator, "allocator is null");
        this.clock = requireNonNull(clock, "clock is null");
        try {
            this.log = CommitLog.open(logFile);
            recover();
            for (Map.Entry<String, String> variable : queue.variables().entrySet()) {
                try (Statement statement = connection.createStatement()) {
                    statement.execute("SET VARIABLE " + variable.getKey() + " = " + SqlText.literal(variable.getValue()));
                }
            }
            watermarkTable();
            refreshView();
            catchUpTable();
        } catch (IOException | SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_IO_FAILED, "cannot open ingestion queue " + queue.name() + ": " + e.getMessage(), e);
        }
    }

    /** Finishes the commits a crash interrupted and throws away what was never committed. */
    private void recover() throws IOException {
        for (CommitLog.Commit commit : log.commits()) {
            Path staged = flushDirectory(commit.seq()).resolve("final");
            for (String file : commit.files()) {
                Path target = directory.resolve(file);
                if (!Files.exists(target)) {
                    Path source = staged.resolve(file);
                    if (Files.exists(source)) {
                        moveDurably(source, target);
                        LOG.info("ingestion recovery published a committed file queue={} seq={} file={}", queue.name(), commit.seq(), file);
                    } else {
                        LOG.error("ingestion recovery cannot find a committed file queue={} seq={} file={}", queue.name(), commit.seq(), file);
                    }
                }
                files.add(file);
            }
            nextSeq = Math.max(nextSeq, commit.seq() + 1);
        }
        deleteTree(staging);
        Files.createDirectories(staging);
        // A copy across file systems interrupted before its rename.
        try (Stream<Path> walk = Files.walk(directory)) {
            for (Path leftover : walk.filter(path -> path.getFileName().toString().endsWith(".part")
                    && path.getFileName().toString().startsWith(".")).toList()) {
                Files.deleteIfExists(leftover);
            }
        }
    }

    @Override
    public List<CommitLog.Commit> recovered() {
        return log.commits();
    }

    @Override
    public CommitLog.Commit write(List<Received> batches) throws Exception {
        long seq = nextSeq++;
        Path flush = flushDirectory(seq);
        Path raw = flush.resolve("raw");
        Path staged = flush.resolve("final");
        Shape shape = batches.getFirst().shape();
        List<String> views = new ArrayList<>();
        List<AutoCloseable> open = new ArrayList<>();
        try {
            Files.createDirectories(raw);
            for (int i = 0; i < batches.size(); i++) {
                String view = "__mallard_ingest_" + seq + "_" + i;
                ArrowStreamReader reader = new ArrowStreamReader(new java.io.BufferedInputStream(Files.newInputStream(batches.get(i).spool()), 1 << 16),
                        allocator);
                ArrowArrayStream stream = ArrowArrayStream.allocateNew(allocator);
                open.add(reader);
                open.add(stream);
                try {
                    reader.getVectorSchemaRoot();
                } catch (IOException | RuntimeException e) {
                    throw new MallardException(ErrorCode.USER_INGEST_BATCH_INVALID, "the body is not an Arrow IPC stream (" + e.getMessage()
                            + "); send Content-Type " + Ingestion.ARROW_STREAM + " with a schema message first");
                }
                Data.exportArrayStream(allocator, reader, stream);
                connection.registerArrowStream(view, stream);
                views.add(view);
            }
            // One batch and nothing to compute per batch: DuckDB reads the stream straight into the file.
            boolean direct = batches.size() == 1 && queue.watermark().isEmpty() && queue.transformation().isEmpty();
            String source;
            if (direct) {
                source = views.getFirst();
            } else {
                StringBuilder union = new StringBuilder("CREATE OR REPLACE TEMP TABLE __mallard_flush AS ");
                for (int i = 0; i < views.size(); i++) {
                    if (i > 0) {
                        union.append(" UNION ALL BY NAME ");
                    }
                    union.append("SELECT *, ").append(i).append(" AS ").append(BATCH_COLUMN).append(" FROM ").append(views.get(i));
                }
                execute(union.toString());
                source = "(SELECT * EXCLUDE (" + BATCH_COLUMN + ") FROM __mallard_flush)";
            }
            String query = "WITH __this AS (SELECT * FROM " + source + ") " + queue.transformation().orElse("SELECT * FROM __this");
            if (!shape.sortOrder().isEmpty()) {
                query = "SELECT * FROM (" + query + ") ORDER BY " + shape.sortOrder().stream().map(WarehouseWriter::sortKey).collect(Collectors.joining(", "));
            }
            String extension = shape.format();
            boolean arrow = shape.format().equals(ARROW_FORMAT);
            String copyFormat = arrow ? "parquet" : shape.format();
            StringBuilder copy = new StringBuilder("COPY (").append(query).append(") TO ");
            StringBuilder options = new StringBuilder("FORMAT ").append(copyFormat);
            if (shape.format().equals("csv")) {
                options.append(", HEADER true");
            }
            if (shape.partition().isEmpty()) {
                copy.append(SqlText.literal(raw.resolve("data." + copyFormat).toString()));
            } else {
                copy.append(SqlText.literal(raw.resolve("p").toString()));
                options.append(", PARTITION_BY (").append(shape.partition().stream().map(SqlText::identifier).collect(Collectors.joining(", ")))
                        .append(")");
            }
            copy.append(" (").append(options).append(")");
            long rowsWritten;
            try (Statement statement = connection.createStatement()) {
                rowsWritten = statement.executeLargeUpdate(copy.toString());
            }
            if (arrow) {
                rewriteAsArrow(raw);
            }
            long[] rows = new long[batches.size()];
            if (direct) {
                rows[0] = rowsWritten;
            } else {
                try (Statement statement = connection.createStatement();
                        ResultSet rs = statement.executeQuery("SELECT " + BATCH_COLUMN + ", count(*) FROM __mallard_flush GROUP BY 1")) {
                    while (rs.next()) {
                        rows[rs.getInt(1)] = rs.getLong(2);
                    }
                }
            }
            List<CommitLog.Mark> marks = marks();
            // Name the files after the flush, keeping DuckDB's Hive directories; then force each to the disk.
            List<String> written = new ArrayList<>();
            long bytes = 0;
            List<Path> produced;
            try (Stream<Path> walk = Files.walk(raw)) {
                produced = walk.filter(Files::isRegularFile).sorted().toList();
            }
            Path base = shape.partition().isEmpty() ? raw : raw.resolve("p");
            for (int i = 0; i < produced.size(); i++) {
                Path file = produced.get(i);
                Path relativeDir = base.relativize(file.getParent());
                String name = String.format("%012d-%04d.%s", seq, i, extension);
                String relative = relativeDir.toString().isEmpty() ? name : relativeDir.resolve(name).toString();
                Path target = staged.resolve(relative);
                Files.createDirectories(target.getParent());
                Files.move(file, target, StandardCopyOption.ATOMIC_MOVE);
                force(target);
                bytes += Files.size(target);
                written.add(relative);
            }
            List<CommitLog.Batch> records = new ArrayList<>();
            long total = 0;
            for (int i = 0; i < batches.size(); i++) {
                records.add(new CommitLog.Batch(batches.get(i).producer(), batches.get(i).batchId(), rows[i]));
                total += rows[i];
            }
            CommitLog.Commit commit = new CommitLog.Commit(seq, clock.instant().toString(), written, bytes, total, records, marks);
            log.append(commit);
            // Committed: from here a crash is finished by recovery, so a failure is logged, not answered.
            try {
                for (String relative : written) {
                    moveDurably(staged.resolve(relative), directory.resolve(relative));
                }
                files.addAll(written);
                deleteTree(flush);
                refreshView();
                insertMarks(commit);
                if (applyToTable(commit)) {
                    tableWritten.accept(commit.rows());
                }
            } catch (IOException | SQLException e) {
                LOG.error("ingestion commit published partly; a restart finishes it queue={} seq={} error={}", queue.name(), seq, e.toString());
            }
            return commit;
        } catch (Exception e) {
            nextSeq = seq;
            try {
                deleteTree(flush);
            } catch (IOException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        } finally {
            for (String view : views) {
                try (Statement statement = connection.createStatement()) {
                    statement.execute("DROP VIEW IF EXISTS temp.main." + view);
                } catch (SQLException e) {
                    LOG.debug("cannot drop the ingestion view view={} error={}", view, e.toString());
                }
            }
            if (!views.isEmpty() && !(batches.size() == 1 && queue.watermark().isEmpty() && queue.transformation().isEmpty())) {
                try (Statement statement = connection.createStatement()) {
                    statement.execute("DROP TABLE IF EXISTS temp.main.__mallard_flush");
                } catch (SQLException e) {
                    LOG.debug("cannot drop the ingestion flush table error={}", e.toString());
                }
            }
            for (int i = open.size() - 1; i >= 0; i--) {
                try {
                    open.get(i).close();
                } catch (Exception e) {
                    LOG.debug("closing an ingested stream failed error={}", e.toString());
                }
            }
        }
    }

    /**
     * DuckDB has no Arrow file writer (DazzleDuck's {@code arrow} format needs a community extension): a flush in that
     * format is written as Parquet by DuckDB, partitioned and sorted as any other, then each file is rewritten beside
     * itself as an Arrow IPC stream, the form {@code /v1/ingest} takes and {@code /v1/query} answers.
     */
    private void rewriteAsArrow(Path raw) throws IOException, SQLException {
        List<Path> written;
        try (Stream<Path> walk = Files.walk(raw)) {
            written = walk.filter(Files::isRegularFile).sorted().toList();
        }
        for (Path parquet : written) {
            String name = parquet.getFileName().toString();
            Path arrowFile = parquet.resolveSibling(name.substring(0, name.length() - ".parquet".length()) + "." + ARROW_FORMAT);
            try (Statement statement = connection.createStatement();
                    ResultSet rs = statement.executeQuery("SELECT * FROM read_parquet(" + SqlText.literal(parquet.toString()) + ", hive_partitioning = false)");
                    ArrowReader reader = ArrowExport.export(rs, allocator, ARROW_BATCH_ROWS);
                    java.io.OutputStream out = new java.io.BufferedOutputStream(Files.newOutputStream(arrowFile), 1 << 16);
                    ArrowStreamWriter writer = new ArrowStreamWriter(reader.getVectorSchemaRoot(), null, java.nio.channels.Channels.newChannel(out))) {
                writer.start();
                while (reader.loadNextBatch()) {
                    writer.writeBatch();
                }
                writer.end();
            }
            Files.delete(parquet);
        }
    }

    /** The watermark rows of the flush in {@code __mallard_flush}: per batch (and group), the timestamp's least and greatest. */
    private List<CommitLog.Mark> marks() throws SQLException {
        if (queue.watermark().isEmpty()) {
            return List.of();
        }
        IngestionConfig.Watermark mark = queue.watermark().get();
        StringBuilder sql = new StringBuilder("SELECT ").append(BATCH_COLUMN);
        for (String group : mark.groupColumns()) {
            sql.append(", CAST(").append(SqlText.identifier(group)).append(" AS VARCHAR)");
        }
        sql.append(", CAST(min(").append(SqlText.identifier(mark.timestampColumn())).append(") AS VARCHAR), CAST(max(").append(SqlText.identifier(mark.timestampColumn()))
                .append(") AS VARCHAR), count(*) FROM __mallard_flush GROUP BY ALL ORDER BY ALL");
        List<CommitLog.Mark> marks = new ArrayList<>();
        try (Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery(sql.toString())) {
            while (rs.next()) {
                Map<String, String> group = new LinkedHashMap<>();
                for (int i = 0; i < mark.groupColumns().size(); i++) {
                    String value = rs.getString(2 + i);
                    group.put(mark.groupColumns().get(i), value == null ? "" : value);
                }
                int at = 2 + mark.groupColumns().size();
                marks.add(new CommitLog.Mark(rs.getInt(1), group, String.valueOf(rs.getString(at)), String.valueOf(rs.getString(at + 1)), rs.getLong(at + 2)));
            }
        }
        return marks;
    }

    /** The watermark table, rebuilt from the commit log (which is what commits a row) when the queue opens. */
    private void watermarkTable() throws SQLException {
        if (queue.watermark().isEmpty()) {
            return;
        }
        IngestionConfig.Watermark mark = queue.watermark().get();
        StringBuilder sql = new StringBuilder("CREATE OR REPLACE TABLE ").append(SqlText.identifier(mark.table())).append(" (seq BIGINT, producer_id VARCHAR, batch_id BIGINT");
        for (String group : mark.groupColumns()) {
            sql.append(", ").append(SqlText.identifier(group)).append(" VARCHAR");
        }
        sql.append(", min_timestamp VARCHAR, max_timestamp VARCHAR, row_count BIGINT, committed_at VARCHAR)");
        execute(sql.toString());
        for (CommitLog.Commit commit : log.commits()) {
            insertMarks(commit);
        }
    }

    private void insertMarks(CommitLog.Commit commit) throws SQLException {
        if (queue.watermark().isEmpty() || commit.marks().isEmpty()) {
            return;
        }
        IngestionConfig.Watermark mark = queue.watermark().get();
        StringBuilder sql = new StringBuilder("INSERT INTO ").append(SqlText.identifier(mark.table())).append(" VALUES ");
        for (int i = 0; i < commit.marks().size(); i++) {
            CommitLog.Mark row = commit.marks().get(i);
            CommitLog.Batch batch = commit.batches().get(row.batch());
            sql.append(i == 0 ? "" : ", ").append('(').append(commit.seq()).append(", ").append(SqlText.literal(batch.producer())).append(", ")
                    .append(batch.batchId());
            for (String group : mark.groupColumns()) {
                sql.append(", ").append(SqlText.literal(row.group().getOrDefault(group, "")));
            }
            sql.append(", ").append(SqlText.literal(row.min())).append(", ").append(SqlText.literal(row.max())).append(", ").append(row.rows()).append(", ")
                    .append(SqlText.literal(commit.at())).append(')');
        }
        execute(sql.toString());
    }

    /**
     * Inserts a commit's files into the queue's table with the commit's sequence number as the table's progress, in one
     * DuckDB transaction: each commit lands in the table once, whatever crash comes between. False without a table.
     */
    private boolean applyToTable(CommitLog.Commit commit) throws SQLException {
        if (queue.table().isEmpty() || commit.files().isEmpty()) {
            return false;
        }
        String table = SqlText.identifier(queue.table().get());
        String source = reader() + "([" + commit.files().stream().map(file -> SqlText.literal(directory.resolve(file).toString()))
                .collect(Collectors.joining(", ")) + "], hive_partitioning = true, union_by_name = true)";
        execute("BEGIN TRANSACTION");
        try {
            execute("CREATE TABLE IF NOT EXISTS " + table + " AS SELECT * FROM " + source + " LIMIT 0");
            execute("INSERT INTO " + table + " BY NAME SELECT * FROM " + source);
            execute("INSERT OR REPLACE INTO " + APPLIED + " VALUES (" + SqlText.literal(queue.name()) + ", " + commit.seq() + ")");
            execute("COMMIT");
            return true;
        } catch (SQLException e) {
            execute("ROLLBACK");
            throw e;
        }
    }

    private static final String APPLIED = "mallard_ingest_applied";

    /** After a restart: the commits the queue's table has not had yet (all of them, for an in-memory database). */
    private void catchUpTable() throws SQLException {
        if (queue.table().isEmpty()) {
            return;
        }
        execute("CREATE TABLE IF NOT EXISTS " + APPLIED + " (queue VARCHAR PRIMARY KEY, seq BIGINT)");
        long applied = -1;
        try (Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery("SELECT seq FROM " + APPLIED + " WHERE queue = " + SqlText.literal(queue.name())
                        + " AND EXISTS (SELECT 1 FROM duckdb_tables() WHERE table_name = " + SqlText.literal(queue.table().get()) + ")")) {
            if (rs.next()) {
                applied = rs.getLong(1);
            }
        }
        long rows = 0;
        for (CommitLog.Commit commit : log.commits()) {
            if (commit.seq() > applied && applyToTable(commit)) {
                rows += commit.rows();
            }
        }
        if (rows > 0) {
            tableWritten.accept(rows);
        }
    }

    private String reader() {
        return switch (queue.format()) {
            case "csv" -> "read_csv";
            case "json" -> "read_json_auto";
            default -> "read_parquet";
        };
    }

    /** Replaces the queue's view by one over every committed file: a reader sees a flush whole or not at all. */
    private void refreshView() throws SQLException {
        String extension = queue.format();
        List<String> paths = files.stream().filter(file -> file.endsWith("." + extension)).map(file -> SqlText.literal(directory.resolve(file).toString())).toList();
        if (paths.isEmpty()) {
            return;
        }
        String reader = switch (extension) {
            case "csv" -> "read_csv";
            case "json" -> "read_json_auto";
            default -> "read_parquet";
        };
        // Not union_by_name: that reads every file's schema at each replacement, so the n-th commit would cost n reads.
        execute("CREATE OR REPLACE VIEW " + SqlText.identifier(queue.name()) + " AS SELECT * FROM " + reader + "([" + String.join(", ", paths)
                + "], hive_partitioning = true)");
    }

    private Path flushDirectory(long seq) {
        return staging.resolve("flush-" + seq);
    }

    private void execute(String sql) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    /** Renames a file into place atomically and forces its directory; across file systems through a hidden copy. */
    static void moveDurably(Path source, Path target) throws IOException {
        Files.createDirectories(target.getParent());
        try {
            Files.move(source, target, StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException e) {
            Path part = target.resolveSibling("." + target.getFileName() + ".part");
            Files.copy(source, part, StandardCopyOption.REPLACE_EXISTING);
            force(part);
            Files.move(part, target, StandardCopyOption.ATOMIC_MOVE);
            Files.delete(source);
        }
        force(target.getParent());
    }

    static void force(Path path) throws IOException {
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            channel.force(true);
        }
    }

    static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path path : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }

    private static String sortKey(String column) {
        String[] parts = column.trim().split("\\s+");
        if (parts.length == 2 && (parts[1].equalsIgnoreCase("asc") || parts[1].equalsIgnoreCase("desc"))) {
            return SqlText.identifier(parts[0]) + " " + parts[1].toUpperCase(java.util.Locale.ROOT);
        }
        return SqlText.identifier(column.trim());
    }

    @Override
    public void close() {
        try {
            log.close();
        } catch (IOException e) {
            LOG.warn("cannot close the ingestion commit log queue={} error={}", queue.name(), e.toString());
        }
        try {
            connection.close();
        } catch (SQLException e) {
            LOG.warn("cannot close the ingestion connection queue={} error={}", queue.name(), e.toString());
        }
    }

}
