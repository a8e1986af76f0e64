// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.nio.file.Path;
import org.duckdb.DuckDBConnection;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The catalog side of the views: replace with dependents, explicit tracking. */
class ViewCatalogTest {
    private static final String TOTALS = "SELECT city, sum(amount) AS total, count(*) AS n FROM orders GROUP BY city";
    private static final String BIG = "SELECT city, total FROM totals WHERE total > 5";
    private static final String BIG_COUNT = "SELECT count(*) AS cities FROM big";

    @TempDir
    Path dir;
    private DuckDBConnection connection;
    private MaterializedViews views;

    @BeforeEach
    void open() {
        connection = DuckDb.open("jdbc:duckdb:" + dir.resolve("shop.duckdb"));
        DuckDb.run(connection, "CREATE TABLE orders (id INTEGER, city VARCHAR, amount INTEGER)",
                "INSERT INTO orders VALUES (1, 'Oslo', 4), (2, 'Oslo', 3), (3, 'Rome', 9), (4, 'Bari', 1)");
        views = MaterializedViews.attach(connection);
    }

    @AfterEach
    void close() throws Exception {
        views.close();
        connection.close();
    }

    @Test
    void replacingAViewOthersReadRebuildsThemAgainstTheNewQuery() {
        views.createView("totals", TOTALS);
        views.createView("big", BIG);
        views.createView("big_count", BIG_COUNT);
        assertThat(DuckDb.rows(connection, "SELECT * FROM big_count")).containsExactly("2");

        String doubled = "SELECT city, 2 * sum(amount) AS total FROM orders GROUP BY city";
        views.createOrReplaceView("totals", doubled);

        assertThat(views.names()).containsExactly("totals", "big", "big_count");
        assertThat(DuckDb.difference(connection, "totals", doubled)).isZero();
        assertThat(DuckDb.difference(connection, "big", BIG)).isZero();
        assertThat(DuckDb.rows(connection, "SELECT * FROM big_count")).containsExactly("2");
        DuckDb.run(connection, "INSERT INTO orders VALUES (5, 'Bari', 2)", "DELETE FROM orders WHERE id = 3");
        views.sync();
        assertThat(DuckDb.rows(connection, "SELECT * FROM big")).containsExactly("Bari|6", "Oslo|14");
        assertThat(DuckDb.rows(connection, "SELECT * FROM big_count")).containsExactly("2");
    }

    @Test
    void aReplaceThatADependentCannotReadFailsNamingItAndChangesNothing() {
        views.createView("totals", TOTALS);
        views.createView("big", BIG);
        views.createView("big_count", BIG_COUNT);

        assertThatThrownBy(() -> views.createOrReplaceView("totals", "SELECT city, count(*) AS n FROM orders GROUP BY city"))
                .isInstanceOfSatisfying(MallardException.class, e -> {
                    assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_VIEW_DEPENDED_ON);
                    assertThat(e.getMessage()).contains("materialized view big reads it", "total");
                });

