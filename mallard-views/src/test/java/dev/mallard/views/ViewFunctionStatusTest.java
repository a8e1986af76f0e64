// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.duckdb.DuckDBConnection;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Every dbsp_* function's status string, in its scalar and its table spelling, as docs/views.md's table lists them. */
class ViewFunctionStatusTest {
    private DuckDBConnection connection;
    private MaterializedViews views;
    private ViewSql sql;

    @BeforeEach
    void open() {
        connection = DuckDb.open("jdbc:duckdb:");
        views = MaterializedViews.attach(connection);
        sql = new ViewSql(views);
        run("CREATE TABLE orders (id INTEGER, customer VARCHAR, amount DECIMAL(10,2))");
        run("INSERT INTO orders VALUES (1, 'Alice', 10), (2, 'Bob', 20)");
    }

    @AfterEach
    void close() throws Exception {
        views.close();
        connection.close();
    }

    private List<String> run(String statement) {
        try (ViewSql.Result result = sql.execute(statement)) {
            List<String> out = new ArrayList<>();
            if (result.rows().isPresent()) {
                ResultSet rows = result.rows().get();
                int columns = rows.getMetaData().getColumnCount();
                while (rows.next()) {
                    List<String> row = new ArrayList<>();
                    for (int i = 1; i <= columns; i++) {
                        row.add(rows.getString(i));
                    }
                    out.add(String.join("|", row));
                }
            }
            return out;
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
    }

    private String column(String statement) {
        try (ViewSql.Result result = sql.execute(statement)) {
            ResultSetMetaData meta = result.rows().orElseThrow().getMetaData();
            return meta.getColumnName(1);
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void createTrackSyncAndDropAnswerTheSeedsStatusStringsInBothSpellings() {
        assertThat(run("SELECT * FROM dbsp_track('orders')")).containsExactly("Tracking table: orders (3 columns)");
        assertThat(run("SELECT dbsp_track('orders')")).containsExactly("Tracking table: orders (3 columns)");
        assertThat(run("SELECT * FROM dbsp_create_view('totals', 'SELECT customer, sum(amount) AS s FROM orders GROUP BY customer')"))
                .containsExactly("Created view: totals (sources: orders)");
        assertThat(column("SELECT * FROM dbsp_sync()")).isEqualTo("result");
        assertThat(run("SELECT dbsp_create_view('big', 'SELECT * FROM totals WHERE s > 15')"))
                .containsExactly("Created view: big (sources: totals)");
        assertThat(run("SELECT dbsp_create_view('bigger', 'SELECT * FROM big WHERE s > 16')"))
                .containsExactly("Created view: bigger (sources: big)");
        run("INSERT INTO orders VALUES (3, 'Alice', 30)");
        assertThat(run("SELECT * FROM dbsp_sync()")).containsExactly("Synced all tracked tables");
        assertThat(run("SELECT * FROM dbsp_sync('orders')")).containsExactly("Synced: orders");
        assertThat(run("SELECT dbsp_sync('orders')")).containsExactly("Synced: orders");
        // The scalar spelling without a table is Mallard's: the view rows the sync deleted plus inserted.
        assertThat(run("SELECT dbsp_sync()")).containsExactly("0");
        assertThat(run("SELECT dbsp_drop_cascade('totals')")).containsExactly("Dropped totals (and 2 dependent views)");
        run("SELECT dbsp_create_view('one', 'SELECT id FROM orders')");
        assertThat(run("SELECT * FROM dbsp_drop_cascade('one')")).containsExactly("Dropped one");
        run("SELECT dbsp_create_view('two', 'SELECT id FROM orders')");
        assertThat(run("SELECT dbsp_drop('two')")).containsExactly("Dropped");
        run("SELECT dbsp_create_view('three', 'SELECT id FROM orders')");
        assertThat(run("SELECT * FROM dbsp_drop_view('three')")).containsExactly("Dropped");
        assertThat(run("SELECT dbsp_untrack('orders')")).containsExactly("true");
        assertThat(views.names()).isEmpty();
    }

    @Test
    void aSyncOfATableNothingTracksIsRefusedNamingDbspTrack() {
        assertThatThrownBy(() -> run("SELECT * FROM dbsp_sync('orders')")).isInstanceOfSatisfying(MallardException.class, e -> {
            assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_SQL_INVALID);
            assertThat(e.getMessage()).contains("dbsp_track('orders')");
        });
    }

    @Test
    void theSettingsAnswerWhatTheySetAndWhatTheyAre() {
        assertThat(run("SELECT * FROM dbsp_auto_sync()")).containsExactly("Auto-sync is ENABLED");
        assertThat(run("SELECT * FROM dbsp_auto_sync(false)")).containsExactly("Auto-sync DISABLED: use dbsp_sync() for manual updates");
        assertThat(run("SELECT dbsp_auto_sync(true)")).containsExactly("Auto-sync ENABLED: views will update on transaction commit");
        assertThat(run("SELECT * FROM dbsp_autopersist()")).containsExactly("Auto-persist is ENABLED");
        assertThat(run("SELECT * FROM dbsp_autopersist(false)").get(0)).startsWith("Auto-persist DISABLED: views still persist");
        assertThat(run("SELECT * FROM dbsp_autopersist()")).containsExactly("Auto-persist is DISABLED");
        assertThat(run("SELECT * FROM dbsp_autopersist(true)")).containsExactly("Auto-persist ENABLED: views survive a clean connection reopen");
        assertThat(run("SELECT * FROM dbsp_spill()")).containsExactly("Sync spill is DISABLED");
        assertThat(run("SELECT * FROM dbsp_spill('64MiB')"))
                .containsExactly("Sync spill ENABLED: a sync uses at most 67108864 bytes of memory and spills to DuckDB's temp_directory");
        assertThat(run("SELECT * FROM dbsp_spill(true)")).containsExactly("Sync spill ENABLED: a sync uses at most 268435456 bytes "
                + "of memory and spills to DuckDB's temp_directory");
        assertThat(run("SELECT dbsp_spill(100000000)")).hasSize(1);
        assertThat(run("SELECT dbsp_spill()")).containsExactly("Sync spill is ENABLED (100000000 bytes)");
        assertThat(run("SELECT dbsp_spill(false)")).containsExactly("Sync spill DISABLED: a sync uses DuckDB's own memory_limit");
        assertThat(run("SELECT * FROM dbsp_parallel(2)")).containsExactly("Parallel mode ENABLED: a sync's statements run on 2 DuckDB threads");
        assertThat(run("SELECT * FROM dbsp_parallel()")).containsExactly("Parallel mode is ENABLED (2 threads)");
        assertThat(run("SELECT * FROM dbsp_parallel(false)"))
                .containsExactly("Parallel mode DISABLED: a sync's statements use DuckDB's own threads setting");
        assertThat(run("SELECT * FROM dbsp_timing(true)"))
                .containsExactly("Timing ENABLED: each view's sync time is logged at INFO (view synced view=... took_ms=...)");
        assertThat(run("SELECT dbsp_timing()")).containsExactly("Timing is ENABLED");
        assertThat(run("SELECT dbsp_timing(false)")).containsExactly("Timing DISABLED");
        assertThat(run("SELECT * FROM dbsp_recursion_limit()")).containsExactly("Recursion limit: 10000 rounds, 60 s");
        assertThat(run("SELECT * FROM dbsp_recursion_limit(500, 5)")).containsExactly("Recursion limit: 500 rounds, 5 s");
        assertThat(views.recursionRounds()).isEqualTo(500);
        assertThat(run("SELECT * FROM dbsp_save()")).containsExactly("Saved views to mallard_views.views (0 views; they are saved at every commit)");
        assertThat(run("SELECT * FROM dbsp_load()")).containsExactly("Loaded views from mallard_views.views (0 views)");
    }

    @Test
    void badSettingArgumentsAreRefusedWithACodedError() {
        for (String call : List.of("SELECT dbsp_spill('lots')", "SELECT dbsp_spill(1000)", "SELECT dbsp_parallel('many')",
                "SELECT dbsp_auto_sync('maybe')", "SELECT dbsp_recursion_limit(5)", "SELECT dbsp_save('/tmp/views.json')",
                "SELECT dbsp_load('../views.json')", "SELECT dbsp_load('views.json', 'xml')")) {
            assertThatThrownBy(() -> run(call)).as(call).isInstanceOfSatisfying(MallardException.class,
                    e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_SQL_INVALID));
        }
    }

    @Test
    void saveWritesTheViewSetAndLoadBuildsItInAnotherDatabaseEqualToItsQueries() throws Exception {
        Path file = Path.of("target", "view-sets", UUID.randomUUID() + ".json");
        run("CREATE TABLE products (id INTEGER, name VARCHAR)");
        run("INSERT INTO products VALUES (1, 'Widget')");
        run("SELECT dbsp_track('products')");
        run("SELECT dbsp_recursion_limit(777, 9)");
        run("SELECT dbsp_create_view('totals', 'SELECT customer, sum(amount) AS s FROM orders GROUP BY customer')");
        run("CREATE MATERIALIZED VIEW big AS SELECT customer FROM totals WHERE s > 15");
        assertThat(run("SELECT * FROM dbsp_save('" + file + "')")).containsExactly("Saved to file: " + file + " (2 views)");
        assertThat(Files.readString(file)).contains("\"tracked_tables\"", "\"main.products\"", "\"sources\" : [ \"orders\" ]");

        try (DuckDBConnection other = DuckDb.open("jdbc:duckdb:"); MaterializedViews target = MaterializedViews.attach(other)) {
            ViewSql otherSql = new ViewSql(target);
            DuckDb.run(other, "CREATE TABLE orders (id INTEGER, customer VARCHAR, amount DECIMAL(10,2))",
                    "CREATE TABLE products (id INTEGER, name VARCHAR)", "INSERT INTO orders VALUES (7, 'Carol', 70), (8, 'Dan', 1)");
            try (ViewSql.Result result = otherSql.execute("SELECT * FROM dbsp_load('" + file + "', 'json')")) {
                ResultSet rows = result.rows().orElseThrow();
                assertThat(rows.next()).isTrue();
                assertThat(rows.getString(1)).isEqualTo("Loaded from file: " + file + " (2 views)");
            }
            assertThat(target.names()).containsExactly("totals", "big");
            assertThat(target.recursionRounds()).isEqualTo(777);
            // orders, products (dbsp_track), and totals (big reads it).
            assertThat(target.stats().trackedTables()).isEqualTo(3);
            assertThat(DuckDb.difference(other, "totals", target.definition("totals"))).isZero();
            assertThat(DuckDb.rows(other, "SELECT * FROM big")).containsExactly("Carol");
            DuckDb.run(other, "INSERT INTO orders VALUES (9, 'Dan', 100)");
            target.sync();
            assertThat(DuckDb.rows(other, "SELECT * FROM big ORDER BY 1")).containsExactly("Carol", "Dan");
            // Loading again keeps the identical views.
            assertThat(target.load(file)).isEqualTo(2);
            assertThat(target.names()).containsExactly("totals", "big");
        }
    }

    @Test
    void aLoadOverAViewOfTheSameNameButAnotherQueryIsRefused() {
        Path file = Path.of("target", "view-sets", UUID.randomUUID() + ".json");
        run("CREATE MATERIALIZED VIEW v AS SELECT id FROM orders");
        views.save(file);
        views.dropView("v");
        run("CREATE MATERIALIZED VIEW v AS SELECT customer FROM orders");
        assertThatThrownBy(() -> views.load(file)).isInstanceOfSatisfying(MallardException.class,
                e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_VIEW_EXISTS));
    }

    @Test
    void aFileThatIsNotAViewSetIsRefusedNamingIt() throws Exception {
        Path file = Path.of("target", "view-sets", UUID.randomUUID() + ".json");
        Files.createDirectories(file.getParent());
        Files.writeString(file, "{\"tables\": []}");
        assertThatThrownBy(() -> views.load(file)).isInstanceOfSatisfying(MallardException.class, e -> {
            assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_VIEW_FILE_INVALID);
            assertThat(e.getMessage()).contains(file.toString());
        });
    }
}
