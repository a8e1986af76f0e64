// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.config;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.engine.StorageCompatibility;
import dev.mallard.server.tls.TlsFiles;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * A server's settings, checked when read (see {@link ServerConfigReader}).
 *
 * @param database the database file, or empty for an in-memory database
 * @param secretKey the configured signing secret; empty means generated and kept beside the warehouse, where SQL cannot read it
 * @param fileAccess which files SQL may read and write ({@code file_access})
 * @param loginLimits failed logins allowed per user and address within a window
 * @param tokenAlgorithm how tokens are signed ({@code jwt_token.algorithm}), and so how {@code secret_key} is read
 * @param allowOrigins the origins a browser may call the HTTP API from ({@code http.allow-origin}); empty for none
 * @param startupSql startup SQL given inline (DazzleDuck's {@code startup_script_provider}), run after {@code startup_script}
 * @param namedData the {@code serve:} block's datasets and the {@code named_query_table} (docs/datasets.md)
 * @param plan the data processor locations split plans name and the delegated login service
 * @param ingestion the ingestion queues ({@code ingestion:}, docs/ingestion.md)
 * @param httpConnections the HTTP listener's timeouts and caps ({@code http.header_timeout_seconds}, {@code http.max_connections}, ...)
 * @param storageCompatibility the oldest DuckDB release that must open the database file when it is created ({@code storage_compatibility})
 */
public record ServerConfig(
        Path warehouse,
        Optional<Path> database,
        String host,
        int httpPort,
        long httpMaxBodyBytes,
        int flightPort,
        Optional<TlsFiles> tls,
        List<UserAccount> users,
        AccessMode accessMode,
        Optional<String> secretKey,
        int tokenExpiryMinutes,
        SessionLimits sessionLimits,
        int fetchSize,
        int queryTimeoutSeconds,
        Optional<Path> startupScript,
        boolean streamResults,
        dev.mallard.server.sql.FileAccess fileAccess,
        LoginLimits loginLimits,
        dev.mallard.server.auth.TokenAlgorithm tokenAlgorithm,
        List<String> allowOrigins,
        Optional<String> startupSql,
        dev.mallard.server.hosted.HostedConfig hosted,
        dev.mallard.server.datasets.NamedDataConfig namedData,
        dev.mallard.server.plan.PlanConfig plan,
        dev.mallard.server.ingest.IngestionConfig ingestion,
        dev.mallard.core.http.HttpEndpoints.ConnectionLimits httpConnections,
        StorageCompatibility storageCompatibility) {
    public static final String DEFAULT_WAREHOUSE = "warehouse";
    public static final String DEFAULT_HOST = "0.0.0.0";
    public static final int DEFAULT_HTTP_PORT = 8081;
    public static final long DEFAULT_HTTP_MAX_BODY_BYTES = 16L << 20;
    public static final int DEFAULT_FLIGHT_PORT = 59307;
    public static final int DEFAULT_TOKEN_EXPIRY_MINUTES = 720;
    /** DazzleDuck's default rows per Arrow batch. */
    public static final int DEFAULT_FETCH_SIZE = 10_000;
    public static final boolean DEFAULT_STREAM_RESULTS = true;

    /** A configuration with the default {@code file_access}, login limits and token algorithm, no CORS origins and no inline startup SQL. */
    public ServerConfig(Path warehouse, Optional<Path> database, String host, int httpPort, long httpMaxBodyBytes, int flightPort,
            Optional<TlsFiles> tls, List<UserAccount> users, AccessMode accessMode, Optional<String> secretKey, int tokenExpiryMinutes,
            SessionLimits sessionLimits, int fetchSize, int queryTimeoutSeconds, Optional<Path> startupScript, boolean streamResults) {
        this(warehouse, database, host, httpPort, httpMaxBodyBytes, flightPort, tls, users, accessMode, secretKey, tokenExpiryMinutes,
                sessionLimits, fetchSize, queryTimeoutSeconds, startupScript, streamResults, dev.mallard.server.sql.FileAccess.DEFAULT,
                LoginLimits.DEFAULT, dev.mallard.server.auth.TokenAlgorithm.DEFAULT, List.of(), Optional.empty());
    }

    /** A configuration that hosts nothing ({@link dev.mallard.server.hosted.HostedConfig#NONE}), with no named data, split locations or ingestion queues. */
    public ServerConfig(Path warehouse, Optional<Path> database, String host, int httpPort, long httpMaxBodyBytes, int flightPort,
            Optional<TlsFiles> tls, List<UserAccount> users, AccessMode accessMode, Optional<String> secretKey, int tokenExpiryMinutes,
            SessionLimits sessionLimits, int fetchSize, int queryTimeoutSeconds, Optional<Path> startupScript, boolean streamResults,
            dev.mallard.server.sql.FileAccess fileAccess, LoginLimits loginLimits, dev.mallard.server.auth.TokenAlgorithm tokenAlgorithm,
            List<String> allowOrigins, Optional<String> startupSql) {
        this(warehouse, database, host, httpPort, httpMaxBodyBytes, flightPort, tls, users, accessMode, secretKey, tokenExpiryMinutes,
                sessionLimits, fetchSize, queryTimeoutSeconds, startupScript, streamResults, fileAccess, loginLimits, tokenAlgorithm, allowOrigins,
                startupSql, dev.mallard.server.hosted.HostedConfig.NONE, dev.mallard.server.datasets.NamedDataConfig.NONE,
                dev.mallard.server.plan.PlanConfig.DEFAULT, dev.mallard.server.ingest.IngestionConfig.NONE,
                dev.mallard.core.http.HttpEndpoints.ConnectionLimits.DEFAULT, StorageCompatibility.DEFAULT);
    }

    /** This configuration creating its database file for {@code storageCompatibility} ({@code storage_compatibility}). */
    public ServerConfig withStorageCompatibility(StorageCompatibility storageCompatibility) {
        return new ServerConfig(warehouse, database, host, httpPort, httpMaxBodyBytes, flightPort, tls, users, accessMode, secretKey,
                tokenExpiryMinutes, sessionLimits, fetchSize, queryTimeoutSeconds, startupScript, streamResults, fileAccess, loginLimits, tokenAlgorithm, allowOrigins, startupSql, hosted, namedData, plan, ingestion, httpConnections, storageCompatibility);
    }

    /** This configuration hosting {@code hosted} (the hub's {@code pipelines}). */
    public ServerConfig withHosted(dev.mallard.server.hosted.HostedConfig hosted) {
        return new ServerConfig(warehouse, database, host, httpPort, httpMaxBodyBytes, flightPort, tls, users, accessMode, secretKey,
                tokenExpiryMinutes, sessionLimits, fetchSize, queryTimeoutSeconds, startupScript, streamResults, fileAccess, loginLimits, tokenAlgorithm, allowOrigins, startupSql, hosted, namedData, plan, ingestion, httpConnections, storageCompatibility);
    }

    /** A configuration with the default {@code stream_results}. */
    public ServerConfig(Path warehouse, Optional<Path> database, String host, int httpPort, long httpMaxBodyBytes, int flightPort,
            Optional<TlsFiles> tls, List<UserAccount> users, AccessMode accessMode, Optional<String> secretKey, int tokenExpiryMinutes,
            SessionLimits sessionLimits, int fetchSize, int queryTimeoutSeconds, Optional<Path> startupScript) {
        this(warehouse, database, host, httpPort, httpMaxBodyBytes, flightPort, tls, users, accessMode, secretKey, tokenExpiryMinutes,
                sessionLimits, fetchSize, queryTimeoutSeconds, startupScript, DEFAULT_STREAM_RESULTS);
    }

    /**
     * How long an unused session lives, how many may be open in total and per user, and how many prepared statements
     * one session holds at most (past it the least recently used one not in use is closed).
     */
    public record SessionLimits(int idleMinutes, int maxSessions, int maxSessionsPerUser, int maxPreparedStatements) {
        public static final SessionLimits DEFAULT = new SessionLimits(30, 512, 128, 256);

        public SessionLimits {
            if (idleMinutes <= 0 || maxSessions <= 0 || maxSessionsPerUser <= 0 || maxPreparedStatements <= 0) {
                throw new IllegalArgumentException("session limits must be positive");
            }
        }
    }

    /**
     * How many failed logins one user may have from one address within a window before further attempts are answered
     * {@code user.auth.throttled} (HTTP 429 with Retry-After) until the window has passed.
     */
    public record LoginLimits(int maxFailures, int windowSeconds) {
        public static final LoginLimits DEFAULT = new LoginLimits(10, 300);

        public LoginLimits {
            if (maxFailures <= 0 || windowSeconds <= 0) {
                throw new IllegalArgumentException("login limits must be positive");
            }
        }
    }

    /** This configuration with other data processor locations and login service ({@code dev.mallard.server.plan}). */
    public ServerConfig withPlan(dev.mallard.server.plan.PlanConfig plan) {
        return new ServerConfig(warehouse, database, host, httpPort, httpMaxBodyBytes, flightPort, tls, users, accessMode, secretKey,
                tokenExpiryMinutes, sessionLimits, fetchSize, queryTimeoutSeconds, startupScript, streamResults, fileAccess, loginLimits, tokenAlgorithm, allowOrigins, startupSql, hosted, namedData, plan, ingestion, httpConnections, storageCompatibility);
    }

    /** This configuration with other ingestion queues ({@code ingestion:}). */
    public ServerConfig withIngestion(dev.mallard.server.ingest.IngestionConfig ingestion) {
        return new ServerConfig(warehouse, database, host, httpPort, httpMaxBodyBytes, flightPort, tls, users, accessMode, secretKey,
                tokenExpiryMinutes, sessionLimits, fetchSize, queryTimeoutSeconds, startupScript, streamResults, fileAccess, loginLimits, tokenAlgorithm, allowOrigins, startupSql, hosted, namedData, plan, ingestion, httpConnections, storageCompatibility);
    }

    /** This configuration with other named data. */
    public ServerConfig withNamedData(dev.mallard.server.datasets.NamedDataConfig namedData) {
        return new ServerConfig(warehouse, database, host, httpPort, httpMaxBodyBytes, flightPort, tls, users, accessMode, secretKey,
                tokenExpiryMinutes, sessionLimits, fetchSize, queryTimeoutSeconds, startupScript, streamResults, fileAccess, loginLimits, tokenAlgorithm, allowOrigins, startupSql, hosted, namedData, plan, ingestion, httpConnections, storageCompatibility);
    }

    /** The same configuration with other file access, login limits and token algorithm. */
    public ServerConfig withSecurity(dev.mallard.server.sql.FileAccess fileAccess, LoginLimits loginLimits,
            dev.mallard.server.auth.TokenAlgorithm tokenAlgorithm) {
        return new ServerConfig(warehouse, database, host, httpPort, httpMaxBodyBytes, flightPort, tls, users, accessMode, secretKey,
                tokenExpiryMinutes, sessionLimits, fetchSize, queryTimeoutSeconds, startupScript, streamResults, fileAccess, loginLimits, tokenAlgorithm, allowOrigins, startupSql, hosted, namedData, plan, ingestion, httpConnections, storageCompatibility);
    }

    /** The same configuration with another signing secret. */
    public ServerConfig withSecretKey(Optional<String> secretKey) {
        return new ServerConfig(warehouse, database, host, httpPort, httpMaxBodyBytes, flightPort, tls, users, accessMode, secretKey,
                tokenExpiryMinutes, sessionLimits, fetchSize, queryTimeoutSeconds, startupScript, streamResults, fileAccess, loginLimits, tokenAlgorithm, allowOrigins, startupSql, hosted, namedData, plan, ingestion, httpConnections, storageCompatibility);
    }

    /** This configuration with other {@code http.allow-origin} origins. */
    public ServerConfig withAllowOrigins(List<String> allowOrigins) {
        return new ServerConfig(warehouse, database, host, httpPort, httpMaxBodyBytes, flightPort, tls, users, accessMode, secretKey,
                tokenExpiryMinutes, sessionLimits, fetchSize, queryTimeoutSeconds, startupScript, streamResults, fileAccess, loginLimits, tokenAlgorithm, allowOrigins, startupSql, hosted, namedData, plan, ingestion, httpConnections, storageCompatibility);
    }

    /** This configuration with another access mode. */
    public ServerConfig withAccessMode(AccessMode accessMode) {
        return new ServerConfig(warehouse, database, host, httpPort, httpMaxBodyBytes, flightPort, tls, users, accessMode, secretKey,
                tokenExpiryMinutes, sessionLimits, fetchSize, queryTimeoutSeconds, startupScript, streamResults, fileAccess, loginLimits, tokenAlgorithm, allowOrigins, startupSql, hosted, namedData, plan, ingestion, httpConnections, storageCompatibility);
    }

    /** This configuration with another {@code query_timeout_seconds}. */
    public ServerConfig withQueryTimeoutSeconds(int queryTimeoutSeconds) {
        return new ServerConfig(warehouse, database, host, httpPort, httpMaxBodyBytes, flightPort, tls, users, accessMode, secretKey,
                tokenExpiryMinutes, sessionLimits, fetchSize, queryTimeoutSeconds, startupScript, streamResults, fileAccess, loginLimits, tokenAlgorithm, allowOrigins, startupSql, hosted, namedData, plan, ingestion, httpConnections, storageCompatibility);
    }

    /** This configuration with startup SQL given inline (DazzleDuck's {@code startup_script_provider}), run after {@code startup_script}. */
    public ServerConfig withStartupSql(Optional<String> startupSql) {
        return new ServerConfig(warehouse, database, host, httpPort, httpMaxBodyBytes, flightPort, tls, users, accessMode, secretKey,
                tokenExpiryMinutes, sessionLimits, fetchSize, queryTimeoutSeconds, startupScript, streamResults, fileAccess, loginLimits, tokenAlgorithm, allowOrigins, startupSql, hosted, namedData, plan, ingestion, httpConnections, storageCompatibility);
    }

    /** This configuration with other HTTP connection limits ({@code http.header_timeout_seconds}, {@code http.max_connections}, ...). */
    public ServerConfig withHttpConnections(dev.mallard.core.http.HttpEndpoints.ConnectionLimits httpConnections) {
        return new ServerConfig(warehouse, database, host, httpPort, httpMaxBodyBytes, flightPort, tls, users, accessMode, secretKey,
                tokenExpiryMinutes, sessionLimits, fetchSize, queryTimeoutSeconds, startupScript, streamResults, fileAccess, loginLimits, tokenAlgorithm, allowOrigins, startupSql, hosted, namedData, plan, ingestion, httpConnections, storageCompatibility);
    }

    public ServerConfig {
        requireNonNull(httpConnections, "httpConnections is null");
        requireNonNull(plan, "plan is null");
        requireNonNull(ingestion, "ingestion is null");
        requireNonNull(warehouse, "warehouse is null");
        requireNonNull(database, "database is null");
        requireNonNull(host, "host is null");
        users = List.copyOf(users);
        requireNonNull(accessMode, "accessMode is null");
        requireNonNull(secretKey, "secretKey is null");
        requireNonNull(startupScript, "startupScript is null");
        requireNonNull(tls, "tls is null");
        requireNonNull(sessionLimits, "sessionLimits is null");
        requireNonNull(fileAccess, "fileAccess is null");
        requireNonNull(loginLimits, "loginLimits is null");
        requireNonNull(tokenAlgorithm, "tokenAlgorithm is null");
        allowOrigins = List.copyOf(allowOrigins);
        requireNonNull(startupSql, "startupSql is null");
        requireNonNull(hosted, "hosted is null");
        requireNonNull(namedData, "namedData is null");
        if (httpMaxBodyBytes <= 0 || tokenExpiryMinutes <= 0 || fetchSize <= 0 || queryTimeoutSeconds < 0) {
            throw new IllegalArgumentException("tokenExpiryMinutes and fetchSize must be positive, queryTimeoutSeconds not negative");
        }
    }

    @Override
    public String toString() {
        // The secret and the password hashes stay out of logs.
        return "ServerConfig[warehouse=" + warehouse + ", database=" + database.map(Path::toString).orElse(":memory:")
                + ", host=" + host + ", httpPort=" + httpPort + ", httpMaxBodyBytes=" + httpMaxBodyBytes + ", flightPort=" + flightPort + ", tls=" + tls.map(TlsFiles::certFile).map(Path::toString).orElse("off") + ", users="
                + users.stream().map(UserAccount::username).toList() + ", accessMode=" + accessMode + ", secretKey="
                + (secretKey.isPresent() ? "***" : "generated") + ", tokenExpiryMinutes=" + tokenExpiryMinutes
                + ", sessionLimits=" + sessionLimits + ", fetchSize=" + fetchSize + ", queryTimeoutSeconds=" + queryTimeoutSeconds + ", startupScript=" + startupScript.map(Path::toString).orElse("none") + ", streamResults=" + streamResults + ", fileAccess=" + fileAccess + ", loginLimits=" + loginLimits + ", tokenAlgorithm=" + tokenAlgorithm
                + ", allowOrigins=" + allowOrigins + ", startupSql=" + (startupSql.isPresent() ? "inline" : "none") + ", hosted=" + hosted + "]";
    }
}
