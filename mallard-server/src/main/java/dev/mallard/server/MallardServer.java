// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.engine.Engine;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.sql.SqlScript;
import dev.mallard.server.auth.SigningSecret;
import dev.mallard.server.auth.TokenService;
import dev.mallard.server.auth.UserDirectory;
import dev.mallard.server.config.ServerConfig;
import dev.mallard.server.flight.FlightSqlEndpoint;
import dev.mallard.server.flight.MallardFlightSqlProducer;
import dev.mallard.server.hosted.HostContext;
import dev.mallard.server.hosted.Hosted;
import dev.mallard.server.http.HttpApi;
import dev.mallard.server.ingest.Ingestion;
import dev.mallard.server.http.ServerHealth;
import dev.mallard.server.ops.ServerMetrics;
import dev.mallard.server.ops.StatementAudit;
import dev.mallard.core.metrics.MetricsRegistry;
import dev.mallard.server.session.SessionRegistry;
import dev.mallard.server.rls.ClaimPolicy;
import dev.mallard.server.rls.FileLockdown;
import dev.mallard.server.sql.AccessPolicy;
import dev.mallard.server.views.ServedViews;
import dev.mallard.server.tls.TlsFiles;
import dev.mallard.views.ViewSql;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running Mallard server: one DuckDB database, the startup script run on it, and two listeners over the same
 * sessions and tokens, Flight SQL (gRPC) and the HTTP API. Closing stops the listeners, then the sessions, then
 * the database.
 */
