// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.engine.Engine;
import dev.mallard.server.auth.AccessToken;
import dev.mallard.server.config.ServerConfig;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SessionRegistryTest {
    /** A clock the test moves. */
    static final class ManualClock extends Clock {
        Instant now = Instant.parse("2026-11-29T12:00:00Z");

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    private static AccessToken token(String id, ManualClock clock) {
        return new AccessToken("ada", id, clock.now.plus(Duration.ofHours(12)), Map.of());
    }

    @Test
    void oneTokenIsOneSessionAndTwoTokensAreTwo() throws Exception {
        ManualClock clock = new ManualClock();
        try (Engine engine = Engine.inMemory(); SessionRegistry sessions = new SessionRegistry(engine, ServerConfig.SessionLimits.DEFAULT, clock)) {
            Session first = sessions.open(token("a", clock));
            assertThat(sessions.open(token("a", clock))).isSameAs(first);
            Session second = sessions.open(token("b", clock));
            first.sql(connection -> {
                try (Statement statement = connection.createStatement()) {
                    return statement.execute("SET search_path = 'temp'");
                }
            });
            String other = second.sql(connection -> {
                try (Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery("SELECT current_setting('search_path')")) {
                    rs.next();
                    return rs.getString(1);
                }
            });
            assertThat(other).isNotEqualTo("temp");
        }
    }

    @Test
    void anIdleSessionIsReclaimedAndItsTokenGetsAFreshOne() throws Exception {
        ManualClock clock = new ManualClock();
        try (Engine engine = Engine.inMemory(); SessionRegistry sessions = new SessionRegistry(engine, ServerConfig.SessionLimits.DEFAULT, clock)) {
            Session idle = sessions.open(token("idle", clock));
            clock.now = clock.now.plus(Duration.ofMinutes(20));
            Session busy = sessions.open(token("busy", clock));
            clock.now = clock.now.plus(Duration.ofMinutes(15));
            sessions.closeIdle();
            assertThat(idle.isClosed()).isTrue();
            assertThat(busy.isClosed()).isFalse();
            assertThat(sessions.size()).isEqualTo(1);
            Session fresh = sessions.open(token("idle", clock));
            assertThat(fresh).isNotSameAs(idle);
            assertThat(fresh.isClosed()).isFalse();
        }
    }

    @Test
    void aSessionItsClientClosedRefusesItsToken() throws Exception {
        ManualClock clock = new ManualClock();
        try (Engine engine = Engine.inMemory(); SessionRegistry sessions = new SessionRegistry(engine, ServerConfig.SessionLimits.DEFAULT, clock)) {
            sessions.open(token("closed", clock));
            sessions.close("closed");
            assertThatThrownBy(() -> sessions.open(token("closed", clock))).hasMessageContaining("log in again");
        }
    }

    @Test
    void aDiscardedSessionLeavesNoTrace() throws Exception {
        ManualClock clock = new ManualClock();
        try (Engine engine = Engine.inMemory(); SessionRegistry sessions = new SessionRegistry(engine, ServerConfig.SessionLimits.DEFAULT, clock)) {
            sessions.open(token("once", clock));
            sessions.discard("once");
            assertThat(sessions.size()).isZero();
            assertThat(sessions.open(token("once", clock)).isClosed()).isFalse();
        }
    }

    @Test
    void atTheCapsTheLeastRecentlyUsedIdleSessionIsReclaimedNotTheClientRefused() throws Exception {
        ManualClock clock = new ManualClock();
        try (Engine engine = Engine.inMemory();
                SessionRegistry sessions = new SessionRegistry(engine, new ServerConfig.SessionLimits(30, 3, 2, 256), clock)) {
            Session a1 = sessions.open(token("a1", clock));
            clock.now = clock.now.plusSeconds(1);
            Session a2 = sessions.open(token("a2", clock));
            clock.now = clock.now.plusSeconds(1);
            Session a3 = sessions.open(token("a3", clock));
            assertThat(a1.isClosed()).as("the user's least recently used session").isTrue();
            assertThat(a2.isClosed()).isFalse();
            assertThat(sessions.ofUser("ada")).hasSize(2);
            clock.now = clock.now.plusSeconds(1);
            sessions.open(new AccessToken("bob", "b1", clock.now.plus(Duration.ofHours(1)), Map.of()));
            clock.now = clock.now.plusSeconds(1);
            sessions.open(new AccessToken("bob", "b2", clock.now.plus(Duration.ofHours(1)), Map.of()));
            assertThat(a2.isClosed()).as("the server's least recently used session").isTrue();
            assertThat(sessions.size()).isEqualTo(3);
            assertThat(sessions.open(token("a1", clock)).isClosed()).as("a reclaimed session's token gets a fresh one").isFalse();
            assertThat(a3.isClosed()).as("now the server's least recently used").isTrue();
            assertThat(sessions.size()).isEqualTo(3);
        }
    }

    @Test
    void atTheCapsASessionRunningAStatementIsNotReclaimedAndTheNewOneIsRefused() throws Exception {
        ManualClock clock = new ManualClock();
        try (Engine engine = Engine.inMemory();
                SessionRegistry sessions = new SessionRegistry(engine, new ServerConfig.SessionLimits(30, 3, 1, 256), clock)) {
            Session running = sessions.open(token("a1", clock));
            try (ResultStream result = running.execute("SELECT range FROM range(1000000)", new QueryOptions(1000, java.util.Optional.empty()))
                    .rows().orElseThrow()) {
                assertThatThrownBy(() -> sessions.open(token("a2", clock)))
                        .hasMessageContaining("max_sessions_per_user")
                        .extracting(e -> ((dev.mallard.core.error.MallardException) e).errorCode())
                        .isEqualTo(dev.mallard.core.error.ErrorCode.USER_SESSIONS_EXHAUSTED);
                assertThat(running.isClosed()).isFalse();
                assertThat(result.loadNextBatch()).isTrue();
            }
        }
    }
}
