package dev.mallard.server.session;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.core.engine.Engine;
import dev.mallard.server.auth.AccessToken;
import dev.mallard.server.config.ServerConfig;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class IdleStatementsTest {
    private static final QueryOptions OPTIONS = QueryOptions.resolve(Optional.empty(), Optional.empty(), 1024, 0);

    /** Records whether it was closed. */
    private static final class Statement implements AutoCloseable {
        boolean closed;

        @Override
        public void close() {
            closed = true;
        }
    }

    @Test
    void aKeptStatementIsTakenOnceByItsText() {
        IdleStatements idle = new IdleStatements(4);
        Statement kept = new Statement();
        idle.keep("SELECT 1", 7, kept, 7);
        assertThat(idle.take("SELECT 2", Statement.class, 7)).isEmpty();
        assertThat(idle.take("SELECT 1", Statement.class, 7)).containsSame(kept);
        assertThat(idle.take("SELECT 1", Statement.class, 7)).isEmpty();
        assertThat(kept.closed).isFalse();
    }

    @Test
    void aStatementPreparedBeforeAChangeIsClosedInsteadOfKept() {
        IdleStatements idle = new IdleStatements(4);
        Statement stale = new Statement();
        idle.keep("SELECT 1", 6, stale, 7);
        assertThat(stale.closed).isTrue();
        assertThat(idle.size()).isZero();
    }

    @Test
    void aChangeAfterKeepingClosesEveryKeptStatementAtTheNextTake() {
        IdleStatements idle = new IdleStatements(4);
        Statement first = new Statement();
        Statement second = new Statement();
        idle.keep("SELECT 1", 7, first, 7);
        idle.keep("SELECT 2", 7, second, 7);
        assertThat(idle.take("SELECT 1", Statement.class, 8)).isEmpty();
        assertThat(first.closed).isTrue();
        assertThat(second.closed).isTrue();
        assertThat(idle.size()).isZero();
    }

    @Test
    void theLeastRecentlyKeptStatementsBeyondTheCapacityAreClosed() {
        IdleStatements idle = new IdleStatements(2);
        Statement first = new Statement();
        Statement second = new Statement();
        Statement third = new Statement();
        Statement again = new Statement();
        idle.keep("a", 1, first, 1);
        idle.keep("b", 1, second, 1);
        idle.keep("c", 1, third, 1);
        assertThat(first.closed).isTrue();
        idle.keep("b", 1, again, 1);
        assertThat(second.closed).isTrue();
        assertThat(idle.take("b", Statement.class, 1)).containsSame(again);
        assertThat(idle.take("c", Statement.class, 1)).containsSame(third);
        idle.close();
        assertThat(again.closed || third.closed).isFalse();
    }

    @Test
    void closingClosesWhatIsKept() {
        IdleStatements idle = new IdleStatements(2);
        Statement kept = new Statement();
        idle.keep("a", 1, kept, 1);
        idle.close();
        assertThat(kept.closed).isTrue();
        assertThat(idle.size()).isZero();
    }

    @Test
    void aSessionDropsItsKeptStatementsWhenAnotherSessionChangesTheCatalog() throws Exception {
        Instant expiry = Instant.now().plus(Duration.ofHours(1));
        try (Engine engine = Engine.inMemory(); SessionRegistry sessions = new SessionRegistry(engine, ServerConfig.SessionLimits.DEFAULT,
                java.time.Clock.systemUTC())) {
            Session reader = sessions.open(new AccessToken("ada", "reader", expiry, Map.of()));
            Session writer = sessions.open(new AccessToken("ada", "writer", expiry, Map.of()));
            writer.execute("CREATE TABLE t AS SELECT 1 AS a", OPTIONS);
            long preparedAt = reader.changes();
            PreparedStatement statement = reader.sql(connection -> connection.prepareStatement("SELECT * FROM t"));
            reader.keepIdle("SELECT * FROM t", preparedAt, statement);
            PreparedStatement reused = reader.takeIdle("SELECT * FROM t", PreparedStatement.class).orElseThrow();
            assertThat(reused).isSameAs(statement);
            int columns = reader.sql(connection -> {
                try (ResultSet rs = reused.executeQuery()) {
                    return rs.getMetaData().getColumnCount();
                }
            });
            assertThat(columns).isEqualTo(1);
            reader.keepIdle("SELECT * FROM t", preparedAt, reused);

            writer.execute("ALTER TABLE t ADD COLUMN b INTEGER", OPTIONS);

            Optional<PreparedStatement> stale = reader.takeIdle("SELECT * FROM t", PreparedStatement.class);
            assertThat(stale).isEmpty();
            assertThat(statement.isClosed()).isTrue();
        }
    }

    @Test
    void aStatementWithoutRowsInTheSameSessionAlsoDropsThem() throws Exception {
        Instant expiry = Instant.now().plus(Duration.ofHours(1));
        try (Engine engine = Engine.inMemory(); SessionRegistry sessions = new SessionRegistry(engine, ServerConfig.SessionLimits.DEFAULT,
                java.time.Clock.systemUTC())) {
            Session session = sessions.open(new AccessToken("ada", "one", expiry, Map.of()));
            long preparedAt = session.changes();
            PreparedStatement statement = session.sql(connection -> connection.prepareStatement("SELECT 1"));
            session.keepIdle("SELECT 1", preparedAt, statement);
            session.execute("SET search_path = 'main'", OPTIONS);
            assertThat(session.takeIdle("SELECT 1", PreparedStatement.class)).isEmpty();
        }
    }
}
