// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.engine.Engine;
import dev.mallard.core.sql.Classification;
import dev.mallard.core.sql.StatementClassifier;
import dev.mallard.core.sql.StatementKind;
import dev.mallard.server.auth.AccessToken;
import dev.mallard.server.config.ServerConfig;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The gate's json_serialize_sql, prepared once on a session's connection. */
class SessionSerializerTest {
    private Engine engine;
    private SessionRegistry sessions;
    private Session session;

    @BeforeEach
    void open() {
        engine = Engine.inMemory();
        sessions = new SessionRegistry(engine, new ServerConfig.SessionLimits(30, 10, 10, 4), Clock.systemUTC());
        session = sessions.open(new AccessToken("ada", "s", Instant.now().plus(Duration.ofHours(1)), Map.of()));
    }

    @AfterEach
    void close() throws Exception {
        sessions.close();
        engine.close();
    }

    @Test
    void theSessionsSerializerClassifiesEachTextAsAFreshlyPreparedCallWould() {
        StatementClassifier classifier = new StatementClassifier();
        for (String sql : new String[] {"SELECT 1", "SELECT * FROM range(3) WHERE range = 2", "CREATE TABLE t (id INT)", "SELEC nothing",
                "SELECT 1; SELECT 2"}) {
            Classification throughSession = session.sql(connection -> classifier.classify(connection, sql, session.serializer()));
            Classification fresh = session.sql(connection -> classifier.classify(connection, sql));
            assertThat(throughSession.statements()).as(sql).hasSameSizeAs(fresh.statements());
            for (int i = 0; i < fresh.statements().size(); i++) {
                assertThat(throughSession.statements().get(i).kind()).as(sql).isEqualTo(fresh.statements().get(i).kind());
                assertThat(throughSession.statements().get(i).tree()).as(sql).isEqualTo(fresh.statements().get(i).tree());
            }
        }
        assertThat(session.sql(connection -> classifier.classify(connection, "SELECT 1", session.serializer())).statement().kind())
                .isEqualTo(StatementKind.QUERY);
    }

    @Test
    void theSerializerRefusesToRunOutsideTheSessionsLock() {
        assertThatThrownBy(() -> session.serializer().serialize("SELECT 1")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("inside Session.sql");
    }
}
