// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The attached databases' side of change capture. A DuckDB transaction writes into one database only, so the
 * steps that write into an attached database run in transactions of their own around the views' transaction:
 * triggers and capture log are added before it ({@link #open}), and after it commits the capture-log rows it
 * took are deleted and the triggers of the tables it untracked removed ({@link #committed}).
 */
final class AttachedCapture {
    private final Connection connection;
    private final DuckDbCatalog catalog;
    private final ViewRegistry registry;
    /** Attached tables whose capture-log rows the current transaction took: deleted there after it commits. */
    private final Set<TableName> collected = new HashSet<>();
    /** Attached tables the current transaction untracked: their triggers go after it commits. */
    private final Set<TableName> released = new HashSet<>();

    AttachedCapture(Connection connection, DuckDbCatalog catalog, ViewRegistry registry) {
        this.connection = connection;
        this.catalog = catalog;
        this.registry = registry;
    }

    /**
     * Adds the triggers and capture log of each attached table not tracked yet, before the views' transaction
     * tracks it. Refuses a database attached read-only or under another name than its file's: the triggers
     * name the database, and a file opened on its own is named after itself.
     */
    List<TableName> open(Collection<TableName> tables) {
        Set<TableName> tracked = registry.tracked();
        List<TableName> opened = new ArrayList<>();
        for (TableName table : new LinkedHashSet<>(tables)) {
            if (table.isHome() || tracked.contains(table)) {
                continue;
            }
            try {
                refuseUncapturable(table);
                opened.add(table);
                ChangeCapture.track(connection, table, catalog.columns(table));
            } catch (RuntimeException e) {
                close(opened);
                throw e;
            }
        }
        return opened;
    }

    private void refuseUncapturable(TableName table) {
        if (catalog.readOnly(table.database())) {
            throw new MallardException(ErrorCode.USER_VIEW_UNSUPPORTED, "the table " + table + " is in a database "
                    + "attached read-only, where its changes cannot be captured; ATTACH it without READ_ONLY");
        }
        Optional<String> file = catalog.path(table.database());
        String stem = file.map(f -> Path.of(f).getFileName().toString().replaceFirst("\\.[^.]*$", "")).orElse(table.database());
        if (!stem.equalsIgnoreCase(table.database())) {
            throw new MallardException(ErrorCode.USER_VIEW_UNSUPPORTED, "the table " + table + " is in a database "
                    + "attached as " + table.database() + " from " + file.orElseThrow() + "; attach it under its file's "
                    + "name (ATTACH '" + file.orElseThrow() + "' AS " + stem + "): the capture triggers stored in that "
                    + "file name the database, and that is its name when the file is opened on its own");
        }
    }

    /** Removes the triggers and capture logs of the tables that are not tracked (after all). */
    void close(Collection<TableName> tables) {
        if (tables.isEmpty()) {
            return; // After every sync: reading the tracked set would cost a statement.
        }
        Set<TableName> tracked = registry.tracked();
        for (TableName table : tables) {
            if (!tracked.contains(table)) {
                ChangeCapture.untrack(connection, table, catalog.table(table.database(), table.schema(), table.table()).isPresent());
            }
        }
    }

    /** In the views' transaction (start of a sync): copies the new capture-log rows into the delta logs. */
    void collect(Set<TableName> tracked) {
        for (TableName table : tracked) {
            if (!table.isHome()) {
                ChangeCapture.collect(connection, table);
                collected.add(table);
            }
        }
    }

    /** In the views' transaction: the table is untracked; its triggers go when the transaction commits. */
    void release(TableName table) {
        ChangeCapture.unstage(connection, table);
        released.add(table);
    }

    /** After the views' transaction committed: deletes the rows it took, removes what it untracked. Safe to repeat. */
    void committed(Set<TableName> tracked) {
        List<TableName> taken = List.copyOf(collected);
        List<TableName> gone = List.copyOf(released);
        rolledBack();
        for (TableName table : taken) {
            if (tracked.contains(table)) {
                ChangeCapture.collectGarbage(connection, table);
            }
        }
        close(gone);
    }

    void rolledBack() {
        collected.clear();
        released.clear();
    }
}
