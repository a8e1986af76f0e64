// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.session;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.engine.Engine;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.server.auth.AccessToken;
import dev.mallard.server.config.ServerConfig;
import dev.mallard.server.rls.ClaimPolicy;
import dev.mallard.server.rls.RowLevelSecurity;
import dev.mallard.server.views.ServedViews;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.duckdb.DuckDBConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The open sessions, one per access token id: a client that logs in gets a token, and every call carrying that
 * token runs on the same DuckDB connection. A session idle longer than the idle timeout is reclaimed (its DuckDB
 * connection closed); its token stays valid and gets a fresh session on its next call. At the caps (in total, per
 * user) the least recently used session not running anything is reclaimed the same way, so the caps bound memory
 * without refusing a client; only when every session under a cap is running is a new one refused.
 */
public final class SessionRegistry implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SessionRegistry.class);

    static final String STANDARD_ARROW_TYPES = "SET arrow_lossless_conversion = false";

    private final Engine engine;
    private final ClaimPolicy claims;
    private final ServedViews views;
    private final ScheduledExecutorService timer;
    private final Duration idleTimeout;
    private final ServerConfig.SessionLimits limits;
    private final boolean streamResults;
    private final Clock clock;
    private final Map<String, Session> sessions = new ConcurrentHashMap<>();
    private final Map<String, Instant> closedIds = new ConcurrentHashMap<>();
    private final Thread reaper;

    public SessionRegistry(Engine engine, ServerConfig.SessionLimits limits, Clock clock) {
        this(engine, limits, ServerConfig.DEFAULT_STREAM_RESULTS, clock);
    }

    /** @param streamResults whether sessions' queries answer DuckDB streaming results (computed as they are read) */
    public SessionRegistry(Engine engine, ServerConfig.SessionLimits limits, boolean streamResults, Clock clock) {
        this(engine, ServedViews.open(engine::newSession), limits, streamResults, clock);
    }

    /** @param views the database's materialized views; the registry closes them after the sessions */
    public SessionRegistry(Engine engine, ServedViews views, ServerConfig.SessionLimits limits, boolean streamResults, Clock clock) {
        this(engine, views, limits, streamResults, clock, ClaimPolicy.open());
    }

    /** @param claims which row-level security a token's session gets under the server's access mode */
    public SessionRegistry(Engine engine, ServedViews views, ServerConfig.SessionLimits limits, boolean streamResults, Clock clock, ClaimPolicy claims) {
        this.claims = requireNonNull(claims, "claims is null");
        this.streamResults = streamResults;
        this.engine = requireNonNull(engine, "engine is null");
        this.views = requireNonNull(views, "views is null");
        this.timer = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().name("query-timeouts").daemon().factory());
        this.limits = requireNonNull(limits, "limits is null");
        this.idleTimeout = Duration.ofMinutes(limits.idleMinutes());
        this.clock = requireNonNull(clock, "clock is null");
        this.reaper = Thread.ofVirtual().name("session-reaper").start(this::reapIdle);
    }

    /** The token's session, opened on its first call. */
    public Session open(AccessToken token) {
        if (closedIds.containsKey(token.sessionId())) {
            throw new MallardException(ErrorCode.USER_AUTH_FAILED,
                    "this token's session was closed by its client (CloseSession); log in again");
        }
        Session open = sessions.get(token.sessionId());
        return open != null && !open.isClosed() ? open : create(token);
    }

    private synchronized Session create(AccessToken token) {
        Session open = sessions.get(token.sessionId());
        if (open != null && !open.isClosed()) {
            return open;
        }
        if (sessions.size() >= limits.maxSessions() && !reclaimLeastRecentlyUsed(null)) {
            throw new MallardException(ErrorCode.USER_SESSIONS_EXHAUSTED, "the server holds " + sessions.size()
                    + " sessions, its max_sessions, each running a statement now; retry when one ends, or raise max_sessions");
        }
        long mine = ofUser(token.username()).size();
        if (mine >= limits.maxSessionsPerUser() && !reclaimLeastRecentlyUsed(token.username())) {
            throw new MallardException(ErrorCode.USER_SESSIONS_EXHAUSTED, "user " + token.username() + " holds " + mine
                    + " sessions, the server's max_sessions_per_user, each running a statement now; retry when one ends, or raise max_sessions_per_user");
        }
        Optional<RowLevelSecurity> security = claims.forSession(token.username(), token.claims());
        DuckDBConnection connection = engine.newSession();
        try (Statement statement = connection.createStatement()) {
            // Clients (the JDBC driver above all) read DuckDB's standard Arrow types: HUGEINT as DECIMAL(38,0), UUID
            // and JSON as text. The engine's lossless export (extension types, 128-bit integers) is for Mallard's own
            // JSON lines writer, not for them.
            statement.execute(STANDARD_ARROW_TYPES);
            if (streamResults) {
                // Set on the session's connection only: the engine's own and the views' connections keep materialised
                // results (the views module reads a result while it runs other statements).
                Session.setStreaming(connection, true);
            }
        } catch (SQLException e) {
            closeQuietly(connection);
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot prepare a DuckDB session: " + e.getMessage(), e);
        }
        try {
            security.ifPresent(rls -> rls.open(connection));
        } catch (RuntimeException e) {
            closeQuietly(connection);
            throw e;
        }
        Session session = new Session(token.sessionId(), token.username(), token.expiresAt(), connection, engine.allocator(), timer, clock, views, limits.maxPreparedStatements(), streamResults, security);
        sessions.put(token.sessionId(), session);
        LOG.debug("session opened user={} open_sessions={}", token.username(), sessions.size());
        return session;
    }

    /**
     * Reclaims the least recently used session (of {@code username}, or of anyone when null) that runs nothing: its
     * connection closes, its token stays valid and gets a fresh session on its next call.
     *
     * @return false when every such session is running a statement or sending a result
     */
    private boolean reclaimLeastRecentlyUsed(String username) {
        Optional<Session> oldest = sessions.values().stream()
                .filter(session -> username == null || session.username().equals(username))
                .filter(session -> !session.isRunning())
                .min(java.util.Comparator.comparing(Session::lastUsed));
        oldest.ifPresent(session -> {
            LOG.info("session reclaimed at the cap user={} idle_seconds={}", session.username(),
                    Duration.between(session.lastUsed(), clock.instant()).toSeconds());
            close(session.id(), false);
        });
        return oldest.isPresent();
    }

    private static void closeQuietly(DuckDBConnection connection) {
        try {
            connection.close();
        } catch (SQLException e) {
            // Already failing; the first error is the one reported.
        }
    }

    /** Checks a login's claims against the user's configuration before its token is issued. */
    public void checkLoginClaims(String username, Map<String, Object> loginClaims) {
        claims.checkLogin(username, loginClaims);
    }

    public Optional<Session> find(String sessionId) {
        return Optional.ofNullable(sessions.get(sessionId));
    }

    /** The open sessions of one user (a user's statement ids are looked up among them). */
    public List<Session> ofUser(String username) {
        requireNonNull(username, "username is null");
        return sessions.values().stream().filter(session -> session.username().equals(username)).toList();
    }

    /** Closes a session; its token can no longer be used. */
    public void close(String sessionId) {
        close(sessionId, true);
    }

    /** Closes a session whose token nobody holds (a request authenticated with Basic credentials). */
    public void discard(String sessionId) {
        close(sessionId, false);
    }

    private void close(String sessionId, boolean refuseToken) {
        Session session = sessions.remove(sessionId);
        if (session != null) {
            if (refuseToken) {
                // Remembered until the token expires; after that the token is refused anyway.
                closedIds.put(sessionId, session.tokenExpiresAt());
            }
            session.close();
            LOG.debug("session closed user={} open_sessions={}", session.username(), sessions.size());
        }
    }

    /** How many sessions have a statement executing in DuckDB now. */
    public long runningStatements() {
        return sessions.values().stream().filter(Session::isRunning).count();
    }

    /** The open sessions now. */
    List<Session> openSessions() {
        return List.copyOf(sessions.values());
    }

    public int size() {
        return sessions.size();
    }

    private void reapIdle() {
        Duration period = idleTimeout.dividedBy(4).compareTo(Duration.ofSeconds(1)) < 0 ? Duration.ofSeconds(1) : idleTimeout.dividedBy(4);
        while (!Thread.currentThread().isInterrupted()) {
            try {
                Thread.sleep(period);
            } catch (InterruptedException e) {
                return;
            }
            closeIdle();
        }
    }

    /**
     * Reclaims every session idle longer than the idle timeout (its token gets a fresh session on its next call), and
     * forgets closed ids whose tokens expired.
     */
    void closeIdle() {
        Instant cutoff = clock.instant().minus(idleTimeout);
        for (Session session : List.copyOf(sessions.values())) {
            if (session.lastUsed().isBefore(cutoff) && !session.isRunning()) {
                LOG.info("reclaiming idle session user={} idle_minutes={}", session.username(), idleTimeout.toMinutes());
                close(session.id(), false);
            }
        }
        Instant now = clock.instant();
        closedIds.values().removeIf(expiry -> expiry.isBefore(now));
    }

    @Override
    public void close() {
        reaper.interrupt();
        timer.shutdownNow();
        for (String id : List.copyOf(sessions.keySet())) {
            close(id);
        }
        views.close();
    }
}
