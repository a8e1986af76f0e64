// SPDX-License-Identifier: Apache-2.0
package dev.mallard.cli;

import dev.mallard.core.config.ConfigEnvironment;
import dev.mallard.server.datasets.DatasetServer;
import dev.mallard.server.datasets.ServeConfig;
import dev.mallard.server.datasets.ServeConfigReader;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;

@Command(name = "serve", description = {
    "Answer a serve configuration's named datasets over HTTP (SQLFlow's serve; docs/datasets.md).",
    "Runs its commands on an embedded DuckDB, then answers GET /v1/datasets and /v1/datasets/{name}, /health and",
    "/metrics on serve.port (8080).",
    "SIGTERM or SIGINT stops the listener and closes the database, and exits 0."})
final class ServeCommand implements Callable<Integer> {
    private static final Logger LOG = LoggerFactory.getLogger(ServeCommand.class);

    @CommandLine.Mixin
    ConfigFile config = new ConfigFile();

    @Override
    public Integer call() throws InterruptedException {
        Path path = config.path("serve");
        ServeConfig settings = new ServeConfigReader(ConfigEnvironment.fromSystem()).read(path);
        DatasetServer server = DatasetServer.start(settings, path.toAbsolutePath().getParent());
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            LOG.info("stop requested: closing the listener and the database");
            try {
                server.close();
            } finally {
                stopped.countDown();
                System.err.flush();
                // halt: exit() from a shutdown hook would wait for this very hook.
                Runtime.getRuntime().halt(0);
            }
        }, "serve-stop"));
        stopped.await();
        return 0;
    }
}
