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
    void anIdleSessionIsClosedAndItsTokenRefused() throws Exception {
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
            assertThatThrownBy(() -> sessions.open(token("idle", clock))).hasMessageContaining("log in again");
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
    void sessionsPastTheCapsAreRefused() throws Exception {
        ManualClock clock = new ManualClock();
        try (Engine engine = Engine.inMemory();
                SessionRegistry sessions = new SessionRegistry(engine, new ServerConfig.SessionLimits(30, 3, 2, 256), clock)) {
            sessions.open(token("a1", clock));
            sessions.open(token("a2", clock));
            assertThatThrownBy(() -> sessions.open(token("a3", clock)))
                    .hasMessageContaining("max_sessions_per_user")
                    .extracting(e -> ((dev.mallard.core.error.MallardException) e).errorCode())
                    .isEqualTo(dev.mallard.core.error.ErrorCode.USER_SESSIONS_EXHAUSTED);
            sessions.open(new AccessToken("bob", "b1", clock.now.plus(Duration.ofHours(1)), Map.of()));
            assertThatThrownBy(() -> sessions.open(new AccessToken("bob", "b2", clock.now.plus(Duration.ofHours(1)), Map.of())))
                    .hasMessageContaining("its max_sessions;");
            assertThat(sessions.open(token("a1", clock)).isClosed()).isFalse();
        }
    }
}