public final class MallardServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(MallardServer.class);

    private final Engine engine;
    private final SessionRegistry sessions;
    private final FlightSqlEndpoint flight;
    private final HttpApi http;
    private final UserDirectory users;

    private final ServerMetrics metrics;
    private final Hosted hosted;

    /** The datasets of the {@code serve:} block and the named queries, when configured (docs/datasets.md). */
    private record NamedData(Optional<dev.mallard.server.datasets.ServedDatasets> datasets,
            Optional<dev.mallard.server.namedquery.NamedQueries> namedQueries) implements AutoCloseable {
        void routes(io.helidon.webserver.http.HttpRouting.Builder routes) {
            datasets.ifPresent(served -> served.routes(routes));
            namedQueries.ifPresent(named -> named.routes(routes));
        }

        @Override
        public void close() {
            try {
                datasets.ifPresent(dev.mallard.server.datasets.ServedDatasets::close);
            } finally {
                namedQueries.ifPresent(dev.mallard.server.namedquery.NamedQueries::close);
            }
        }
    }

    private final NamedData namedData;
    private final Ingestion ingestion;

    private MallardServer(Engine engine, SessionRegistry sessions, FlightSqlEndpoint flight, HttpApi http, UserDirectory users, ServerMetrics metrics,
            Hosted hosted, NamedData namedData, Ingestion ingestion) {
        this.ingestion = ingestion;
        this.hosted = hosted;
        this.namedData = namedData;
        this.users = users;
        this.metrics = metrics;
        this.engine = engine;
        this.sessions = sessions;
        this.flight = flight;
        this.http = http;
    }

    public static MallardServer start(ServerConfig config) {
        return start(config, Hosted.Factory.NONE);
    }

    /** A server that also runs what {@code hosting} starts (the hub's pipelines) on its database. */
    public static MallardServer start(ServerConfig config, Hosted.Factory hosting) {
        requireNonNull(config, "config is null");
        requireNonNull(hosting, "hosting is null");
        if (hosting == Hosted.Factory.NONE && !config.hosted().pipelines().isEmpty()) {
            throw new MallardException(ErrorCode.USER_CONFIG_UNSUPPORTED, "pipelines are run by the hub: start the server with mallard server,"
                    + " or embed it with dev.mallard.hub.Hub::start as its hosting");
        }
        try {
            Files.createDirectories(config.warehouse());
        } catch (IOException e) {
            throw new MallardException(ErrorCode.SYSTEM_IO_FAILED, "cannot create the warehouse directory " + config.warehouse() + ": " + e.getMessage(), e);
        }
        byte[] secret = SigningSecret.resolve(config.secretKey(), config.warehouse(), config.tokenAlgorithm());
        UserDirectory users = new UserDirectory(config.users(), config.loginLimits(), Clock.systemUTC());
        TokenService tokens = new TokenService(secret, config.tokenAlgorithm(), Duration.ofMinutes(config.tokenExpiryMinutes()), Clock.systemUTC(), users,
                config.plan().loginUrl().map(dev.mallard.server.auth.LoginDelegate::new));
        AccessPolicy policy = new AccessPolicy(config.accessMode(), config.fileAccess());
        Optional<SSLContext> httpsContext = config.tls().map(TlsFiles::sslContext);
        Engine engine = config.database().map(file -> Engine.onFile(file, config.storageCompatibility())).orElseGet(Engine::inMemory);
        SessionRegistry sessions = null;
        FlightSqlEndpoint flight = null;
        ServerMetrics metrics = null;
        Hosted hosted = null;
        NamedData namedData = null;
        Ingestion ingestion = null;
        try {
            // Startup scripts speak the clients' SQL, views included (CREATE MATERIALIZED VIEW, dbsp_* calls).
            ServedViews views = ServedViews.open(engine::newSession);
            config.startupScript().ifPresent(script -> runStartupScript(engine, views, script));
            config.startupSql().ifPresent(sql -> runStartupSql(engine, views, sql, "startup_script_provider"));
            // After the startup scripts, which may read files anywhere; from here on DuckDB itself refuses the rest.
            ClaimPolicy claims = new ClaimPolicy(config.accessMode(), config.users());
            ingestion = Ingestion.open(config.ingestion(), config.warehouse(), engine::newSession, engine.allocator(), tokens, config.users(),
                    config.accessMode(), Clock.systemUTC());
            if (config.accessMode().rowLevelSecurity()) {
                List<String> allowed = new java.util.ArrayList<>(claims.grantedPaths());
                if (!config.ingestion().queues().isEmpty() || config.ingestion().anyQueuePath().isPresent()) {
                    allowed.addAll(ingestion.directories());
                }
                FileLockdown.apply(engine.connection(), allowed);
            } else {
                config.fileAccess().apply(engine.connection(), config.warehouse());
            }
            ingestion.bindViews(views::afterWrite);
            sessions = new SessionRegistry(engine, views, config.sessionLimits(), config.streamResults(),
                    Clock.systemUTC(), claims);
            SessionRegistry open = sessions;
            MetricsRegistry registry = new MetricsRegistry();
            metrics = new ServerMetrics(registry, open::size);
            hosted = hosting.start(new HostContext(engine, registry, config.hosted(), config.accessMode(), tokens));
            StatementAudit audit = new StatementAudit(metrics);
            ingestion.bindMetrics(metrics.meters());
            dev.mallard.server.plan.SplitPlanner planner = new dev.mallard.server.plan.SplitPlanner(secret, "mallard");
            MallardFlightSqlProducer producer = new MallardFlightSqlProducer(sessions, policy, engine.allocator(), version(),
                    config.fetchSize(), config.queryTimeoutSeconds(), audit, planner, config.plan().dataProcessorLocations(),
                    Optional.of(ingestion));
            flight = FlightSqlEndpoint.start(config.host(), config.flightPort(), config.tls(), producer, users, tokens, sessions, engine.allocator(), metrics);
            ingestion.serveOtlp(config.host());
            Optional<dev.mallard.server.datasets.ServedDatasets> datasets = config.namedData().serve().map(serve ->
                    dev.mallard.server.datasets.ServedDatasets.inServer(serve, engine::newSession, tokens, open, policy, registry));
            Optional<dev.mallard.server.namedquery.NamedQueries> namedQueries = config.namedData().namedQueryTable().map(table ->
                    new dev.mallard.server.namedquery.NamedQueries(table, engine::newSession, tokens, open, policy, config.fetchSize(), config.queryTimeoutSeconds()));
            namedData = new NamedData(datasets, namedQueries);
            HttpApi http = HttpApi.start(config.host(), config.httpPort(), users, tokens, sessions, policy, config.fetchSize(),
                    config.queryTimeoutSeconds(), config.httpMaxBodyBytes(), httpsContext, config.allowOrigins(),
                    ServerHealth.of(engine, Clock.systemUTC(), hosted), metrics, planner, hosted, Optional.of(ingestion),
                    namedData::routes, config.httpConnections());
            LOG.info("server started flight_port={} http_port={} tls={} access_mode={} file_access={} database={} users={}", flight.port(), http.port(),
                    config.tls().isPresent(), config.accessMode(), config.fileAccess().name().toLowerCase(java.util.Locale.ROOT), config.database().map(Path::toString).orElse(":memory:"), config.users().size());
            return new MallardServer(engine, sessions, flight, http, users, metrics, hosted, namedData, ingestion);
        } catch (RuntimeException e) {
            if (namedData != null) {
                namedData.close();
            }
            if (hosted != null) {
                hosted.close();
            }
            users.close();
            if (flight != null) {
                flight.close();
            }
            if (sessions != null) {
                sessions.close();
            }
            if (ingestion != null) {
                ingestion.close();
            }
            if (metrics != null) {
                metrics.close();
            }
            engine.close();
            throw e;
        }
    }

    private static void runStartupScript(Engine engine, ServedViews views, Path script) {
        String text;
        try {
            text = Files.readString(script);
        } catch (IOException e) {
            throw new MallardException(ErrorCode.USER_CONFIG_NOT_FOUND, "cannot read startup_script " + script + ": " + e.getMessage(), e);
        }
        runStartupSql(engine, views, text, "startup_script " + script);
        LOG.info("startup script ran file={}", script);
    }

    /**
     * Runs a startup script's statements in order; a view statement or a {@code dbsp_*} call goes through the views'
     * front door, as a client's would, and the rest straight to DuckDB. {@code where} names the script in errors.
     */
    private static void runStartupSql(Engine engine, ServedViews views, String text, String where) {
        ServedViews.FrontDoor door = null;
        try (Statement statement = engine.connection().createStatement()) {
            for (SqlScript.Statement sql : SqlScript.split(text)) {
                String at = where + " line " + sql.line() + ": ";
                if (ViewSql.recognizes(sql.sql())) {
                    door = door != null ? door : views.frontDoor(engine.connection());
                    try (ViewSql.Result ignored = door.execute(sql.sql())) {
                        // A startup statement's rows are not read.
                    } catch (MallardException e) {
                        throw new MallardException(e.errorCode(), at + e.getMessage(), e);
                    }
                    continue;
                }
                try {
                    statement.execute(sql.sql());
                } catch (SQLException e) {
                    throw new MallardException(ErrorCode.USER_SQL_INVALID, at + e.getMessage(), e);
                }
            }
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot run " + where + ": " + e.getMessage(), e);
        } finally {
            if (door != null) {
                door.close();
            }
        }
        if (door != null) {
            views.afterWrite();
        }
    }

    static String version() {
        String version = MallardServer.class.getPackage().getImplementationVersion();
        return version == null ? "dev" : version;
    }

    public int flightPort() {
        return flight.port();
    }

    public int httpPort() {
        return http.port();
    }

    /** The OTLP receiver's gRPC port, when ingestion.otlp configures one. */
    public java.util.OptionalInt otlpPort() {
        return ingestion.otlpPort();
    }

    /** A new connection to the served database, outside any client session (benchmarks, tests). */
    public java.sql.Connection engineSession() {
        return engine.newSession();
    }

    /** The configured users, with the count of failed logins. */
    public UserDirectory users() {
        return users;
    }

    public SessionRegistry sessions() {
        return sessions;
    }

    @Override
    public void close() {
        // The hosted work drains first, while the listeners still answer; then they stop (no new batches), then ingestion, before
        // the engine its writers use, then the sessions and the database.
        try (engine; metrics; sessions; users; ingestion; namedData; flight; http; hosted) {
            LOG.info("server stopping");
        }
    }
}
