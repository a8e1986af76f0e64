package dev.mallard.cli;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.server.MallardServer;
import dev.mallard.server.config.ServerConfig;
import dev.mallard.server.config.ServerConfigReader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "server", description = {
    "Serve one DuckDB database over Arrow Flight SQL (port 59307) and HTTP (port 8081), with JWT login.",
    "HTTP routes: /health, /v1/login, /v1/query, /v1/cancel. Clients log in with a user's password and get a JWT;",
    "every call needs it.",
    "SIGTERM or SIGINT stops the listeners, closes the sessions and the database, and exits 0."})
final class ServerCommand implements Callable<Integer> {
    private static final Logger LOG = LoggerFactory.getLogger(ServerCommand.class);

    @Option(names = {"-c", "--config"}, paramLabel = "<server.yml>", description = "The server configuration (see docs/server.md).")
    Path config;

    @Option(names = "--conf", paramLabel = "key=value",
            description = "Set or override one key, repeatable: --conf http.port=8081 --conf users.0.username=ada --conf users.0.password=...")
    List<String> overrides = new ArrayList<>();

    @Override
    public Integer call() throws InterruptedException {
        ServerConfig settings = new ServerConfigReader(ConfigEnvironment.fromSystem()).read(Optional.ofNullable(config), overrides);
        MallardServer server = MallardServer.start(settings);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            LOG.info("stop requested: closing listeners, sessions and the database");
            try {
                server.close();
            } finally {
                stopped.countDown();
                System.err.flush();
                // halt: exit() from a shutdown hook would wait for this very hook.
                Runtime.getRuntime().halt(0);
            }
        }, "server-stop"));
        stopped.await();
        return 0;
    }
}
