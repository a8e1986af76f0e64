// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.engine.StorageCompatibility;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlText;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import com.fasterxml.jackson.databind.JsonNode;
import org.duckdb.DuckDBConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Incremental materialized views on one DuckDB database. Each view is a real table of the database, readable
 * by its name from any connection; triggers capture the changes of the tables it reads, and {@link #sync()}
 * moves every view by those changes alone. The catalog and all state live in the database (schema
 * {@code mallard_views}), so attaching to a reopened file restores the views.
 *
 * <p>It works on a connection of its own (a duplicate of the one given), so a sync commits on its own and
 * sees only committed changes. Not thread-safe: one thread uses it at a time.
 */
public final class MaterializedViews implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(MaterializedViews.class);

    /**
     * A view and how it is kept: {@code merged}, its name is a DuckDB view over its state and the pending changes
     * ({@link AggregateProgram#mergedQuery}), else a table: moved by the writer's statement itself when
     * {@code immediate} is present ({@link ImmediateView}, triggers), else by the syncs.
     */
    private record MaintainedView(String name, String sql, DeltaProgram program, ViewTable table, boolean merged,
            Optional<ImmediateView> immediate) {
        MaintainedView(String name, String sql, DeltaProgram program, ViewTable table, boolean merged) {
            this(name, sql, program, table, merged, Optional.empty());
        }
    }

    /** The default of {@link #compactAfter}. */
    public static final long DEFAULT_COMPACT_ROWS = 1_000;
    /** The default of {@link #waitJoinedUnder}. */
    public static final long DEFAULT_WAIT_JOINED_UNDER_ROWS = 100_000;

    private final DuckDBConnection user;
    private final DuckDBConnection connection;
    private final ViewRegistry registry;
    private final DuckDbCatalog catalog;
    private final SqlTree tree;
    private final ViewCompiler compiler;
    private final AttachedCapture attachedCapture;
    private final Map<String, MaintainedView> views = new LinkedHashMap<>();
    private final Map<String, String> broken = new LinkedHashMap<>();
    /** The broken views whose reason says how they come back by themselves (their database attached again), by key. */
    private final Set<String> brokenUntilAttached = new HashSet<>();
    private long generation = -1;
    /**
     * The statements every sync runs with the same text, prepared once: the polls (per set of tracked tables), a merged
     * view's compaction, the fingerprints' updates and the logs' clearing.
     */
    private final StatementCache statements;
    /** The scratch tables the syncs keep for the connection's life (the touched groups of views moved in place). */
    private final ScratchTables scratch;
    /** The delta logs' fingerprints as the running sync's poll read them. */
    private final Map<TableName, Fingerprint> polledDeltas = new HashMap<>();
    /** The catalog's tracked tables, as of {@link #generation}. */
    private Set<TableName> trackedTables = Set.of();
    /** The databases attached when the views were last compiled (lower case): one missing breaks its views. */
    private Set<String> databases = Set.of();
    private boolean attachedTracked;
    private String schema;
    private String database;
    /** The capture triggers of this database the last poll counted, and the catalog generation it counted them at. */
    private long triggersSeen;
    private long triggersSeenAt = -1;
    private long syncs;
    private long deltaSyncs;
    private long capturedRows;
    private long viewRowsChanged;
    private long refreshes;
    private long exactDeltaSyncs;
    private long scanSyncs;
    private long reconcileFailures;
    private String lastReconcileError = "";
    /** Tracked tables whose fingerprint their applied deltas did not explain at the last check, not yet reconciled. */
    private final Set<TableName> provisional = new LinkedHashSet<>();
    /** Views that came back from broken and missed their tables' changes meanwhile, by key: rebuilt by the next reconcile. */
    private final Set<String> restored = new LinkedHashSet<>();
    /** How often a sync checks the fingerprints first; null: only at attach and on {@link #reconcile()}. */
    private Duration reconcileInterval;
    private long lastReconcileNanos = System.nanoTime();
    private long compactAfterRows = DEFAULT_COMPACT_ROWS;
    /** How far one evaluation of a recursive view may run ({@link #recursionLimit}). */
    private final RecursionLimit recursionLimit = new RecursionLimit();
    /** The transactions of this attachment's connection the signal knows open; closing the views ends them. */
    private final Set<Object> openTransactions = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** What a sync may use, and whether it logs per-view timings ({@link #spill}, {@link #parallel}, {@link #timing}). */
    private final SyncSettings syncSettings = new SyncSettings(System.getenv(SyncSettings.TIMING_ENVIRONMENT));
    private long waitJoinedUnderRows = DEFAULT_WAIT_JOINED_UNDER_ROWS;
    /**
     * The rows of the tables that views merged on read join (DuckDB's {@code estimated_size}), as of the last reload,
     * create, or sync that applied changes at least a second after the last reading (the query costs about 1 ms): a
     * join view's pending changes to one table wait only while the others are small.
     */
    private Map<TableName, Long> joinedRows = Map.of();
    private long joinedMeasuredNanos;
    /** Views merged on read whose last compaction kept its change (for {@link #changes}), by key. */
    private final Set<String> changesKept = new HashSet<>();
    /** Whether the running sync keeps the changes of the views merged on read: not for a writer's. */
    private boolean keepMergedChanges = true;
    /** The catalog's signal in this JVM, and its stamp as of the last poll that found the catalog as compiled. */
    private ViewRegistrySignal signal;
    private long polledStamp = -1;
    /** Whether the running transaction changed the catalog (it marked {@link #signal} changing). */
    private boolean catalogChanging;
    private boolean inTransaction;
    /**
     * For a writer's sync without a poll: at most how many rows a tracked table's delta log may hold, by the last poll
     * plus twice the rows the writers said they changed since (an UPDATE logs its old and its new row); negative when
     * not known; and how many syncs skipped their poll in a row.
     */
    private long pendingBound = -1;
    private int unpolledInARow;
    private long unpolledSyncs;

    private MaterializedViews(DuckDBConnection user, DuckDBConnection connection) {
        this.user = user;
        this.connection = connection;
        this.statements = new StatementCache(connection);
        this.scratch = ScratchTables.kept(connection, statements);
        this.registry = new ViewRegistry(connection);
        this.catalog = new DuckDbCatalog(connection);
        this.tree = new SqlTree(connection);
        this.compiler = new ViewCompiler(tree, catalog, recursionLimit);
        this.attachedCapture = new AttachedCapture(connection, catalog, registry);
    }

    /**
     * Views on the database of {@code connection}, restoring those its catalog already holds, after the
     * consistency check (see {@link #reconcile()}).
     */
    public static MaterializedViews attach(DuckDBConnection connection) {
        return attach(connection, true);
    }

    /**
     * Views on the database of {@code connection} without the consistency check: for a further session on a
     * database whose views were attached (and so checked) in this process, which a server opens per client
     * session. The check reads every tracked table, about 0.5 s per 10M rows.
     */
    public static MaterializedViews attachWithoutCheck(DuckDBConnection connection) {
        return attach(connection, false);
    }

    private static MaterializedViews attach(DuckDBConnection connection, boolean check) {
        requireNonNull(connection, "connection is null");
        DuckDBConnection own;
        try {
            own = (DuckDBConnection) connection.duplicate();
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot open a DuckDB session for views: " + e.getMessage(), e);
        }
        MaterializedViews attached = new MaterializedViews(connection, own);
        try {
            attached.restore(check);
        } catch (RuntimeException e) {
            attached.close();
            throw e;
        }
        return attached;
    }

    /** Whether the database of {@code connection} holds a views catalog (views were created on it before). */
    public static boolean catalogExists(Connection connection) {
        return Sql.count(connection, "SELECT count(*) FROM duckdb_schemas() WHERE schema_name = " + SqlText.literal(TableName.VIEWS_SCHEMA)) > 0;
    }

    private void restore(boolean check) {
        ensureCatalog();
        signal = ViewRegistrySignal.of(registry.instance());
        maintaining(() -> {
            reload();
            return null;
        });
        if (check) {
            try {
                reconcile();
            } catch (MallardException e) {
                // Counted, and the tables stay provisional: every sync tries again before it moves a view.
                LOG.warn("reconcile failed at attach tables={} reason=\"{}\" fix=\"make the views' queries run on the tables' rows\"",
                        provisional, e.getMessage());
                return;
            }
        }
        try {
            // Changes captured and never synced (a writer killed, or one with auto-sync off, or a raw connection while
            // no Mallard was attached): applied before anything reads the views.
            sync();
        } catch (MallardException e) {
            LOG.warn("views not synced at attach; the next sync applies the captured changes code={} reason=\"{}\"",
                    e.errorCode().code(), e.getMessage());
        }
        LOG.debug("views attached views={} broken={}", views.size(), broken.size());
    }

    /**
     * Creates the catalog's tables if they are missing. Two connections attaching at once may conflict on those
     * writes (DuckDB refuses the second writer of a catalog entry): the loser tries again, a bounded number of times.
     */
    private void ensureCatalog() {
        for (int attempt = 1; ; attempt++) {
            try {
                registry.ensure();
                return;
            } catch (MallardException e) {
                if (attempt >= ENSURE_ATTEMPTS) {
                    throw e;
                }
                LOG.debug("views catalog setup conflicted, trying again attempt={} reason=\"{}\"", attempt, e.getMessage());
            }
        }
    }

    private static final int ENSURE_ATTEMPTS = 5;

    /** How long maintenance waits for another attachment's in this JVM before it fails with {@code system.view.busy}. */
    static final Duration MAINTENANCE_WAIT = Duration.ofSeconds(120);

    /**
     * Runs maintenance under the database's lock in this JVM ({@link ViewRegistrySignal#maintenance()}), waiting at most
     * {@link #MAINTENANCE_WAIT} for another attachment's maintenance to end. Reentrant: maintenance that calls
     * maintenance (a create's sync) holds it once.
     */
    private <T> T maintaining(java.util.function.Supplier<T> work) {
        ReentrantLock lock = signal.maintenance();
        try {
            if (!lock.tryLock(MAINTENANCE_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new MallardException(ErrorCode.SYSTEM_VIEW_BUSY, "the views of this database were being maintained by "
                        + "another connection for " + MAINTENANCE_WAIT.toSeconds() + " s; try again (the changes stay captured)");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new MallardException(ErrorCode.SYSTEM_VIEW_BUSY, "interrupted while waiting for another connection's "
                    + "view maintenance; try again", e);
        }
        try {
            return work.get();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Runs maintenance only if no other attachment is maintaining the database now, never waiting: for the Java
     * functions DuckDB calls inside a statement ({@link SqlFunctions}), whose DuckDB worker must never wait for a
     * lock, least of all one held by the thread that waits for that statement.
     */
    <T> T maintainingNow(String function, java.util.function.Supplier<T> work) {
        ReentrantLock lock = signal.maintenance();
        if (!lock.tryLock()) {
            throw new MallardException(ErrorCode.SYSTEM_VIEW_BUSY, function + " found the views being maintained by another "
                    + "statement and does not wait inside a query; call it again, or at the top level through the front "
                    + "door (jdbc:mallard:, mallard sql, the server), which runs it before the statement");
        }
        try {
            return work.get();
        } finally {
            lock.unlock();
        }
    }

    /**
     * A transaction of a connection to this database began ({@code setAutoCommit(false)}, or a commit or rollback in
     * manual mode): while it is open, a view created meanwhile cannot see its writes, so its end triggers a check.
     */
    void transactionStarted(Object token) {
        openTransactions.add(token);
        signal.transactionStarted(token);
    }

    void transactionEnded(Object token) {
        openTransactions.remove(token);
        signal.transactionEnded(token);
    }

    /** The parse tree of a text that DuckDB parses as SELECT statements, or null for any other text. */
    JsonNode parseTree(String sql) {
        return tree.parseOrNull(sql);
    }

    /** An expression tree printed back as SQL by DuckDB. */
    String printExpression(JsonNode expression) {
        return tree.print(expression);
    }

    /** The schema the views live in (the current schema of the attached connection). */
    String homeSchema() {
        return schema();
    }

    /** The database the views live in. */
    String homeDatabase() {
        if (database == null) {
            database = catalog.currentDatabase();
        }
        return database;
    }

    /**
     * Whether the tokens of a statement name a view that a sync moves (not one merged on read, which shows every
     * commit by itself), or a broken one: such a read runs a sync first, so it sees what a raw DuckDB writer committed,
     * and a view whose database was attached again behind the views comes back (rebuilt) before it is read.
     */
    boolean readsTableView(List<SqlTokens.Token> tokens) {
        for (SqlTokens.Token token : tokens) {
            if (token.isName()) {
                MaintainedView view = views.get(key(token.value()));
                if (view != null && !view.merged() && view.immediate().isEmpty() || broken.containsKey(key(token.value()))) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Sets how often a sync first checks every tracked table's fingerprint (and reconciles what does not match);
     * {@code null} (the default) checks only at attach, on {@link #reconcile()} and in {@code dbsp_check()}.
     */
    public MaterializedViews reconcileEvery(Duration interval) {
        this.reconcileInterval = interval;
        return this;
    }

    /**
     * Sets how many pending rows a table's delta log may hold, when only views merged on read use them, before
     * {@link #syncAfterWrite} folds them into those views' state. Such a view is current without it; each read of
     * it groups the pending rows, so more rows make writes cheaper and reads dearer. Default {@value #DEFAULT_COMPACT_ROWS}.
     */
    public MaterializedViews compactAfter(long rows) {
        if (rows < 1) {
            throw new IllegalArgumentException("compactAfter must be at least 1 row, got " + rows);
        }
        this.compactAfterRows = rows;
        return this;
    }

    /**
     * Bounds one evaluation of a recursive view (its fill at CREATE, one sync's rounds): at most {@code rounds}
     * semi-naive rounds and {@code time}, after which DuckDB's interrupt stops the running statement. Past either, the
     * CREATE or sync fails with {@code user.view.recursion_unbounded}, naming the view, and changes nothing. Defaults
     * 10,000 rounds and 60 s ({@code dbsp_recursion_limit(rounds, seconds)} in SQL).
     */
    public MaterializedViews recursionLimit(long rounds, Duration time) {
        recursionLimit.set(rounds, time);
        return this;
    }

    /** The recursion limit's rounds and time ({@link #recursionLimit}). */
    public long recursionRounds() {
        return recursionLimit.rounds();
    }

    public Duration recursionTime() {
        return recursionLimit.time();
    }

    /**
     * Bounds the memory a sync may use to {@code bytes} ({@code dbsp_spill}): the sync sets DuckDB's {@code memory_limit}
     * to it while it runs, so its joins, aggregates and sorts spill to DuckDB's {@code temp_directory}, and puts the
     * previous limit back after. 0 leaves DuckDB's own limit. At least 16 MiB.
     */
    public MaterializedViews spill(long bytes) {
        syncSettings.spill(bytes);
        return this;
    }

    public long spillBytes() {
        return syncSettings.spillBytes();
    }

    /**
     * Lets a sync's statements run on {@code threads} DuckDB threads ({@code dbsp_parallel}), set while it runs and
     * put back after; 0 leaves DuckDB's own {@code threads}. A sync stays one transaction on one connection.
     */
    public MaterializedViews parallel(int threads) {
        syncSettings.threads(threads);
        return this;
    }

    public int parallelism() {
        return syncSettings.threads();
    }

    /** Logs each view's sync time at INFO ({@code DBSP_TIMING=1} in the environment turns it on at attach). */
    public MaterializedViews timing(boolean on) {
        syncSettings.timing(on);
        return this;
    }

    public boolean timing() {
        return syncSettings.timing();
    }

    /**
     * The tables a view reads, as the catalog spells them, without the schema for the views' own database and schema
     * (as {@code dbsp_create_view} reports them: {@code Created view: v (sources: orders)}).
     */
    public List<String> sources(String name) {
        MaintainedView view = maintained(name);
        String schema = schema();
        return view.program().tables().stream().distinct()
                .map(t -> t.isHome() && t.schema().equalsIgnoreCase(schema) ? t.table() : t.toString()).toList();
    }

    /** Fails with {@code user.sql.invalid} unless the table is tracked ({@code dbsp_sync('t')} of a table no view reads). */
    public void requireTracked(String table) {
        if (!registry.tracked().contains(trackable(table))) {
            throw new MallardException(ErrorCode.USER_SQL_INVALID, "table " + table + " is not tracked: no view reads it "
                    + "and dbsp_track did not ask for it; SELECT dbsp_track('" + table + "') first");
        }
    }

    /** The number of columns of a table, named as {@link #track} returns it. */
    public long columnCount(String table) {
        return Sql.count(connection, "SELECT count(*) FROM (DESCRIBE SELECT * FROM " + trackable(table).sql() + ")");
    }

    /**
     * Writes the view set to a JSON file ({@code dbsp_save(path)}): every view's name and query in creation order, the
     * tables {@code dbsp_track} asked for, and the settings (recursion limit, spill bound, parallelism). Returns the
     * number of views written.
     */
    public int save(java.nio.file.Path path) {
        requireNonNull(path, "path is null");
        return maintaining(() -> {
            if (registry.generation() != generation) {
                    reload();
                }
            Map<String, Long> created = registry.createdAt();
            List<ViewSetFile.View> list = new ArrayList<>();
            for (ViewRegistry.Entry entry : registry.views()) {
                List<String> sources = views.containsKey(key(entry.name())) ? sources(entry.name()) : List.of();
                list.add(new ViewSetFile.View(entry.name(), entry.sql(), sources, created.getOrDefault(entry.name(), 0L)));
            }
            List<String> tracked = registry.explicitlyTracked().stream().map(TableName::toString).sorted().toList();
            new ViewSetFile(tracked, list, new ViewSetFile.Settings(recursionLimit.rounds(), recursionLimit.time().toSeconds(),
                    syncSettings.spillBytes(), syncSettings.threads())).write(path);
            LOG.info("view set saved path={} views={} tracked_tables={}", path, list.size(), tracked.size());
            return list.size();
        });
    }

    /**
     * Reads a view set written by {@link #save} into this database ({@code dbsp_load(path)}): tracks its tracked
     * tables, applies its settings, and creates its views in the saved order, each filled from this database's
     * tables (so each equals its query here). A view that exists already with the same query is kept; one with another
     * query, or a table or view of that name, fails with {@code user.view.exists}. The first view that fails stops the
     * load with its error; the views created before it stay, so running the load again after the fix finishes it.
     * Returns the number of views the file holds.
     */
    public int load(java.nio.file.Path path) {
        requireNonNull(path, "path is null");
        ViewSetFile file = ViewSetFile.read(path);
        ViewSetFile.Settings settings = file.settings();
        recursionLimit.set(settings.recursionRounds(), Duration.ofSeconds(settings.recursionSeconds()));
        syncSettings.spill(settings.spillBytes());
        syncSettings.threads(settings.parallel());
        for (String table : file.trackedTables()) {
            track(table);
        }
        for (ViewSetFile.View view : file.views()) {
            boolean same = maintaining(() -> {
                if (registry.generation() != generation) {
                    reload();
                }
                MaintainedView existing = views.get(key(view.name()));
                return existing != null && existing.sql().equals(stripSemicolon(view.sql()));
            });
            if (!same) {
                createView(view.name(), view.sql());
            }
        }
        LOG.info("view set loaded path={} views={} tracked_tables={}", path, file.views().size(), file.trackedTables().size());
        return file.views().size();
    }

    /**
     * Sets below how many rows every other table of a join view merged on read must hold for a writer's changes to one
     * of its tables to wait in the delta log like a one-table view's (until {@link #compactAfter}): each read joins the
     * pending rows with those tables whole. Past it, a writer's sync folds the join's changes in at once. Default
     * {@value #DEFAULT_WAIT_JOINED_UNDER_ROWS}; 0 folds every join's changes in at each writer's sync.
     */
    public MaterializedViews waitJoinedUnder(long rows) {
        if (rows < 0) {
            throw new IllegalArgumentException("waitJoinedUnder must be at least 0 rows, got " + rows);
        }
        this.waitJoinedUnderRows = rows;
        return this;
    }

    /**
     * The consistency check and reconcile: compares every tracked table's fingerprint (row count and hash sum)
     * with what its applied and pending deltas explain, creates missing capture triggers again, and rebuilds the
     * views that read a table that does not match by scan-and-diff: each such view's query is computed and its
     * difference from the view table applied as a delta, so the views that read it move too. One transaction.
     * Returns the tables that did not match.
     */
    public List<String> reconcile() {
        return maintaining(() -> reconcileMaintaining());
    }

    private List<String> reconcileMaintaining() {
        Map<TableName, Fingerprint> unexplained = new LinkedHashMap<>();
        try {
            // Outside the transaction: an attached table's triggers are written in its own database.
            Set<TableName> repaired = new HashSet<>();
            for (TableName table : trackedTables) {
                if (catalog.table(table.database(), table.schema(), table.table()).isPresent()
                        && ChangeCapture.repair(connection, table)) {
                    repaired.add(table);
                }
            }
            transaction(() -> {
                if (registry.generation() != generation) {
                    reload();
                }
                repairImmediateTriggers();
                attachedCapture.collect(trackedTables);
                unexplained.putAll(unexplainedTables(repaired));
                restored.retainAll(views.keySet());
                if (!unexplained.isEmpty() || !restored.isEmpty()) {
                    reconcileInTransaction(unexplained);
                }
            });
        } catch (RuntimeException e) {
            reconcileFailures++;
            lastReconcileError = e.getMessage();
            provisional.addAll(unexplained.keySet());
            throw e;
        }
        provisional.clear();
        restored.clear();
        lastReconcileNanos = System.nanoTime();
        return unexplained.keySet().stream().map(TableName::toString).toList();
    }

    /**
     * Creates again the triggers of the views kept in their writers' statements that lost one (dropped behind the
     * views' back), in the running transaction; such a view missed writes, so it is rebuilt like a restored one.
     */
    private void repairImmediateTriggers() {
        Set<String> names = null;
        for (MaintainedView view : views.values()) {
            if (view.immediate().isEmpty()) {
                continue;
            }
            if (names == null) {
                names = ImmediateView.triggerNames(connection);
            }
            if (!view.immediate().get().triggersIn(names)) {
                LOG.warn("triggers of a materialized view dropped behind the views' back; recreating them and rebuilding view={}",
                        view.name());
                dropImmediateTriggers(view.name());
                view.immediate().get().create(connection);
                restored.add(key(view.name()));
            }
        }
    }

    private boolean databasesChanged() {
        return (attachedTracked || !broken.isEmpty()) && !attachedDatabases().equals(databases);
    }

    /**
     * Tracked tables whose rows the deltas do not explain, or whose triggers were missing (now recreated), with
     * their fingerprints as they are in this transaction.
     */
    private Map<TableName, Fingerprint> unexplainedTables(Set<TableName> repaired) {
        Map<TableName, Fingerprint> unexplained = new LinkedHashMap<>();
        for (TableName table : trackedTables) {
            if (catalog.table(table.database(), table.schema(), table.table()).isEmpty()) {
                continue; // Dropped: the views reading it are broken, and its tracking ends when they are dropped.
            }
            Fingerprint actual = Fingerprint.of(connection, table, ChangeCapture.capturedColumns(connection, table));
            Fingerprint pending = Fingerprint.ofDelta(connection, table);
            Optional<Fingerprint> applied = registry.fingerprint(table);
            if (applied.isEmpty()) {
                // A catalog from before fingerprints: the table as it is now is the baseline.
                registry.fingerprint(table, actual.minus(pending));
            } else if (repaired.contains(table) || !applied.get().plus(pending).equals(actual)) {
                LOG.warn("table changed where the capture triggers could not see it table={} triggers_recreated={}",
                        table, repaired.contains(table));
                unexplained.put(table, actual);
            }
        }
        return unexplained;
    }

    /**
     * Moves every other view by its deltas, rebuilds by scan-and-diff the views that read an unexplained table
     * (or are one), moves their readers by the differences, and takes the tables' fingerprints as they are now.
     */
    private void reconcileInTransaction(Map<TableName, Fingerprint> unexplained) {
        Set<String> rebuilt = new HashSet<>();
        for (MaintainedView view : views.values()) {
            boolean reads = view.program().tables().stream().anyMatch(unexplained::containsKey);
            boolean is = unexplained.containsKey(new TableName(catalog.currentSchema(), view.name()));
            if (reads || is || restored.contains(key(view.name()))) {
                rebuilt.add(key(view.name()));
            }
        }
        syncInTransaction(rebuilt);
        for (MaintainedView view : views.values()) {
            if (rebuilt.contains(key(view.name()))) {
                rescan(view);
            }
        }
        syncInTransaction(rebuilt);
        unexplained.forEach((table, checked) -> {
            // A base table did not change in this transaction; a view table was just rebuilt.
            boolean viewTable = table.isHome() && table.schema().equalsIgnoreCase(catalog.currentSchema())
                    && views.containsKey(key(table.table()));
            registry.fingerprint(table, viewTable
                    ? Fingerprint.of(connection, table, ChangeCapture.capturedColumns(connection, table)) : checked);
        });
        LOG.info("views reconciled by scan-and-diff tables={} views={}", unexplained.keySet(), rebuilt);
    }

    /** Computes the view's query and applies its difference from the view table as the view's delta. */
    private void rescan(MaintainedView view) {
        view.table().prepareOutput(connection);
        if (!view.merged()) {
            Sql.update(connection, "INSERT INTO " + ViewTable.OUTPUT + " SELECT *, -1 FROM " + view.table().relation());
        }
        view.program().dropState(connection);
        scratch.forgetAll();
        // A view merged on read shows its new state as soon as it is built: there is no table to move.
        view.program().initialize(connection);
        if (!view.merged()) {
            viewRowsChanged += view.table().apply(connection);
        }
        view.table().dropScratch(connection);
        scanSyncs++;
    }

    /**
     * Registers {@code dbsp_sync()}, {@code dbsp_create_view(name, sql)}, {@code dbsp_drop_view(name)},
     * {@code dbsp_drop_view_cascade(name)}, {@code dbsp_track(table)}, {@code dbsp_untrack(table)} and
     * {@code dbsp_stats()} as DuckDB functions, callable from any connection to this database. DuckDB keeps
     * them for the life of the database instance, so call this once per database.
     */
    public MaterializedViews registerFunctions() {
        SqlFunctions.register(this);
        return this;
    }

    /** The connection the views were attached to, on which the SQL front door runs other statements. */
    public DuckDBConnection connection() {
        return user;
    }

    public void createView(String name, String sql) {
        create(name, sql, false);
    }

    /** Creates the view, replacing a materialized view of the same name if there is one. */
    public void createOrReplaceView(String name, String sql) {
        create(name, sql, true);
    }

    private void create(String name, String sql, boolean replace) {
        maintaining(() -> {
            createMaintaining(name, sql, replace);
            return null;
        });
    }

    private void createMaintaining(String name, String sql, boolean replace) {
        requireNonNull(sql, "sql is null");
        checkName(name);
        String query = stripSemicolon(sql);
        MaintainedView existing = views.get(key(name));
        boolean replacingBroken = replace && broken.containsKey(key(name));
        if (existing == null && !replacingBroken && catalog.relationExists(name) || existing != null && !replace) {
            throw new MallardException(ErrorCode.USER_VIEW_EXISTS, "a table or view named " + name
                    + " already exists; pick another name" + (existing != null ? " or use CREATE OR REPLACE" : ""));
        }
        checkBinds(name, query);
        unmerge(tree.tableNames(query));
        DeltaProgram program = compiler.compile(name, query);
        refuseTriggerless("the materialized view " + name + " reads ", program.tables());
        List<MaintainedView> dependents = existing == null && !replacingBroken ? List.of() : dependents(name);
        List<TableName> opened = attachedCapture.open(program.tables());
        transactionOpening(opened, () -> {
            syncInTransaction();
            for (int i = dependents.size() - 1; i >= 0; i--) {
                dropInTransaction(dependents.get(i).name());
            }
            if (existing != null || replacingBroken) {
                dropInTransaction(name);
            }
            // A replaced view that others read stays a table: they read it through its triggers.
            build(name, query, program, dependents.isEmpty());
            for (MaintainedView dependent : dependents) {
                rebuildDependent(dependent, name);
            }
        });
        signal.watchOpenTransactions();
        LOG.info("materialized view created view={} program={} merged_on_read={} tables={} rebuilt_dependents={}", name,
                program.getClass().getSimpleName(), maintained(name).merged(), program.tables(),
                dependents.stream().map(MaintainedView::name).toList());
    }

    /**
     * Creates, fills and registers a compiled view, inside the caller's transaction; its source tables are tracked
     * first if they are not yet.
     */
    private void build(String name, String query, DeltaProgram program, boolean mergeable) {
        // A view of this name may have had other columns: its scratch tables are made anew.
        scratch.forgetAll();
        Set<TableName> tracked = registry.tracked();
        for (TableName table : new LinkedHashSet<>(program.tables())) {
            if (!tracked.contains(table)) {
                startCapture(table, false);
            }
        }
        Sql.createEmpty(connection, "CREATE TABLE " + SqlText.identifier(name), "SELECT * FROM (" + query + "\n) AS q", "");
        List<String> columns = viewColumns(name);
        for (String column : columns) {
            if (column.equalsIgnoreCase(FilteredJoin.WEIGHT) || column.equalsIgnoreCase("rowid")) {
                throw Refusal.unsupported(name, "an output column named " + column,
                        "alias it (AS ...): the maintainer uses that name for the weight and the row id");
            }
        }
        ViewTable table = new ViewTable(name, columns);
        table.prepareOutput(connection);
        program.initialize(connection);
        MaintainedView view = new MaintainedView(name, query, program, table, mergeable && mergesOnRead(program));
        Optional<ImmediateView> immediate = mergeable && !view.merged() ? immediate(name, program, columns) : Optional.empty();
        if (view.merged()) {
            List<String> types = Sql.strings(connection, "SELECT column_type FROM (DESCRIBE SELECT * FROM " + table.relation() + ")");
            String read = ((AggregateProgram) program).mergedQuery(columns, types);
            Sql.update(connection, "DROP TABLE " + table.relation());
            Sql.update(connection, "CREATE VIEW " + table.relation() + " AS " + read);
        } else {
            table.apply(connection);
        }
        // Runs the delta program once over the empty logs, so SQL it cannot run fails here and not in a sync.
        maintain(view, Set.copyOf(program.tables()));
        table.dropScratch(connection);
        if (immediate.isPresent()) {
            // From this transaction's commit on, the writers' statements move the view themselves.
            immediate.get().create(connection);
            view = new MaintainedView(name, query, program, table, false, immediate);
        }
        checkFilled(name, query);
        registry.add(name, query);
        generation = bump();
        refreshTracked();
        views.put(key(name), view);
        measureJoinedTables();
    }

    /**
     * Whether a view is merged on read: its program can be ({@link AggregateProgram#mergesOnRead}) and it reads no
     * other materialized view (whose changes reach a delta log only when a sync moves it).
     */
    private boolean mergesOnRead(DeltaProgram program) {
        return program instanceof AggregateProgram aggregate && aggregate.mergesOnRead()
                && program.tables().stream().noneMatch(this::isViewTable);
    }

    /** The view as one its writers' statements keep ({@link ImmediateView}), when its program allows it. */
    private Optional<ImmediateView> immediate(String name, DeltaProgram program, List<String> columns) {
        String relation = SqlText.identifier(homeDatabase()) + "." + SqlText.identifier(schema()) + "." + SqlText.identifier(name);
        return ImmediateView.of(name, relation, program, columns, this::isViewTable);
    }

    /** Drops the triggers of a view kept in its writers' statements, found by their names (a broken view's too). */
    private void dropImmediateTriggers(String name) {
        java.util.regex.Pattern own = java.util.regex.Pattern.compile(java.util.regex.Pattern.quote(
                (ImmediateView.TRIGGER_PREFIX + name + "$").toLowerCase(java.util.Locale.ROOT)) + "\\d+\\$\\d+\\$[a-z_]+");
        for (String row : Sql.strings(connection, "SELECT schema_name || chr(0) || table_name || chr(0) || trigger_name FROM "
                + "duckdb_triggers() WHERE database_name = current_database() AND starts_with(trigger_name, "
                + SqlText.literal(ImmediateView.TRIGGER_PREFIX) + ")")) {
            String[] parts = row.split("\u0000", 3);
            if (own.matcher(parts[2].toLowerCase(java.util.Locale.ROOT)).matches()) {
                Sql.update(connection, "DROP TRIGGER IF EXISTS " + SqlText.identifier(parts[2]) + " ON " + SqlText.identifier(parts[0]) + "."
                        + SqlText.identifier(parts[1]));
            }
        }
    }

    private boolean isViewTable(TableName table) {
        return table.isHome() && table.schema().equalsIgnoreCase(catalog.currentSchema()) && views.containsKey(key(table.table()));
    }

    /**
     * Turns the views merged on read named in {@code names} (lower case) into tables, each in a transaction of its
     * own, so a view or {@code dbsp_track} can read them (a DuckDB view has no triggers). A view turned into a table
     * needlessly (a CTE of that name) stays correct.
     */
    private void unmerge(Set<String> names) {
        for (MaintainedView view : List.copyOf(views.values())) {
            if (view.immediate().isPresent() && names.contains(key(view.name()))) {
                transaction(() -> {
                    // The logs' rows are in the view already: cleared first, then the syncs take over from the triggers.
                    syncInTransaction();
                    dropImmediateTriggers(view.name());
                    generation = bump();
                    views.put(key(view.name()), new MaintainedView(view.name(), view.sql(), view.program(), view.table(), false));
                });
                LOG.info("materialized view moved by syncs view={} reason=\"another view or dbsp_track reads it\"", view.name());
            }
            if (view.merged() && names.contains(key(view.name()))) {
                transaction(() -> {
                    syncInTransaction();
                    String read = "SELECT * FROM " + view.table().relation();
                    Sql.update(connection, "CREATE TEMP TABLE mallard_unmerged AS " + read);
                    Sql.update(connection, "DROP VIEW " + view.table().relation());
                    Sql.update(connection, "CREATE TABLE " + view.table().relation() + " AS SELECT * FROM mallard_unmerged");
                    Sql.update(connection, "DROP TABLE mallard_unmerged");
                    generation = bump();
                    views.put(key(view.name()), new MaintainedView(view.name(), view.sql(), view.program(), view.table(), false));
                });
                LOG.info("materialized view turned into a table view={} reason=\"another view or dbsp_track reads it\"", view.name());
            }
        }
    }

    /**
     * Compiles and fills a view that reads a replaced view again, against the replacement (same transaction). A
     * view that no longer binds or compiles fails the whole replace, naming the view.
     */
    private void rebuildDependent(MaintainedView dependent, String replaced) {
        try {
            checkBinds(dependent.name(), dependent.sql());
            build(dependent.name(), dependent.sql(), compiler.compile(dependent.name(), dependent.sql()), true);
        } catch (MallardException e) {
            throw new MallardException(ErrorCode.USER_VIEW_DEPENDED_ON, "materialized view " + replaced
                    + " was not replaced: materialized view " + dependent.name() + " reads it and does not work against "
                    + "the new query (" + e.describe() + "); replace " + dependent.name() + " first with a query that "
                    + "works against both, or drop it", e);
        }
    }

    public void dropView(String name) {
        maintaining(() -> {
            dropViewMaintaining(name);
            return null;
        });
    }

    private void dropViewMaintaining(String name) {
        refuseIfRead(name, "dropped");
        if (broken.containsKey(key(name))) {
            transaction(() -> dropInTransaction(name));
            LOG.info("materialized view dropped view={} broken=true", name);
            return;
        }
        MaintainedView view = maintained(name);
        transaction(() -> dropInTransaction(view.name()));
        LOG.info("materialized view dropped view={}", name);
    }

    /**
     * Drops the view and every view that reads it, directly or through other views, in one transaction; the
     * readers go first (reverse creation order). Returns the dropped views' names in the order dropped.
     */
    public List<String> dropViewCascade(String name) {
        return maintaining(() -> dropViewCascadeMaintaining(name));
    }

    private List<String> dropViewCascadeMaintaining(String name) {
        if (!broken.containsKey(key(name))) {
            maintained(name);
        }
        List<String> order = new ArrayList<>(dependents(name).reversed().stream().map(MaintainedView::name).toList());
        order.add(name);
        transaction(() -> order.forEach(this::dropInTransaction));
        LOG.info("materialized views dropped views={} cascade_from={}", order, name);
        return List.copyOf(order);
    }

    /** Drops the view and its readers if it exists; returns whether it did. */
    public boolean dropViewCascadeIfExists(String name) {
        if (!views.containsKey(key(name)) && !broken.containsKey(key(name))) {
            return false;
        }
        dropViewCascade(name);
        return true;
    }

    /** The views that read {@code name} directly or through other views, in creation order. */
    private List<MaintainedView> dependents(String name) {
        Set<String> read = new HashSet<>(Set.of(key(name)));
        List<MaintainedView> found = new ArrayList<>();
        // Creation order is a dependency order, so one pass finds readers of readers.
        for (MaintainedView view : views.values()) {
            if (!read.contains(key(view.name())) && readsAny(view, read)) {
                read.add(key(view.name()));
                found.add(view);
            }
        }
        return found;
    }

    private boolean readsAny(MaintainedView view, Set<String> names) {
        return view.program().tables().stream().anyMatch(t -> t.isHome() && t.schema().equalsIgnoreCase(catalog.currentSchema())
                && names.contains(key(t.table())));
    }

    /** Drops the view if it exists; returns whether it did. */
    public boolean dropViewIfExists(String name) {
        if (!views.containsKey(key(name)) && !broken.containsKey(key(name))) {
            return false;
        }
        dropView(name);
        return true;
    }

    private void dropInTransaction(String name) {
        dropImmediateTriggers(name);
        new ViewTable(name, List.of()).dropChanges(connection);
        Sql.update(connection, (catalog.isView("", schema(), name) ? "DROP VIEW IF EXISTS " : "DROP TABLE IF EXISTS ") + SqlText.identifier(name));
        AggregateProgram.dropState(connection, name);
        scratch.forgetAll();
        registry.remove(name);
        generation = bump();
        views.remove(key(name));
        broken.remove(key(name));
        brokenUntilAttached.remove(key(name));
        stopUnusedCapture();
    }

    /**
     * Adds the triggers and delta log (for an attached table, whose triggers {@link AttachedCapture#open} added,
     * the delta log), and the table to the catalog with its current fingerprint.
     */
    private void startCapture(TableName table, boolean explicit) {
        List<String> columns = catalog.columns(table);
        if (table.isHome()) {
            ChangeCapture.track(connection, table, columns);
        } else {
            ChangeCapture.stage(connection, table);
        }
        registry.track(table, explicit, Fingerprint.of(connection, table, columns));
    }

    /**
     * Refuses the tables not tracked yet whose database file is in a DuckDB 1.x format ({@code storage_compatibility}
     * v1.x): DuckDB creates triggers only in its 2.0 format, so nothing could capture their writes.
     */
    private void refuseTriggerless(String asking, Collection<TableName> tables) {
        Set<TableName> tracked = registry.tracked();
        for (TableName table : new LinkedHashSet<>(tables)) {
            if (tracked.contains(table)) {
                continue;
            }
            Optional<String> format = catalog.storageVersion(table.database());
            if (format.isPresent() && StorageCompatibility.beforeTwo(format.get())) {
                String file = catalog.path(table.database()).orElse(table.database());
                throw new MallardException(ErrorCode.USER_VIEW_STORAGE_VERSION, asking + table + ", whose database file " + file
                        + " is in DuckDB's " + format.get() + " format (what storage_compatibility v1.x writes, for DuckDB 1.x "
                        + "readers): a materialized view's changes are captured by triggers, which DuckDB creates only in its "
                        + "v2.0.0 format; keep the table in a file created with storage_compatibility latest (the default), or "
                        + "make the query a plain view (CREATE VIEW), which every format keeps and which is computed at each read");
            }
        }
    }

    /** A transaction after {@link AttachedCapture#open}: if it fails, the captures it opened are closed again. */
    private void transactionOpening(List<TableName> opened, Runnable work) {
        try {
            transaction(work);
        } catch (RuntimeException e) {
            try {
                attachedCapture.close(opened);
            } catch (RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
    }

    /** The tracked tables whose databases are attached: the ones the syncs read. */
    private void refreshTracked() {
        Set<TableName> tracked = registry.tracked();
        attachedTracked = tracked.stream().anyMatch(t -> !t.isHome());
        if (attachedTracked) {
            databases = attachedDatabases();
        }
        trackedTables = tracked.stream().filter(t -> t.isHome() || databases.contains(key(t.database())))
                .collect(Collectors.toUnmodifiableSet());
    }

    private Set<String> attachedDatabases() {
        return Set.copyOf(Sql.strings(connection, "SELECT lower(database_name) FROM duckdb_databases()"));
    }

    /** Untracks the tables that no view reads and {@code dbsp_track} did not ask for. */
    private void stopUnusedCapture() {
        Set<TableName> kept = new HashSet<>(registry.explicitlyTracked());
        views.values().forEach(v -> kept.addAll(v.program().tables()));
        for (TableName table : registry.tracked()) {
            if (kept.contains(table)) {
                continue;
            }
            if (table.isHome()) {
                ChangeCapture.untrack(connection, table, catalog.table("", table.schema(), table.table()).isPresent());
            } else {
                attachedCapture.release(table);
            }
            registry.untrack(table);
        }
        refreshTracked();
    }

    /**
     * Starts capturing a base table's changes before any view reads it ({@code dbsp_track}). The table stays
     * tracked, across reopens, until {@link #untrack}, whether views read it or not. Returns the table as the
     * catalog spells it.
     */
    public String track(String table) {
        return maintaining(() -> trackMaintaining(table));
    }

    private String trackMaintaining(String table) {
        requireNonNull(table, "table is null");
        List<SqlTokens.Token> parts = SqlTokens.of(table);
        if (!parts.isEmpty()) {
            unmerge(Set.of(parts.get(parts.size() - 1).value().toLowerCase(Locale.ROOT)));
        }
        TableName name = trackable(table);
        refuseTriggerless("dbsp_track names ", List.of(name));
        List<TableName> opened = attachedCapture.open(List.of(name));
        transactionOpening(opened, () -> {
            syncInTransaction();
            if (registry.tracked().contains(name)) {
                registry.explicit(name, true);
            } else {
                startCapture(name, true);
            }
            generation = bump();
            refreshTracked();
        });
        signal.watchOpenTransactions();
        LOG.info("table tracked table={}", name);
        return name.toString();
    }

    /**
     * Takes back {@link #track}: the table stops being captured when no view reads it (now, or when the last
     * view reading it is dropped). Returns whether the table was tracked explicitly.
     */
    public boolean untrack(String table) {
        return maintaining(() -> untrackMaintaining(table));
    }

    private boolean untrackMaintaining(String table) {
        requireNonNull(table, "table is null");
        Set<TableName> explicit = registry.explicitlyTracked();
        // A table dropped since it was tracked no longer resolves: its entry is found by the name as written.
        Optional<TableName> found = catalog.resolve(table).or(() -> explicit.stream().filter(t -> t.toString().equalsIgnoreCase(table)
                || t.isHome() && t.schema().equalsIgnoreCase(catalog.currentSchema()) && t.table().equalsIgnoreCase(table)).findFirst());
        if (found.isEmpty() || !explicit.contains(found.get())) {
            return false;
        }
        TableName name = found.get();
        transaction(() -> {
            syncInTransaction();
            registry.explicit(name, false);
            stopUnusedCapture();
            generation = bump();
        });
        LOG.info("table untracked table={} still_tracked={}", name, trackedTables.contains(name));
        return true;
    }

    private TableName trackable(String table) {
        requireNonNull(table, "table is null");
        TableName name = catalog.resolve(table).orElseThrow(() -> new MallardException(ErrorCode.USER_SQL_INVALID,
                "no base table " + table + " to track; name an existing table as t, schema.t or database.schema.t "
                        + "(views and temporary tables cannot be tracked)"));
        if (name.schema().equalsIgnoreCase(TableName.VIEWS_SCHEMA)) {
            throw new MallardException(ErrorCode.USER_SQL_INVALID, "the table " + name + " is Mallard's own; track your tables");
        }
        return name;
    }

    /** Recomputes the view from its tables (the safety net for changes the triggers could not see). */
    public void refresh(String name) {
        maintaining(() -> {
            refreshMaintaining(name);
            return null;
        });
    }

    private void refreshMaintaining(String name) {
        MaintainedView view = maintained(name);
        transaction(() -> {
            // The view itself is rebuilt from the tables, so its share of the captured changes is not applied.
            syncInTransaction(Set.of(key(name)));
            // The output table first: a view merged on read cannot be described without its state.
            view.table().prepareOutput(connection);
            if (!view.merged()) {
                Sql.update(connection, "DELETE FROM " + view.table().relation());
            }
            view.program().dropState(connection);
            scratch.forgetAll();
            view.program().initialize(connection);
            if (!view.merged()) {
                view.table().fill(connection);
            }
            view.table().dropScratch(connection);
            checkFilled(view.name(), view.sql());
        });
        refreshes++;
    }

    /**
     * Applies every change captured since the last sync to every view, in one transaction, and clears the
     * delta logs (views merged on read fold their pending changes into their state). Returns how many view rows
     * were deleted plus inserted.
     */
    public long sync() {
        return sync(false, false);
    }

    /**
     * What a writer runs after its commit: as {@link #sync}, except that the changes only views merged on read use
     * stay pending (those views show them already) until a table's log holds {@link #compactAfter} rows, and that
     * folding them in keeps no change for {@link #changes}.
     */
    public long syncAfterWrite() {
        return sync(true, false);
    }

    /**
     * As {@link #syncAfterWrite()}, told how many rows the writer's statements since its last sync inserted, updated or
     * deleted (their update counts). When every view that reads a tracked table is merged on read, no catalog change
     * happened in this JVM since the last poll, and the rows cannot have brought a table's log to {@link #compactAfter},
     * it returns without reading anything: the views show the rows already, and only their compaction waits. At most
     * {@value #MAX_UNPOLLED_IN_A_ROW} syncs in a row skip their poll, which bounds what writes the counts do not
     * show (another connection's, a trigger of the user's) can add before a compaction. Negative: not known, as
     * {@link #syncAfterWrite()}.
     */
    public long syncAfterWrite(long rowsChanged) {
        return maintaining(() -> syncAfterWriteMaintaining(rowsChanged));
    }

    private long syncAfterWriteMaintaining(long rowsChanged) {
        if (rowsChanged >= 0 && mayWaitUnpolled(rowsChanged)) {
            syncs++;
            unpolledSyncs++;
            return 0;
        }
        // So many rows leave work to do: the sync's own poll, in its transaction, is the only one it needs.
        return sync(true, rowsChanged >= compactAfterRows);
    }

    /** How many writer's syncs in a row may skip their poll. */
    static final int MAX_UNPOLLED_IN_A_ROW = 32;

    private boolean mayWaitUnpolled(long rowsChanged) {
        if (pendingBound < 0 || unpolledInARow >= MAX_UNPOLLED_IN_A_ROW || attachedTracked || !broken.isEmpty() || signal.watching()
                || !provisional.isEmpty() || reconcileDue() || !signal.unchangedSince(polledStamp)) {
            return false;
        }
        // The last poll left every log below compactAfter; the told rows, twice, must fit in what is left (no overflow).
        if (rowsChanged > (compactAfterRows - pendingBound) / 2) {
            return false;
        }
        long bound = pendingBound + 2 * rowsChanged;
        if (bound >= compactAfterRows) {
            return false;
        }
        for (TableName table : trackedTables) {
            if (!pendingMayWait(table)) {
                return false;
            }
        }
        pendingBound = bound;
        unpolledInARow++;
        return true;
    }

    private boolean reconcileDue() {
        return reconcileInterval != null && System.nanoTime() - lastReconcileNanos >= reconcileInterval.toNanos();
    }

    private long sync(boolean afterWrite, boolean workExpected) {
        return maintaining(() -> syncMaintaining(afterWrite, workExpected));
    }

    private long syncMaintaining(boolean afterWrite, boolean workExpected) {
        if (signal.checkDue()) {
            // Transactions that were open when a view started capturing its tables have ended: what they wrote
            // before they saw the triggers is found by the fingerprints and applied.
            reconcile();
        }
        keepMergedChanges = !afterWrite;
        try {
            return syncOnce(afterWrite, workExpected);
        } finally {
            keepMergedChanges = true;
        }
    }

    private long syncOnce(boolean afterWrite, boolean workExpected) {
        if (databasesChanged()) {
            // A database was attached or detached: its views break, or come back and are checked.
            reload();
            reconcile();
        } else if (!provisional.isEmpty() || !restored.isEmpty() || reconcileDue()) {
            reconcile();
        }
        if (!attachedTracked && !workExpected && nothingCaptured(afterWrite)) {
            syncs++;
            return 0;
        }
        long[] changed = new long[1];
        long deltaSyncsBefore = deltaSyncs;
        try (SyncSettings.Applied bounds = syncSettings.apply(connection)) {
            transaction(() -> changed[0] = syncInTransaction());
        }
        if (deltaSyncs > deltaSyncsBefore) {
            exactDeltaSyncs++;
        }
        return changed[0];
    }

    private long syncInTransaction() {
        return syncInTransaction(Set.of());
    }

    private long syncInTransaction(Set<String> rebuilt) {
        syncs++;
        List<TableName> tracked = List.copyOf(trackedTables);
        long[] pending = poll(tracked, !attachedTracked);
        if (pending[0] != generation) {
            reload();
            tracked = List.copyOf(trackedTables);
            pending = poll(tracked, !attachedTracked);
        }
        if (attachedTracked) {
            // An attached table's changes wait in its own database's capture log until copied into its delta log.
            attachedCapture.collect(trackedTables);
            pending = poll(tracked, true);
        }
        Set<TableName> changed = new HashSet<>();
        long captured = 0;
        for (int i = 0; i < tracked.size(); i++) {
            if (pending[i + 1] > 0) {
                changed.add(tracked.get(i));
                captured += pending[i + 1];
            }
        }
        if (changed.isEmpty()) {
            return 0;
        }
        long rows = 0;
        String schema = schema();
        // Creation order is a topological order: a view can only read views that existed before it, and a
        // view that others read can be neither dropped nor replaced.
        for (MaintainedView view : views.values()) {
            Set<TableName> touched = new HashSet<>(view.program().tables());
            touched.retainAll(changed);
            if (touched.isEmpty() || rebuilt.contains(key(view.name()))) {
                continue;
            }
            // The scratch tables stay (temporary, this connection's): the next view replaces them.
            long started = System.nanoTime();
            long applied = maintain(view, touched);
            if (syncSettings.timing()) {
                LOG.info("view synced view={} took_ms={} rows_changed={} tables={}", view.name(), String.format(Locale.ROOT,
                        "%.3f", (System.nanoTime() - started) / 1e6), applied, touched);
            }
            rows += applied;
            TableName own = new TableName(schema, view.name());
            if (applied > 0 && trackedTables.contains(own)) {
                // The view's own triggers captured what it just applied; the views that read it take it next.
                changed.add(own);
                polledDeltas.remove(own);
            }
        }
        for (TableName table : changed) {
            ChangeCapture.clear(statements, table, Optional.ofNullable(polledDeltas.get(table)));
        }
        if (System.nanoTime() - joinedMeasuredNanos >= 1_000_000_000L) {
            measureJoinedTables();
        }
        deltaSyncs++;
        capturedRows += captured;
        viewRowsChanged += rows;
        LOG.debug("views synced captured_rows={} view_rows_changed={}", captured, rows);
        return rows;
    }

    /**
     * Moves a view by the deltas of the changed tables: in place when its program can find a changed row by its
     * keys, else through a Z-set of changes that the view table consolidates and applies. Returns the view rows
     * deleted plus inserted (for a view merged on read, which showed the changes when they were committed, the
     * groups they touched).
     */
    private long maintain(MaintainedView view, Set<TableName> changed) {
        if (view.immediate().isPresent()) {
            // The writers' statements moved it: the logs' rows are in it already.
            return 0;
        }
        DeltaProgram program = view.program();
        ViewTable table = view.table();
        if (view.merged()) {
            AggregateProgram aggregate = (AggregateProgram) program;
            if (keepMergedChanges) {
                aggregate.keepChange(connection, scratch, changed);
                changesKept.add(key(view.name()));
            } else if (changesKept.remove(key(view.name()))) {
                aggregate.dropChange(connection);
                scratch.forgetAll();
            }
            return aggregate.compact(statements, changed);
        }
        if (program instanceof AggregateProgram aggregate && aggregate.appliesInPlace()) {
            return aggregate.maintainInPlace(connection, scratch, changed, table);
        }
        table.prepareOutput(connection);
        program.maintain(connection, changed);
        return table.apply(connection);
    }

    /**
     * Whether a sync would find nothing to do: the catalog is as this attachment compiled it and no delta log holds
     * a row (after a write, none but fewer than {@link #compactAfter} rows that only views merged on read use), read
     * outside a transaction. A sync follows the commit of the write it serves, so that write's rows are seen; rows
     * committed later are their own writer's to sync. Never for attached tables, whose rows wait in their own
     * database's capture log until a sync copies them.
     */
    private boolean nothingCaptured(boolean afterWrite) {
        List<TableName> tables = List.copyOf(trackedTables);
        long stamp = signal.stamp();
        long[] pending = poll(tables, false);
        if (pending[0] != generation) {
            return false;
        }
        long triggers = pending[tables.size() + 1];
        if (triggersSeenAt == generation && triggers < triggersSeen) {
            // A capture trigger was dropped behind the views' back: the check recreates it and repairs what escaped it.
            LOG.warn("capture triggers dropped behind the views' back; reconciling triggers={} before={}", triggers, triggersSeen);
            triggersSeenAt = -1;
            reconcile();
            return false;
        }
        triggersSeen = triggers;
        triggersSeenAt = generation;
        // The bound a writer's unpolled syncs start from; a false return is followed by a sync, which clears it.
        polledStamp = stamp;
        pendingBound = 0;
        unpolledInARow = 0;
        for (int i = 1; i <= tables.size(); i++) {
            if (pending[i] != 0 && !(afterWrite && pending[i] < compactAfterRows && pendingMayWait(tables.get(i - 1)))) {
                return false;
            }
            pendingBound = Math.max(pendingBound, pending[i]);
        }
        return true;
    }

    /**
     * Whether the table's pending rows may wait for a later sync: some view reads the table and every view that does
     * is merged on read and either reads that table alone or joins it, mentioned once, with tables of fewer than
     * {@link #waitJoinedUnder} rows (a read joins the pending rows with the other tables' whole rows).
     */
    private boolean pendingMayWait(TableName table) {
        boolean read = false;
        for (MaintainedView view : views.values()) {
            if (view.program().tables().contains(table)) {
                if (view.immediate().isPresent()) {
                    read = true;
                    continue;
                }
                if (!view.merged()) {
                    return false;
                }
                AggregateProgram aggregate = (AggregateProgram) view.program();
                if (!aggregate.readsOneMention() && !(aggregate.mentionsOnce(table) && aggregate.tables().stream()
                        .allMatch(t -> t.equals(table) || joinedRows.getOrDefault(t, Long.MAX_VALUE) < waitJoinedUnderRows))) {
                    return false;
                }
                read = true;
            }
        }
        return read;
    }

    /** Reads the sizes of the tables that views merged on read join ({@link #joinedRows}); none when there are no such views. */
    private void measureJoinedTables() {
        joinedMeasuredNanos = System.nanoTime();
        Set<TableName> joined = new HashSet<>();
        for (MaintainedView view : views.values()) {
            if (view.merged() && !((AggregateProgram) view.program()).readsOneMention()) {
                joined.addAll(view.program().tables());
            }
        }
        if (joined.isEmpty()) {
            joinedRows = Map.of();
            return;
        }
        Map<TableName, Long> rows = new HashMap<>();
        for (String row : Sql.strings(connection, "SELECT schema_name || chr(0) || table_name || chr(0) || estimated_size FROM duckdb_tables() "
                + "WHERE database_name = current_database() AND NOT temporary")) {
            String[] parts = row.split("\u0000", 3);
            TableName table = new TableName(parts[0], parts[1]);
            if (joined.contains(table)) {
                rows.put(table, Long.parseLong(parts[2]));
            }
        }
        joinedRows = Map.copyOf(rows);
    }

    /**
     * The catalog's generation, then each table's count of captured rows not yet applied: one statement, prepared
     * once for the tracked tables, since a sync with nothing to do should cost little more than a round trip. A
     * UNION ALL of numbered rows, which DuckDB runs in about half the time of one row of scalar subqueries. With
     * {@code fingerprints}, also each log's fingerprint (into {@link #polledDeltas}), which a sync adds to its table's
     * when it clears the log: one scan of the logs instead of a statement per table.
     */
    private long[] poll(List<TableName> tables, boolean fingerprints) {
        StringBuilder sql = new StringBuilder("SELECT 0 AS i, n" + (fingerprints ? ", NULL AS f" : "") + " FROM ("
                + ViewRegistry.generationQuery() + ") AS g(n)");
        for (int i = 0; i < tables.size(); i++) {
            sql.append("\nUNION ALL SELECT ").append(i + 1).append(", count(*)")
                    .append(fingerprints ? ", " + Fingerprint.ofDeltaText() : "").append(" FROM ").append(tables.get(i).deltaTable());
        }
        // Last: the capture triggers of this database, so a sync notices one dropped behind its back.
        sql.append("\nUNION ALL SELECT ").append(tables.size() + 1).append(", count(*)").append(fingerprints ? ", NULL" : "")
                .append(" FROM duckdb_triggers() WHERE database_name = current_database() AND (starts_with(trigger_name, "
                        + SqlText.literal(ChangeCapture.TRIGGER_PREFIX) + ") OR starts_with(trigger_name, "
                        + SqlText.literal(ImmediateView.TRIGGER_PREFIX) + "))");
        long[] numbers = new long[tables.size() + 2];
        polledDeltas.clear();
        statements.query(sql.toString(), row -> {
            int i = row.getInt(1);
            numbers[i] = row.getLong(2);
            if (fingerprints && i > 0 && i <= tables.size()) {
                polledDeltas.put(tables.get(i - 1), Fingerprint.parse(row.getString(3)));
            }
        });
        return numbers;
    }

    /** The schema views live in: the current schema of the views' own connection, which nothing else uses. */
    private String schema() {
        if (schema == null) {
            schema = catalog.currentSchema();
        }
        return schema;
    }

    /**
     * The scan-and-diff check: syncs, then counts the rows by which the view and its query differ, as bags, in
     * both directions (0 when the view is right). It costs a full run of the query; run it when changes may
     * have escaped capture, and {@link #refresh} a view it reports.
     */
    public long check(String name) {
        return maintaining(() -> checkMaintaining(name));
    }

    private long checkMaintaining(String name) {
        MaintainedView view = maintained(name);
        long[] differing = new long[1];
        transaction(() -> {
            syncInTransaction();
            String query = "(" + view.sql() + "\n)";
            differing[0] = Sql.count(connection, "SELECT (SELECT count(*) FROM (SELECT * FROM " + view.table().relation()
                    + " EXCEPT ALL SELECT * FROM " + query + " AS q)) + (SELECT count(*) FROM (SELECT * FROM " + query
                    + " AS q EXCEPT ALL SELECT * FROM " + view.table().relation() + "))");
        });
        if (differing[0] > 0) {
            LOG.warn("materialized view differs from its query view={} differing_rows={} fix=\"REFRESH MATERIALIZED VIEW {}\"",
                    name, differing[0], name);
        }
        return differing[0];
    }

    /**
     * The view's last applied change, on the views' own connection: the view's columns and {@code weight}
     * (+k: k copies of the row were inserted, -k: deleted), consolidated; empty when no sync of this
     * attachment has changed the view. A view merged on read takes its pending changes in first (a {@link #sync}),
     * so its last change holds every write since the compaction before; empty when a writer's sync folded changes in
     * since ({@link #syncAfterWrite} keeps no change). Closing the result closes its statement.
     */
    public ResultSet changes(String name) {
        return maintaining(() -> changesMaintaining(name));
    }

    private ResultSet changesMaintaining(String name) {
        if (maintained(name).merged()) {
            sync();
        }
        MaintainedView view = maintained(name);
        try {
            Statement statement = connection.createStatement();
            statement.closeOnCompletion();
            Optional<String> inPlace = view.program() instanceof AggregateProgram aggregate && aggregate.appliesInPlace()
                    ? aggregate.inPlaceChangesQuery(connection, view.table().columns()) : Optional.empty();
            return statement.executeQuery(inPlace.orElseGet(() -> view.table().changesQuery(connection)));
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "reading the changes of " + name + " failed: "
                    + e.getMessage(), e);
        }
    }

    /**
     * Syncs, then reads the view on the attached connection; closing the result closes its statement. The view is looked
     * up after the sync, which may have broken it (its database detached) or brought it back (attached again).
     */
    public ResultSet query(String name) {
        syncAfterWrite();
        MaintainedView view = maintained(name);
        try {
            Statement statement = user.createStatement();
            statement.closeOnCompletion();
            return statement.executeQuery("SELECT * FROM " + view.table().relation());
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "reading materialized view " + name
                    + " failed: " + e.getMessage(), e);
        }
    }

    /** The views' names in creation order. */
    public List<String> names() {
        List<String> names = new ArrayList<>();
        views.values().forEach(v -> names.add(v.name()));
        return names;
    }

    /** The query a view was created with. */
    public String definition(String name) {
        return maintained(name).sql();
    }

    public ViewStats stats() {
        return maintaining(() -> statsMaintaining());
    }

    private ViewStats statsMaintaining() {
        long pending = 0;
        Set<TableName> tracked = registry.tracked();
        for (TableName table : trackedTables) {
            pending += ChangeCapture.pending(connection, table);
        }
        long merged = views.values().stream().filter(MaintainedView::merged).count();
        return new ViewStats(views.size(), merged, broken.size(), tracked.size(), pending, syncs, unpolledSyncs, deltaSyncs,
                capturedRows, viewRowsChanged, refreshes, exactDeltaSyncs, scanSyncs,
                provisional.stream().map(TableName::toString).toList(), reconcileFailures, lastReconcileError);
    }

    @Override
    public void close() {
        // The connection's open transactions roll back with it: none of them can write unseen any more.
        for (Object token : List.copyOf(openTransactions)) {
            transactionEnded(token);
        }
        statements.close();
        try {
            connection.close();
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "closing the views' DuckDB session failed: " + e.getMessage(), e);
        }
    }

    /**
     * A freshly built view holds as many rows as its query returns. The check costs one more run of the
     * query at CREATE and REFRESH; it is there because an engine fault that loses rows would otherwise
     * leave a view that is silently wrong from its first row.
     */
    private void checkFilled(String name, String query) {
        long rows = Sql.count(connection, "SELECT count(*) FROM " + SqlText.identifier(name));
        long expected = Sql.count(connection, "SELECT count(*) FROM (" + query + "\n) AS q");
        if (rows != expected) {
            throw new MallardException(ErrorCode.SYSTEM_INTERNAL, "materialized view " + name + " was built with " + rows
                    + " rows but its query returns " + expected + "; nothing was changed (please report this)");
        }
    }

    private void checkName(String name) {
        requireNonNull(name, "name is null");
        if (!plainIdentifier(name)) {
            throw new MallardException(ErrorCode.USER_SQL_INVALID, "materialized view name " + name
                    + " must be a plain identifier (letters, digits, underscores) in the current schema");
        }
    }

    /** Letters, digits and underscores, not starting with a digit. */
    private static boolean plainIdentifier(String name) {
        if (name.isEmpty() || Character.isDigit(name.charAt(0))) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (!(c == '_' || c < 128 && Character.isLetterOrDigit(c))) {
                return false;
            }
        }
        return true;
    }

    private void checkBinds(String name, String query) {
        try (Statement statement = connection.createStatement()) {
            statement.execute("DESCRIBE " + query);
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.USER_SQL_INVALID, "materialized view " + name + ": the query does not run: "
                    + e.getMessage(), e);
        }
    }

    private List<String> viewColumns(String name) {
        return Sql.strings(connection, "SELECT column_name FROM duckdb_columns() WHERE database_name = current_database() "
                + "AND schema_name = current_schema() AND lower(table_name) = lower(?) ORDER BY column_index", name);
    }

    private void transaction(Runnable work) {
        Sql.update(connection, "BEGIN TRANSACTION");
        inTransaction = true;
        // What the transaction leaves in the delta logs is known at the next poll.
        pendingBound = -1;
        try {
            work.run();
            Sql.update(connection, "COMMIT");
        } catch (RuntimeException e) {
            attachedCapture.rolledBack();
            try (Statement statement = connection.createStatement()) {
                statement.execute("ROLLBACK");
            } catch (SQLException rollback) {
                e.addSuppressed(rollback);
            }
            settleCatalog();
            reload();
            throw e;
        } finally {
            inTransaction = false;
        }
        settleCatalog();
        attachedCapture.committed(trackedTables);
    }

    /**
     * Changes the catalog's generation (in the running transaction, if any), so other attachments compile the views
     * again; marks this JVM's signal changing until the transaction ends.
     */
    private long bump() {
        if (!catalogChanging) {
            signal.changing();
            catalogChanging = true;
        }
        try {
            return registry.bump();
        } finally {
            if (!inTransaction) {
                settleCatalog();
            }
        }
    }

    private void settleCatalog() {
        if (catalogChanging) {
            catalogChanging = false;
            signal.changed();
        }
    }

    /**
     * Compiles the catalog's views again (on attach, and after a rollback, when the in-memory map may be ahead
     * of the catalog). A view whose tables were dropped or changed shape since is kept aside as broken.
     */
    private void reload() {
        // After a rollback the scratch tables its transaction created are gone.
        scratch.forgetAll();
        Set<String> wasBroken = Set.copyOf(broken.keySet());
        views.clear();
        broken.clear();
        brokenUntilAttached.clear();
        pendingBound = -1;
        generation = registry.generation();
        databases = attachedDatabases();
        refreshTracked();
        Set<String> immediateTriggers = ImmediateView.triggerNames(connection);
        for (ViewRegistry.Entry entry : registry.views()) {
            try {
                DeltaProgram program = compiler.compile(entry.name(), entry.sql(), entry.layout());
                List<String> columns = viewColumns(entry.name());
                if (columns.size() != program.outputs().size()) {
                    throw new MallardException(ErrorCode.USER_VIEW_BROKEN, "materialized view " + entry.name() + " has "
                            + columns.size() + " columns but its query now gives " + program.outputs().size()
                            + " (a table it reads changed)");
                }
                boolean merged = catalog.isView("", schema(), entry.name());
                if (merged && !(program instanceof AggregateProgram aggregate && aggregate.mergesOnRead())) {
                    throw new MallardException(ErrorCode.USER_VIEW_BROKEN, "materialized view " + entry.name()
                            + " is kept as a view over its state, which its query no longer allows");
                }
                // Kept in its writers' statements when it has such triggers (a view built before they existed has none, and
                // stays moved by the syncs); one of them missing is created again by the consistency check.
                Optional<ImmediateView> immediate = merged || readByAnotherView(entry.name()) ? Optional.empty()
                        : immediate(entry.name(), program, columns).filter(v -> v.anyTriggerIn(immediateTriggers));
                views.put(key(entry.name()), new MaintainedView(entry.name(), entry.sql(), program,
                        new ViewTable(entry.name(), columns), merged, immediate));
            } catch (MallardException e) {
                broken.put(key(entry.name()), e.getMessage());
                if (e instanceof ViewCompiler.DetachedDatabase) {
                    // The reason says what brings it back: ATTACH the database again.
                    brokenUntilAttached.add(key(entry.name()));
                    LOG.warn("materialized view cannot be maintained view={} reason=\"{}\"", entry.name(), e.getMessage());
                } else {
                    LOG.warn("materialized view cannot be maintained view={} reason=\"{}\" fix=\"DROP MATERIALIZED VIEW {} and create it again\"",
                            entry.name(), e.getMessage(), entry.name());
                }
            }
        }
        for (String name : wasBroken) {
            if (views.containsKey(name)) {
                // Back (its database attached again, its table there again): the changes of its tables while it was
                // broken were applied to the other views and cleared, so the next reconcile rebuilds it.
                restored.add(name);
            }
        }
        measureJoinedTables();
    }

    /** Whether a view in the catalog reads the view (or it is tracked for another reader), read from the catalog. */
    private boolean readByAnotherView(String name) {
        if (trackedTables.contains(new TableName(schema(), name))) {
            return true;
        }
        for (ViewRegistry.Entry entry : registry.views()) {
            if (!entry.name().equalsIgnoreCase(name) && tree.tableNames(entry.sql()).contains(key(name))) {
                return true;
            }
        }
        return false;
    }

    /** Refuses to drop or replace a view that other views read (see {@link #dropViewCascade}). */
    private void refuseIfRead(String name, String verb) {
        List<String> readers = new ArrayList<>();
        for (MaintainedView view : views.values()) {
            if (readsAny(view, Set.of(key(name))) && !view.name().equalsIgnoreCase(name)) {
                readers.add(view.name());
            }
        }
        if (!readers.isEmpty()) {
            throw new MallardException(ErrorCode.USER_VIEW_DEPENDED_ON, "materialized view " + name + " cannot be " + verb
                    + " while " + String.join(", ", readers) + " read it; drop " + String.join(", ", readers)
                    + " first, or drop them all with DROP MATERIALIZED VIEW " + name + " CASCADE");
        }
    }

    /** Views that can no longer be maintained, with the reason; drop and create them again. */
    public Map<String, String> broken() {
        return Map.copyOf(broken);
    }

    private MaintainedView maintained(String name) {
        MaintainedView view = views.get(key(name));
        if (view != null) {
            return view;
        }
        if (broken.containsKey(key(name))) {
            throw new MallardException(ErrorCode.USER_VIEW_BROKEN, broken.get(key(name))
                    + (brokenUntilAttached.contains(key(name)) ? "" : "; DROP MATERIALIZED VIEW " + name + " and create it again"));
        }
        throw new MallardException(ErrorCode.USER_VIEW_NOT_FOUND, "no materialized view named " + name
                + "; list them with SELECT name FROM mallard_views.views");
    }

    private static String key(String name) {
        return name.toLowerCase(Locale.ROOT);
    }

    private static String stripSemicolon(String sql) {
        String trimmed = sql.strip();
        while (trimmed.endsWith(";")) {
            trimmed = trimmed.substring(0, trimmed.length() - 1).strip();
        }
        return trimmed;
    }
}
