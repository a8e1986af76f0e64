// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink.iceberg;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.jdbc.JdbcCatalog;

/** Reads a table back through Iceberg's own catalog and generic reader, as another Iceberg user would. */
public final class IcebergTables implements AutoCloseable {
    private final JdbcCatalog catalog;

    private IcebergTables(JdbcCatalog catalog) {
        this.catalog = catalog;
    }

    public static IcebergTables open(String catalogName, String jdbcUrl, Path warehouse) {
        Map<String, String> properties = new HashMap<>();
        properties.put(CatalogProperties.URI, jdbcUrl);
        properties.put(CatalogProperties.WAREHOUSE_LOCATION, warehouse.toUri().toString());
        properties.put(CatalogProperties.FILE_IO_IMPL, LocalFileIO.class.getName());
        JdbcCatalog catalog = new JdbcCatalog();
        catalog.initialize(catalogName, properties);
        return new IcebergTables(catalog);
    }

    public Table table(String name) {
        return catalog.loadTable(TableIdentifier.parse(name));
    }

    /** Every record of the table's current snapshot. */
    public List<Record> records(String name) {
        List<Record> records = new ArrayList<>();
        try (CloseableIterable<Record> rows = IcebergGenerics.read(table(name)).build()) {
            rows.forEach(row -> records.add(row.copy()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return records;
    }

    @Override
    public void close() {
        catalog.close();
    }
}