        assertThat(views.names()).containsExactly("totals", "big", "big_count");
        assertThat(views.definition("totals")).isEqualTo(TOTALS);
        assertThat(DuckDb.rows(connection, "SELECT count(*) FROM mallard_views.views")).containsExactly("3");
        DuckDb.run(connection, "INSERT INTO orders VALUES (5, 'Bari', 20)");
        views.sync();
        assertThat(DuckDb.difference(connection, "totals", TOTALS)).isZero();
        assertThat(DuckDb.difference(connection, "big", "SELECT city, total FROM (" + TOTALS + ") WHERE total > 5")).isZero();
        assertThat(DuckDb.rows(connection, "SELECT * FROM big_count")).containsExactly("3");
    }

    @Test
    void replacingABrokenViewRebuildsTheViewsThatReadIt() throws Exception {
        DuckDb.run(connection, "CREATE TABLE gone (city VARCHAR, total INTEGER)", "INSERT INTO gone VALUES ('Oslo', 50)");
        views.createView("totals", "SELECT city, total FROM gone");
        views.createView("big", BIG);
        views.close();
        connection.close();
        connection = DuckDb.open("jdbc:duckdb:" + dir.resolve("shop.duckdb"));
        DuckDb.run(connection, "DROP TABLE gone");
        views = MaterializedViews.attach(connection);
        assertThat(views.broken()).containsOnlyKeys("totals");

        views.createOrReplaceView("totals", TOTALS);

        assertThat(views.names()).containsExactly("totals", "big");
        assertThat(DuckDb.rows(connection, "SELECT * FROM big")).containsExactly("Oslo|7", "Rome|9");
        DuckDb.run(connection, "INSERT INTO orders VALUES (5, 'Bari', 10)");
        views.sync();
        assertThat(DuckDb.rows(connection, "SELECT * FROM big")).containsExactly("Bari|11", "Oslo|7", "Rome|9");
    }

    @Test
    void aTrackedTableIsCapturedBeforeAnyViewAndStaysTrackedUntilUntracked() {
        assertThat(views.track("main.orders")).isEqualTo("main.orders");
        assertThat(triggers()).isEqualTo(3);
        DuckDb.run(connection, "INSERT INTO orders VALUES (5, 'Bari', 2)");
        assertThat(views.stats().pendingRows()).isEqualTo(1);
        views.sync();
        assertThat(views.stats().pendingRows()).isZero();

        views.createView("totals", TOTALS);
        views.dropView("totals");
        assertThat(triggers()).isEqualTo(3);
        assertThat(views.stats().trackedTables()).isEqualTo(1);

        views.createView("totals", TOTALS);
        assertThat(views.untrack("orders")).isTrue();
        assertThat(triggers()).as("a view still reads it").isEqualTo(3);
        assertThat(views.untrack("orders")).isFalse();
        views.dropView("totals");
        assertThat(triggers()).isZero();
        assertThat(views.stats().trackedTables()).isZero();
    }

    /** Without {@code track} first the view misses the writer's rows (the triggers did not exist when it wrote). */
    @Test
    void aViewCreatedWhileAnotherTransactionWritesATrackedTableMissesNoneOfItsRows() throws Exception {
        views.track("orders");
        try (DuckDBConnection writer = (DuckDBConnection) connection.duplicate()) {
            DuckDb.run(writer, "BEGIN", "INSERT INTO orders VALUES (5, 'Lund', 6)", "DELETE FROM orders WHERE id = 3");
            views.createView("totals", TOTALS);
            DuckDb.run(writer, "COMMIT");
        }
        views.sync();
        assertThat(DuckDb.difference(connection, "totals", TOTALS)).isZero();
    }

    @Test
    void trackingSurvivesAReopen() throws Exception {
        views.track("orders");
        views.close();
        connection.close();
        connection = DuckDb.open("jdbc:duckdb:" + dir.resolve("shop.duckdb"));
        views = MaterializedViews.attach(connection);
        assertThat(views.stats().trackedTables()).isEqualTo(1);
        assertThat(triggers()).isEqualTo(3);
    }

    @Test
    void aTrackedTableThatWasDroppedCanStillBeUntracked() {
        views.track("orders");
        DuckDb.run(connection, "DROP TABLE orders");
        views.sync();
        assertThat(views.untrack("orders")).isTrue();
        assertThat(views.stats().trackedTables()).isZero();
        assertThat(DuckDb.rows(connection, "SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'mallard_views' "
                + "AND table_name LIKE 'delta$%'")).containsExactly("0");
        assertThat(views.untrack("orders")).isFalse();
    }

    @Test
    void trackingATableThatDoesNotExistIsRefused() {
        DuckDb.run(connection, "CREATE VIEW plain AS SELECT * FROM orders");
        for (String name : new String[] {"nope", "plain", "mallard_views.views", "a.b.c.d"}) {
            assertThatThrownBy(() -> views.track(name))
                    .isInstanceOfSatisfying(MallardException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_SQL_INVALID));
        }
    }

    private long triggers() {
        return Long.parseLong(DuckDb.rows(connection, "SELECT count(*) FROM duckdb_triggers()").get(0));
    }
}
