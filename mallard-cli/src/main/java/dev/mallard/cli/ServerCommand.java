// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.core.error.ExitCode;
import dev.mallard.hub.Hub;
import dev.mallard.server.MallardServer;
import dev.mallard.server.config.ServerConfig;
import dev.mallard.server.config.ServerConfigReader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "server", description = {
    "Serve one DuckDB database over Arrow Flight SQL (port 59307) and HTTP (port 8081), with JWT login.",
    "HTTP routes: /health, /v1/login, /v1/query, /v1/cancel, /v1/pipelines. Clients log in with a user's password and get a JWT;",
    "every call needs it. With --pipeline (or pipelines: in the configuration) the server runs those pipelines on its",
    "database, as the hub (docs/hub.md).",
    "SIGTERM or SIGINT drains every pipeline (each within its drain_deadline_seconds), stops the listeners, closes the",
    "sessions and the database, and exits 0 (15 when a pipeline did not drain in time)."})
final class ServerCommand implements Callable<Integer> {
    private static final Logger LOG = LoggerFactory.getLogger(ServerCommand.class);

    @Option(names = {"-c", "--config"}, paramLabel = "<server.yml>", description = "The server configuration (see docs/server.md).")
    Path config;

    @Option(names = "--conf", paramLabel = "key=value",
            description = "Set or override one key, repeatable: --conf http.port=8081 --conf users.0.username=ada --conf users.0.password=...")
    List<String> overrides = new ArrayList<>();

    @Option(names = "--pipeline", paramLabel = "<pipeline.yml>",
            description = "Run this pipeline inside the server, on its database (repeatable; after the configuration's pipelines).")
    List<Path> pipelines = new ArrayList<>();

    @Override
    public Integer call() throws InterruptedException {
        ServerConfig settings = new ServerConfigReader(ConfigEnvironment.fromSystem()).read(Optional.ofNullable(config), overrides);
        return serve(settings.withHosted(settings.hosted().withPipelines(pipelines)));
    }

    /** Runs the server with the hub until SIGTERM or SIGINT, then drains the pipelines and stops; never returns normally. */
    static int serve(ServerConfig settings) throws InterruptedException {
        AtomicReference<Hub> hub = new AtomicReference<>();
        MallardServer server = MallardServer.start(settings, context -> {
            Hub started = Hub.start(context);
            hub.set(started);
            return started;
        });
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            LOG.info("stop requested: draining pipelines, then closing listeners, sessions and the database");
            int exit = ExitCode.OK.code();
            try {
                server.close();
                if (hub.get() != null && !hub.get().drainedInTime()) {
                    exit = ExitCode.INCOMPLETE_DRAIN.code();
                }
            } finally {
                stopped.countDown();
                System.err.flush();
                // halt: exit() from a shutdown hook would wait for this very hook.
                Runtime.getRuntime().halt(exit);
            }
        }, "server-stop"));
        stopped.await();
        return 0;
    }
}
