// SPDX-License-Identifier: Apache-2.0
package dev.mallard.views;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.time.Duration;
import org.duckdb.DuckDBConnection;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class RecursionLimitTest {
    private static final String PATHS = "WITH RECURSIVE p(a, b, d) AS (SELECT src, dst, 1 FROM edges UNION "
            + "SELECT p.a, e.dst, p.d + 1 FROM p JOIN edges e ON p.b = e.src) SELECT * FROM p";

    private DuckDBConnection connection;
    private MaterializedViews views;

    @BeforeEach
    void open() {
        connection = DuckDb.open("jdbc:duckdb:");
        DuckDb.run(connection, "CREATE TABLE edges (src INTEGER, dst INTEGER)", "INSERT INTO edges VALUES (1, 2), (2, 3)");
        views = MaterializedViews.attach(connection);
    }

    @AfterEach
    void close() throws Exception {
        views.close();
        connection.close();
    }

    @Test
    void aCounterThatNeverStopsFailsTheCreateAfterTheRoundLimitNamingTheViewAndTheFix() {
        views.recursionLimit(50, Duration.ofMinutes(5));
        assertThatThrownBy(() -> views.createView("counter", "WITH RECURSIVE r(n) AS (SELECT src FROM edges UNION "
                + "SELECT n + 1 FROM r) SELECT n FROM r"))
                .isInstanceOfSatisfying(MallardException.class, e -> {
                    assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_VIEW_RECURSION_UNBOUNDED);
                    assertThat(e.getMessage()).contains("counter", "50 rounds", "UNION", "depth");
                });
        assertThat(views.names()).doesNotContain("counter");
        assertThat(DuckDb.rows(connection, "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'counter'")).containsExactly("0");
    }

    @Test
    void aPathLengthOverACycleFailsTheCreateThroughDuckDbsInterruptOnceItsTimeIsUp() {
        DuckDb.run(connection, "INSERT INTO edges VALUES (3, 1)");
        views.recursionLimit(Long.MAX_VALUE, Duration.ofSeconds(1));
        assertThatThrownBy(() -> views.createView("paths", PATHS))
                .isInstanceOfSatisfying(MallardException.class, e -> {
                    assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_VIEW_RECURSION_UNBOUNDED);
                    assertThat(e.getMessage()).contains("paths", "longer than 1 s");
                });
        assertThat(views.names()).isEmpty();
        // The connection works on after the interrupt.
        assertThat(DuckDb.rows(connection, "SELECT count(*) FROM edges")).containsExactly("3");
    }

    @Test
    void aWriteThatClosesACycleFailsTheSyncWithTheCodeAndTheViewComesRightOnceTheCycleIsGone() {
        views.recursionLimit(40, Duration.ofMinutes(5));
        views.createView("paths", PATHS);
        assertThat(DuckDb.difference(connection, "paths", PATHS)).isZero();

        DuckDb.run(connection, "INSERT INTO edges VALUES (3, 1)");
        assertThatThrownBy(views::sync).isInstanceOfSatisfying(MallardException.class,
                e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_VIEW_RECURSION_UNBOUNDED));
        assertThat(DuckDb.rows(connection, "SELECT count(*) FROM paths")).containsExactly("3");

        DuckDb.run(connection, "DELETE FROM edges WHERE src = 3");
        views.sync();
        assertThat(DuckDb.difference(connection, "paths", PATHS)).isZero();
    }

    @Test
    void aRecursionThatKeepsDuplicatesIsRefusedNamingUnionAndADepthColumn() {
        DuckDb.run(connection, "INSERT INTO edges VALUES (3, 1)");
        assertThatThrownBy(() -> views.createView("dup", "WITH RECURSIVE r(a, b) AS (SELECT src, dst FROM edges UNION ALL "
                + "SELECT r.a, e.dst FROM r JOIN edges e ON r.b = e.src) SELECT * FROM r"))
                .isInstanceOfSatisfying(MallardException.class, e -> {
                    assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_VIEW_UNSUPPORTED);
                    assertThat(e.getMessage()).contains("dup", "use UNION", "depth column");
                });
    }

    @Test
    void theLimitRefusesNonsense() {
        assertThatThrownBy(() -> views.recursionLimit(0, Duration.ofSeconds(1)))
                .isInstanceOfSatisfying(MallardException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_SQL_INVALID));
        assertThat(views.recursionRounds()).isEqualTo(10_000);
    }
}
