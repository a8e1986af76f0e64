// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.datasets;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.engine.Engine;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.core.http.HttpEndpoints;
import dev.mallard.core.metrics.MetricsRegistry;
import dev.mallard.core.sql.SqlScript;
import io.helidon.http.HeaderNames;
import io.helidon.webserver.http.HttpRouting;
import java.io.OutputStream;
import java.nio.file.Path;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code mallard serve}: one embedded DuckDB database prepared by a serve configuration's commands, its datasets
 * answered over HTTP ({@code /v1/datasets}, {@code /health}, and {@code /metrics} unless {@code serve.metrics}
 * turns it off). Closing stops the listener, then the datasets' connections, then the database.
 */
public final class DatasetServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DatasetServer.class);

    private final Engine engine;
    private final MetricsRegistry metrics;
    private final ServedDatasets datasets;
    private final HttpEndpoints http;

    private DatasetServer(Engine engine, MetricsRegistry metrics, ServedDatasets datasets, HttpEndpoints http) {
        this.engine = engine;
        this.metrics = metrics;
        this.datasets = datasets;
        this.http = http;
    }

    /** @param base the directory a relative {@code serve.database} is resolved against */
    public static DatasetServer start(ServeConfig config, Path base) {
        requireNonNull(config, "config is null");
        requireNonNull(base, "base is null");
        ServeConfig.Settings settings = config.serve();
        Engine engine = settings.database().map(name -> Engine.onFile(base.resolve(name), settings.storageCompatibility())).orElseGet(Engine::inMemory);
        MetricsRegistry metrics = new MetricsRegistry();
        ServedDatasets datasets = null;
        try {
            runCommands(engine, config);
            datasets = new ServedDatasets(settings, engine::newSession, ServedDatasets.clients(settings.clients()), metrics, Clock.systemUTC());
            ServedDatasets served = datasets;
            HttpEndpoints http = HttpEndpoints.start(settings.host(), settings.port(), routes -> routes(routes, served, metrics, settings.metrics()));
            LOG.info("serve started http_port={} datasets={} clients={} database={}", http.port(), settings.datasets().size(),
                    settings.clients().size(), settings.database().orElse(":memory:"));
            return new DatasetServer(engine, metrics, datasets, http);
        } catch (RuntimeException e) {
            if (datasets != null) {
                datasets.close();
            }
            metrics.close();
            engine.close();
            throw e;
        }
    }

    private static void routes(HttpRouting.Builder routes, ServedDatasets datasets, MetricsRegistry metrics, boolean withMetrics) {
        routes.get("/health", (request, response) -> response.header(HeaderNames.CONTENT_TYPE, "application/json").send("{\"status\":\"ok\"}"));
        if (withMetrics) {
            routes.get("/metrics", (request, response) -> {
                response.header(HeaderNames.CONTENT_TYPE, MetricsRegistry.CONTENT_TYPE);
                try (OutputStream out = response.outputStream()) {
                    metrics.scrape(out);
                }
            });
        }
        datasets.routes(routes);
    }

    private static void runCommands(Engine engine, ServeConfig config) {
        try (Statement statement = engine.connection().createStatement()) {
            for (ServeConfig.Command command : config.commands()) {
                for (SqlScript.Statement sql : SqlScript.split(command.sql())) {
                    try {
                        statement.execute(sql.sql());
                    } catch (SQLException e) {
                        throw new MallardException(ErrorCode.USER_SQL_INVALID, "command '" + command.name() + "' line " + sql.line() + ": " + e.getMessage(), e);
                    }
                }
                LOG.info("command ran name={}", command.name());
            }
        } catch (SQLException e) {
            throw new MallardException(ErrorCode.SYSTEM_ENGINE_FAILED, "cannot run the commands: " + e.getMessage(), e);
        }
    }

    public int port() {
        return http.port();
    }

    /** A new connection to the served database (tests, benchmarks). */
    public java.sql.Connection connection() {
        return engine.newSession();
    }

    @Override
    public void close() {
        try (engine; metrics; datasets; http) {
            LOG.info("serve stopping");
        }
    }
}
