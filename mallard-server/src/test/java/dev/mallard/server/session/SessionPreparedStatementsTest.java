// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.engine.Engine;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.server.auth.AccessToken;
import dev.mallard.server.config.ServerConfig;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A session holds at most max_prepared_statements_per_session prepared statements, giving up the least recently used. */
class SessionPreparedStatementsTest {
    private static final int CAP = 4;

    private Engine engine;
    private SessionRegistry sessions;
    private Session session;

    @BeforeEach
    void open() {
        engine = Engine.inMemory();
        sessions = new SessionRegistry(engine, new ServerConfig.SessionLimits(30, 10, 10, CAP), Clock.systemUTC());
        session = sessions.open(new AccessToken("ada", "s", Instant.now().plus(Duration.ofHours(1)), Map.of()));
    }

    @AfterEach
    void close() throws Exception {
        sessions.close();
        engine.close();
    }

    private PreparedStatement prepare(int k) {
        return session.sql(connection -> connection.prepareStatement("SELECT " + k + " AS k"));
    }

    private int run(PreparedStatement statement) {
        return session.sql(connection -> {
            try (ResultSet rs = statement.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        });
    }

    @Test
    void pastTheCapTheLeastRecentlyUsedStatementsAreClosedAndTheRecentOnesStillRun() throws Exception {
        List<PreparedStatement> statements = new ArrayList<>();
        for (int k = 0; k < CAP + 3; k++) {
            PreparedStatement statement = prepare(k);
            statements.add(statement);
            session.keepPrepared("h" + k, statement);
            if (k == 3) {
                // h0 used again: now more recent than h1, h2 and h3.
                session.findPrepared("h0", PreparedStatement.class);
            }
            assertThat(session.preparedStatementCount()).isLessThanOrEqualTo(CAP);
        }
        assertThat(session.preparedStatementCount()).isEqualTo(CAP);
        for (String gone : List.of("h1", "h2", "h3")) {
            assertThatThrownBy(() -> session.findPrepared(gone, PreparedStatement.class))
                    .isInstanceOf(MallardException.class)
                    .hasMessageContaining("held more than " + CAP)
                    .hasMessageContaining("prepare it again")
                    .hasMessageContaining("max_prepared_statements_per_session")
                    .extracting(e -> ((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_PREPARED_STATEMENT_CLOSED);
        }
        assertThat(statements.get(1).isClosed()).as("DuckDB's statement of an evicted handle is closed").isTrue();
        for (int k : List.of(0, 4, 5, 6)) {
            assertThat(run(session.findPrepared("h" + k, PreparedStatement.class))).isEqualTo(k);
        }
    }

    @Test
    void aStatementInUseIsNotClosedToKeepWithinTheCap() throws Exception {
        session.keepPrepared("busy", prepare(100));
        try (Session.Lease<PreparedStatement> busy = session.leasePrepared("busy", PreparedStatement.class)) {
            for (int k = 0; k < CAP + 2; k++) {
                session.keepPrepared("h" + k, prepare(k));
            }
            assertThat(busy.value().isClosed()).isFalse();
            assertThat(run(busy.value())).isEqualTo(100);
            assertThat(session.preparedStatementCount()).isEqualTo(CAP);
        }
        // Released, it is an ordinary statement again, closed once CAP newer ones are used.
        for (int k = 0; k < CAP; k++) {
            session.keepPrepared("next" + k, prepare(200 + k));
        }
        assertThat(session.preparedStatementCount()).isEqualTo(CAP);
        assertThatThrownBy(() -> session.findPrepared("busy", PreparedStatement.class)).hasMessageContaining("held more than " + CAP);
    }

    @Test
    void aStatementTheClientClosesWhileInUseIsClosedWhenTheUseEnds() throws Exception {
        PreparedStatement statement = prepare(1);
        session.keepPrepared("h", statement);
        Session.Lease<PreparedStatement> lease = session.leasePrepared("h", PreparedStatement.class);
        session.closePrepared("h");
        assertThat(statement.isClosed()).isFalse();
        assertThat(run(lease.value())).isEqualTo(1);
        assertThatThrownBy(() -> session.findPrepared("h", PreparedStatement.class))
                .extracting(e -> ((MallardException) e).errorCode()).isEqualTo(ErrorCode.USER_PREPARED_STATEMENT_CLOSED);
        lease.close();
        assertThat(statement.isClosed()).isTrue();
        assertThat(session.preparedStatementCount()).isZero();
    }
}
