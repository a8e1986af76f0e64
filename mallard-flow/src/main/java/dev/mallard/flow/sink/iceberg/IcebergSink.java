// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink.iceberg;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlText;
import dev.mallard.flow.sink.ResultTable;
import dev.mallard.flow.sink.Sink;
import dev.mallard.flow.source.Source.Partition;
import dev.mallard.flow.state.PipelineIdentity;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.jdbc.UncheckedSQLException;
import org.apache.iceberg.types.Types;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Appends each batch to an Iceberg table through a JDBC catalog (SQLite or Postgres): DuckDB writes the batch as one
 * Parquet file into the table's data directory, and one Iceberg append commits it, so a flush is one snapshot. A
 * missing table (and namespace) is created from the first batch's columns.
 *
 * <p>Each snapshot's summary records the pipeline ({@value #SUMMARY_PIPELINE}, {@value #SUMMARY_GROUP}) and the source
 * positions its rows reach ({@value #SUMMARY_POSITIONS}): the rows and the positions commit together. A crash after
 * the Iceberg commit and before the pipeline's own offsets commit leaves the table ahead; the pipeline then resumes from
 * {@link #committedPositions}, and a retried flush whose batch a snapshot already holds commits nothing.
 */
public final class IcebergSink implements Sink {
    public static final String SUMMARY_PIPELINE = "mallard.pipeline";
    public static final String SUMMARY_GROUP = "mallard.group";
    public static final String SUMMARY_POSITIONS = "mallard.positions";

    private static final Logger LOG = LoggerFactory.getLogger(IcebergSink.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final IcebergSettings settings;
    private final BufferAllocator allocator;
    private final TableIdentifier identifier;
    private JdbcCatalog catalog;
    private Table table;
    private ResultTable pending;
    private PipelineIdentity pipeline;
    private Map<Partition, Long> batchPositions = Map.of();

    public IcebergSink(IcebergSettings settings, BufferAllocator allocator) {
        this.settings = requireNonNull(settings, "settings is null");
        this.allocator = requireNonNull(allocator, "allocator is null");
        this.identifier = TableIdentifier.of(Namespace.of(settings.namespace().toArray(String[]::new)), settings.table());
    }

    @Override
    public void positions(PipelineIdentity pipeline, Map<Partition, Long> nextOffsets) {
        this.pipeline = requireNonNull(pipeline, "pipeline is null");
        this.batchPositions = Map.copyOf(nextOffsets);
    }

    @Override
    public void write(ResultTable batch) {
        pending = batch;
    }

    @Override
    public void flush() {
        if (pending == null) {
            return;
        }
        ResultTable batch = pending;
        pending = null;
        Map<Partition, Long> positions = batchPositions;
        batchPositions = Map.of();
        try {
            List<IcebergColumns.Column> columns = IcebergColumns.of(batch, allocator);
            Table target = table(columns);
            if (pipeline != null && !positions.isEmpty()) {
                target.refresh();
                if (covers(recordedPositions(target, pipeline), positions)) {
                    // A flush retried after a commit whose answer was lost, or a batch read again after a crash.
                    LOG.info("batch already committed to the iceberg table, not appended again table={} positions={}", identifier, positions);
                    return;
                }
            }
            append(target, batch, columns, positions);
        } catch (UncheckedSQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_SINK_UNREACHABLE, "iceberg catalog " + IcebergSettings.redacted(settings.jdbcUrl())
                    + " failed: " + causeText(e), e);
        }
    }

    private void append(Table target, ResultTable batch, List<IcebergColumns.Column> columns, Map<Partition, Long> positions) {
        String location = target.locationProvider().newDataLocation("mallard-" + UUID.randomUUID() + ".parquet");
        Path file = LocalFileIO.path(location);
        long size = copy(batch, columns, target, file);
        DataFile dataFile = DataFiles.builder(target.spec()).withPath(location).withFormat(FileFormat.PARQUET)
                .withFileSizeInBytes(size).withRecordCount(batch.rows()).build();
        AppendFiles append = target.newAppend().appendFile(dataFile);
        if (pipeline != null && !positions.isEmpty()) {
            append.set(SUMMARY_PIPELINE, pipeline.name()).set(SUMMARY_GROUP, pipeline.group()).set(SUMMARY_POSITIONS, encode(positions));
        }
        try {
            append.commit();
        } catch (CommitStateUnknownException e) {
            // The catalog may hold the snapshot: the retry finds it by its positions, and the file stays for it.
            throw new MallardException(ErrorCode.SYSTEM_SINK_UNREACHABLE, "iceberg commit to " + identifier + " is not known to have "
                    + "succeeded: " + e.getMessage(), e);
        } catch (CommitFailedException | UncheckedSQLException e) {
            deleteQuietly(file);
            throw e instanceof UncheckedSQLException unchecked ? unchecked
                    : new MallardException(ErrorCode.SYSTEM_SINK_WRITE_FAILED, "iceberg commit to " + identifier + " failed: " + e.getMessage(), e);
        }
        LOG.debug("iceberg snapshot committed table={} rows={} file={} snapshot={}", identifier, batch.rows(), location,
                target.currentSnapshot().snapshotId());
    }

    /** DuckDB writes the batch as Parquet, each column cast to the table's type and carrying its field id. */
    private long copy(ResultTable batch, List<IcebergColumns.Column> columns, Table target, Path file) {
        List<String> select = new ArrayList<>();
        List<String> ids = new ArrayList<>();
        for (IcebergColumns.Column column : columns) {
            Types.NestedField field = target.schema().caseInsensitiveFindField(column.name());
            if (field == null) {
                throw new MallardException(ErrorCode.USER_ICEBERG_SCHEMA_MISMATCH, "result column " + column.name() + " is not a column of "
                        + "the iceberg table " + identifier + " (" + target.schema().columns().stream().map(Types.NestedField::name).toList()
                        + "); rename or drop it in the handler's SQL, or add the column to the table");
            }
            String type = IcebergColumns.duckDbType(field.type()).orElseThrow(() -> new MallardException(ErrorCode.USER_ICEBERG_SCHEMA_MISMATCH,
                    "column " + field.name() + " of the iceberg table " + identifier + " is " + field.type()
                            + ", which this version does not write; write the table's other columns only"));
            select.add("CAST(" + SqlText.identifier(column.name()) + " AS " + type + ") AS " + SqlText.identifier(field.name()));
            ids.add(SqlText.literal(field.name()) + ": " + field.fieldId());
        }
        try {
            Files.createDirectories(file.getParent());
        } catch (IOException e) {
            throw new MallardException(ErrorCode.SYSTEM_IO_FAILED, "cannot create " + file.getParent() + ": " + e.getMessage(), e);
        }
        String sql = "COPY (SELECT " + String.join(", ", select) + " FROM " + batch.name() + ") TO " + SqlText.literal(file.toString())
                + " (FORMAT parquet, FIELD_IDS {" + String.join(", ", ids) + "})";
        try (Statement statement = batch.connection().createStatement()) {
            statement.execute(sql);
            return Files.size(file);
        } catch (SQLException e) {
            deleteQuietly(file);
            throw new MallardException(ErrorCode.USER_ICEBERG_SCHEMA_MISMATCH, "the batch does not fit the iceberg table " + identifier
                    + ": " + e.getMessage(), e);
        } catch (IOException e) {
            throw new MallardException(ErrorCode.SYSTEM_IO_FAILED, "cannot read the size of " + file + ": " + e.getMessage(), e);
        }
    }

    /** The table, loaded once, or created (with its namespace) for these columns. */
    private Table table(List<IcebergColumns.Column> columns) {
        if (table != null) {
            return table;
        }
        JdbcCatalog open = catalog();
        try {
            table = open.loadTable(identifier);
        } catch (NoSuchTableException e) {
            if (!identifier.namespace().isEmpty() && !open.namespaceExists(identifier.namespace())) {
                try {
                    open.createNamespace(identifier.namespace());
                } catch (AlreadyExistsException raced) {
                    LOG.debug("namespace created meanwhile namespace={}", identifier.namespace());
                }
            }
            try {
                table = open.createTable(identifier, IcebergColumns.schemaOf(columns));
                LOG.info("iceberg table created table={} schema={}", identifier, table.schema().asStruct());
            } catch (AlreadyExistsException raced) {
                table = open.loadTable(identifier);
            }
        }
        return table;
    }

    private JdbcCatalog catalog() {
        if (catalog == null) {
            Map<String, String> properties = new HashMap<>();
            properties.put(CatalogProperties.URI, settings.jdbcUrl());
            properties.put(CatalogProperties.WAREHOUSE_LOCATION, settings.warehouse().toUri().toString());
            properties.put(CatalogProperties.FILE_IO_IMPL, LocalFileIO.class.getName());
            settings.user().ifPresent(user -> properties.put(JdbcCatalog.PROPERTY_PREFIX + "user", user));
            settings.password().ifPresent(password -> properties.put(JdbcCatalog.PROPERTY_PREFIX + "password", password));
            JdbcCatalog opened = new JdbcCatalog();
            try {
                opened.initialize(settings.catalogName(), properties);
            } catch (UncheckedSQLException e) {
                throw new MallardException(ErrorCode.SYSTEM_SINK_UNREACHABLE, "cannot open the iceberg catalog " + settings + ": " + causeText(e), e);
            }
            LOG.info("iceberg catalog opened {}", settings);
            catalog = opened;
        }
        return catalog;
    }

    @Override
    public Map<Partition, Long> committedPositions(PipelineIdentity pipeline) {
        try {
            Table target = table == null ? catalog().loadTable(identifier) : table;
            target.refresh();
            Map<Partition, Long> recorded = recordedPositions(target, pipeline);
            if (!recorded.isEmpty()) {
                LOG.debug("iceberg table records the pipeline's positions table={} positions={}", identifier, recorded);
            }
            return recorded;
        } catch (NoSuchTableException e) {
            return Map.of();
        } catch (UncheckedSQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_SINK_UNREACHABLE, "iceberg catalog " + IcebergSettings.redacted(settings.jdbcUrl())
                    + " failed: " + causeText(e), e);
        }
    }

    /**
     * Per partition, the position of the newest snapshot of this pipeline that names it, walking back from the current
     * snapshot: each snapshot records its own batch's partitions only, so members of one consumer group that took
     * partitions from each other never hand back a stale position.
     */
    static Map<Partition, Long> recordedPositions(Table target, PipelineIdentity pipeline) {
        Map<Partition, Long> positions = new HashMap<>();
        for (Snapshot snapshot = target.currentSnapshot(); snapshot != null;
                snapshot = snapshot.parentId() == null ? null : target.snapshot(snapshot.parentId())) {
            Map<String, String> summary = snapshot.summary();
            if (pipeline.name().equals(summary.get(SUMMARY_PIPELINE)) && pipeline.group().equals(summary.get(SUMMARY_GROUP))
                    && summary.containsKey(SUMMARY_POSITIONS)) {
                decode(summary.get(SUMMARY_POSITIONS)).forEach(positions::putIfAbsent);
            }
        }
        return positions;
    }

    private static boolean covers(Map<Partition, Long> recorded, Map<Partition, Long> batch) {
        return batch.entrySet().stream().allMatch(entry -> recorded.getOrDefault(entry.getKey(), Long.MIN_VALUE) >= entry.getValue());
    }

    /** {@code {"topic": {"0": 12, "1": 40}}}: next offsets per partition. */
    static String encode(Map<Partition, Long> positions) {
        ObjectNode root = JSON.createObjectNode();
        positions.entrySet().stream().sorted(Map.Entry.comparingByKey(java.util.Comparator.comparing(Partition::topic)
                .thenComparingInt(Partition::partition)))
                .forEach(entry -> root.with(entry.getKey().topic()).put(Integer.toString(entry.getKey().partition()), entry.getValue()));
        return root.toString();
    }

    static Map<Partition, Long> decode(String text) {
        try {
            Map<Partition, Long> positions = new HashMap<>();
            JsonNode root = JSON.readTree(text);
            root.properties().forEach(topic -> topic.getValue().properties().forEach(partition ->
                    positions.put(new Partition(topic.getKey(), Integer.parseInt(partition.getKey())), partition.getValue().asLong())));
            return positions;
        } catch (JsonProcessingException | NumberFormatException e) {
            throw new MallardException(ErrorCode.SYSTEM_SINK_WRITE_FAILED, "the iceberg snapshot summary's " + SUMMARY_POSITIONS
                    + " cannot be read: " + text, e);
        }
    }

    private static String causeText(Throwable e) {
        Throwable cause = e;
        while (cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
        }
        return IcebergSettings.redacted(String.valueOf(cause.getMessage()));
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            LOG.warn("cannot delete an uncommitted data file file={} error={}", file, e.toString());
        }
    }

    @Override
    public void close() {
        if (catalog != null) {
            catalog.close();
        }
    }
}
