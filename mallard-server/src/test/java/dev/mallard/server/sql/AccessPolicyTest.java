// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.engine.Engine;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.server.auth.AccessToken;
import dev.mallard.server.config.ServerConfig;
import dev.mallard.server.config.AccessMode;
import dev.mallard.server.session.Session;
import dev.mallard.server.session.SessionRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class AccessPolicyTest {
    static Engine engine;
    static SessionRegistry sessions;
    static Session session;
    static final AccessPolicy READ_ONLY = new AccessPolicy(AccessMode.READ_ONLY);

    @BeforeAll
    static void open() throws Exception {
        engine = Engine.inMemory();
        try (var statement = engine.connection().createStatement()) {
            statement.execute("CREATE TABLE t (id INTEGER)");
        }
        sessions = new SessionRegistry(engine, ServerConfig.SessionLimits.DEFAULT, Clock.systemUTC());
        session = sessions.open(new AccessToken("ada", "s1", Instant.now().plusSeconds(600), Map.of()));
    }

    @AfterAll
    static void close() {
        sessions.close();
        engine.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "SELECT 1",
        "select * from t where id in (select id from t)",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r",
        "SELECT 1 UNION SELECT 2 EXCEPT SELECT 3",
        "FROM t",
        "EXPLAIN SELECT * FROM t",
        "EXPLAIN ANALYZE SELECT count(*) FROM t",
        "SELECT * FROM query('SELECT count(*) FROM t')",
        "SELECT * FROM query_table('t')",
        "SELECT * FROM range(3)"
    })
    void readOnlyAdmitsQueries(String sql) {
        assertThatCode(() -> READ_ONLY.check(session, sql)).doesNotThrowAnyException();
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "INSERT INTO t VALUES (1)",
        "UPDATE t SET id = 2",
        "CREATE TABLE u AS SELECT 1",
        "CREATE VIEW v AS SELECT 1",
        "SET memory_limit = '1GB'",
        "PRAGMA enable_profiling",
        "INSTALL httpfs",
        "EXPORT DATABASE '/tmp/x'",
        "CALL pragma_version()",
        "SELECT 1; DELETE FROM t",
        "/* SELECT */ DROP TABLE t",
        "BEGIN TRANSACTION",
        "CREATE MATERIALIZED VIEW mv AS SELECT * FROM t",
        "DROP MATERIALIZED VIEW mv",
        "SELECT dbsp_create_view('mv', 'SELECT * FROM t')",
        "SELECT \"DBSP_DROP_VIEW\"('mv')",
        "SELECT dbsp_auto_sync(false)",
        "SELECT dbsp_track('t')",
        "SELECT dbsp_untrack('t')",
        "SELECT dbsp_drop_view('mv')",
        "SELECT * FROM dbsp_check(true)",
        "SELECT dbsp_drop('mv')",
        "SELECT * FROM dbsp_drop_cascade('mv')",
        "SELECT dbsp_drop_view_cascade('mv')",
        "SELECT * FROM dbsp_save('views.json')",
        "SELECT dbsp_save()",
        "SELECT * FROM dbsp_load('views.json', 'json')",
        "SELECT * FROM dbsp_load()",
        "SELECT * FROM dbsp_autopersist(false)",
        "SELECT * FROM dbsp_spill('64MB')",
        "SELECT dbsp_spill(false)",
        "SELECT * FROM dbsp_parallel(2)",
        "SELECT * FROM dbsp_timing(true)",
        "SELECT * FROM dbsp_recursion_limit(100, 5)",
        "SELECT * FROM dbsp_auto_sync()",
        "SELECT 1; SELECT 2",
        "WITH x AS (DELETE FROM t RETURNING *) SELECT count(*) FROM x",
        "SELECT * FROM (WITH x AS (UPDATE t SET id = 0 RETURNING *) SELECT * FROM x)",
        "WITH x AS (COPY t TO '/tmp/mallard-policy.csv') SELECT 1",
        "SELECT * FROM checkpoint()",
        "SELECT * FROM force_checkpoint()",
        "SELECT * FROM query('SELECT * FROM checkpoint()')",
        "SELECT * FROM query('WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x')",
        "SELECT nextval('s')",
        "SELECT * FROM enable_logging()",
        "EXPLAIN ANALYZE DELETE FROM t",
        "EXPLAIN ANALYZE WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x",
        "ATTACH ':memory:' AS other",
        "COPY t TO '/tmp/mallard-policy.csv'",
        "LOAD httpfs",
        "RESET threads",
        "CHECKPOINT"
    })
    void readOnlyRefusesEverythingElse(String sql) {
        assertThatThrownBy(() -> READ_ONLY.check(session, sql))
                .isInstanceOf(MallardException.class)
                .extracting(e -> ((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_ACCESS_DENIED);
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "SELECT * FROM query('SELECT dbs' || 'p_create_view(''v3'', ''SELECT x FROM t'')')",
        "SELECT * FROM query(?)",
        "SELECT * FROM query_table('t' || '')"
    })
    void aQueryTextTheGateCannotReadIsRefusedInEveryMode(String sql) {
        for (AccessMode mode : java.util.List.of(AccessMode.COMPLETE, AccessMode.READ_ONLY)) {
            assertThatThrownBy(() -> new AccessPolicy(mode).check(session, sql))
                    .extracting(e -> ((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_SQL_UNSUPPORTED);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "SELECT dbsp_create_view('v' || range, 'SELECT 1') FROM range(2, 4)",
        "SELECT * FROM dbsp_stats() WHERE metric = 'views'",
        "SELECT dbsp_sync() AS s",
        "SELECT 1 WHERE dbsp_sync() > 0",
        "SELECT (SELECT dbsp_sync())",
        "SELECT * FROM query('SELECT dbsp_sync()')",
        "SELECT dbsp_sync(), 1"
    })
    void aSelectCallingViewFunctionsAnywhereIsHandedToTheViewsFrontDoor(String sql) {
        // The front door runs the constant calls and refuses the rest with user.view.call_placement (ViewFunctionsDoNotHangIT).
        assertThat(new AccessPolicy(AccessMode.COMPLETE).check(session, sql).throughViews()).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"EXPLAIN SELECT dbsp_sync()", "SELECT 1; SELECT dbsp_sync()", "EXPLAIN ANALYZE SELECT * FROM dbsp_stats()"})
    void aViewFunctionOutsideASingleSelectIsRefusedWithThePlacementCodeInEveryMode(String sql) {
        for (AccessMode mode : java.util.List.of(AccessMode.COMPLETE, AccessMode.READ_ONLY)) {
            assertThatThrownBy(() -> new AccessPolicy(mode).check(session, sql))
                    .extracting(e -> ((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_VIEW_CALL_PLACEMENT);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "SELECT 1 WHERE dbsp_create_view('v9', 'SELECT 1') > 0",
        "SELECT (SELECT dbsp_drop_view('v'))",
        "SELECT * FROM query('SELECT dbsp_track(''t'')')",
        "SELECT count(*) FROM dbsp_check('repair')",
        "WITH x AS (DELETE FROM t RETURNING *) SELECT dbsp_sync(), count(*) FROM x"
    })
    void readOnlyRefusesWritingViewFunctionsAndWritesAnywhereInASelectCallingThem(String sql) {
        assertThatThrownBy(() -> READ_ONLY.check(session, sql))
                .extracting(e -> ((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_ACCESS_DENIED);
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "SELECT * FROM dbsp_spill()",
        "SELECT dbsp_parallel()",
        "SELECT * FROM dbsp_timing()",
        "SELECT * FROM dbsp_autopersist()",
        "SELECT * FROM dbsp_recursion_limit()",
        "SELECT * FROM dbsp_sync('t')",
        "SELECT * FROM dbsp_query('mv')",
        "SELECT view, differing_rows FROM dbsp_check()"
    })
    void readOnlyHandsAViewSettingReadWithoutArgumentsAndTheReadingCallsToTheFrontDoor(String sql) {
        assertThat(READ_ONLY.check(session, sql).throughViews()).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "SELECT * FROM dbsp_tables()",
        "SELECT * FROM dbsp_views()",
        "SELECT * FROM dbsp_replace_view('mv', 'SELECT 1')",
        "SELECT dbsp_notify_insert('t', 1)",
        "SELECT * FROM dbsp_lazy_restore(true)",
        "SELECT count(*) FROM t WHERE id > dbsp_spill_bytes()"
    })
    void aViewFunctionNameTheGateDoesNotKnowIsRefusedInEveryMode(String sql) {
        for (AccessMode mode : java.util.List.of(AccessMode.COMPLETE, AccessMode.READ_ONLY)) {
            assertThatThrownBy(() -> new AccessPolicy(mode).check(session, sql))
                    .extracting(e -> ((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_SQL_INVALID);
        }
    }

    @Test
    void everyFunctionTheViewsFrontDoorRunsIsClassifiedByTheGate() {
        for (String name : dev.mallard.views.ViewSql.functionNames()) {
            assertThat(AccessPolicy.READING_VIEW_FUNCTIONS.contains(name) || AccessPolicy.WRITING_VIEW_FUNCTIONS.contains(name)
                    || AccessPolicy.VIEW_SETTINGS.contains(name)).as(name).isTrue();
            CheckedSql checked = new AccessPolicy(AccessMode.COMPLETE, FileAccess.ALL).check(session, "SELECT * FROM " + name + "()");
            assertThat(checked.throughViews()).as(name).isTrue();
        }
        assertThat(dev.mallard.views.ViewSql.functionNames()).contains("dbsp_save", "dbsp_load", "dbsp_spill", "dbsp_parallel",
                "dbsp_timing", "dbsp_autopersist", "dbsp_recursion_limit", "dbsp_drop", "dbsp_drop_cascade");
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "SELECT * FROM dbsp_save('views.json')",
        "SELECT dbsp_load('views.json')",
        "SELECT * FROM dbsp_load('views.json', 'json')"
    })
    void aViewSetFileIsRefusedUnlessFileAccessIsAllSinceTheViewsModuleOpensItItself(String sql) {
        for (FileAccess access : java.util.List.of(FileAccess.NONE, FileAccess.WAREHOUSE)) {
            assertThatThrownBy(() -> new AccessPolicy(AccessMode.COMPLETE, access).check(session, sql))
                    .isInstanceOf(MallardException.class)
                    .hasMessageContaining("file_access")
                    .extracting(e -> ((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_ACCESS_DENIED);
        }
        assertThat(new AccessPolicy(AccessMode.COMPLETE, FileAccess.ALL).check(session, sql).throughViews()).isTrue();
        assertThatThrownBy(() -> new AccessPolicy(AccessMode.READ_ONLY, FileAccess.ALL).check(session, sql))
                .extracting(e -> ((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_ACCESS_DENIED);
    }

    @ParameterizedTest
    @ValueSource(strings = {"SELECT * FROM dbsp_save()", "SELECT dbsp_load()", "SELECT * FROM dbsp_spill('64MB')",
        "SELECT * FROM dbsp_parallel(2)", "SELECT * FROM dbsp_recursion_limit(100, 5)", "SELECT dbsp_drop('mv')"})
    void completeHandsTheWritingViewCallsWithoutAFileToTheFrontDoor(String sql) {
        assertThat(new AccessPolicy(AccessMode.COMPLETE).check(session, sql).throughViews()).isTrue();
    }

    @Test
    void readOnlyHandsANestedReadingViewCallToTheFrontDoor() {
        assertThat(READ_ONLY.check(session, "SELECT * FROM dbsp_stats() WHERE metric = 'views'").throughViews()).isTrue();
    }

    @Test
    void aTopLevelViewCallRunsThroughTheFrontDoorInItsCanonicalSpelling() {
        CheckedSql checked = READ_ONLY.check(session, "select   *  from DBSP_STATS()");
        assertThat(checked.throughViews()).isTrue();
        assertThat(checked.sql()).isEqualTo("SELECT * FROM dbsp_stats()");
        assertThat(new AccessPolicy(AccessMode.COMPLETE).check(session, "SELECT count(*) FROM t").throughViews()).isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {"SELEC 1", "SELECT FROM WHERE"})
    void textThatDoesNotParseIsASqlError(String sql) {
        assertThatThrownBy(() -> READ_ONLY.check(session, sql))
                .extracting(e -> ((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_SQL_INVALID);
    }

    @ParameterizedTest
    @ValueSource(strings = {"DROP TABLE IF EXISTS nothing_here", "SET threads = 2"})
    void completeAdmitsAnything(String sql) {
        assertThatCode(() -> new AccessPolicy(AccessMode.COMPLETE).check(session, sql)).doesNotThrowAnyException();
    }
}
