// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.http;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Clock;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * What {@code /health} reports, in DazzleDuck's fields: whether the database answers {@code SELECT 1}, the
 * uptime, and the bytes the HTTP API has read and written.
 */
public final class ServerHealth {
    private static final ObjectMapper JSON = new ObjectMapper();
    static final String CHECK = "SELECT 1";

    private final Supplier<Optional<String>> databaseCheck;
    private final Clock clock;
    private final Instant started;
    private final AtomicLong bytesIn = new AtomicLong();
    private final AtomicLong bytesOut = new AtomicLong();
    private final dev.mallard.server.hosted.Hosted hosted;

    /** @param databaseCheck runs {@code SELECT 1} on the database: empty when it answered, else why not */
    public ServerHealth(Supplier<Optional<String>> databaseCheck, Clock clock) {
        this(databaseCheck, clock, dev.mallard.server.hosted.Hosted.NONE);
    }

    /** @param hosted what the server hosts: its fields join the body, and while it is degraded so is the server */
    public ServerHealth(Supplier<Optional<String>> databaseCheck, Clock clock, dev.mallard.server.hosted.Hosted hosted) {
        this.hosted = requireNonNull(hosted, "hosted is null");
        this.databaseCheck = requireNonNull(databaseCheck, "databaseCheck is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.started = clock.instant();
    }

    /** The health of {@code engine}'s database: {@code SELECT 1} on a connection of its own. */
    public static ServerHealth of(dev.mallard.core.engine.Engine engine, Clock clock) {
        return of(engine, clock, dev.mallard.server.hosted.Hosted.NONE);
    }

    /** As {@link #of(dev.mallard.core.engine.Engine, Clock)}, with what the server hosts. */
    public static ServerHealth of(dev.mallard.core.engine.Engine engine, Clock clock, dev.mallard.server.hosted.Hosted hosted) {
        requireNonNull(engine, "engine is null");
        return new ServerHealth(() -> {
            try (java.sql.Connection connection = engine.newSession(); java.sql.Statement statement = connection.createStatement();
                    java.sql.ResultSet rs = statement.executeQuery(CHECK)) {
                return rs.next() ? Optional.empty() : Optional.of(CHECK + " returned no rows");
            } catch (java.sql.SQLException | RuntimeException e) {
                return Optional.of(String.valueOf(e.getMessage()));
            }
        }, clock, hosted);
    }

    void read(long bytes) {
        bytesIn.addAndGet(bytes);
    }

    void wrote(long bytes) {
        bytesOut.addAndGet(bytes);
    }

    public long bytesIn() {
        return bytesIn.get();
    }

    public long bytesOut() {
        return bytesOut.get();
    }

    record Report(boolean databaseUp, String json) {}

    Report check() {
        Optional<String> failure;
        try {
            failure = databaseCheck.get();
        } catch (RuntimeException e) {
            failure = Optional.of(String.valueOf(e.getMessage()));
        }
        Instant now = clock.instant();
        ObjectNode body = JSON.createObjectNode();
        body.put("status", failure.isEmpty() ? "UP" : "DEGRADED");
        body.put("uptime_seconds", now.getEpochSecond() - started.getEpochSecond());
        ObjectNode database = body.putObject("database");
        database.put("status", failure.isEmpty() ? "UP" : "DOWN");
        database.put("check", CHECK);
        failure.ifPresent(error -> database.put("error", dev.mallard.core.error.Redactor.redact(error)));
        ObjectNode metrics = body.putObject("metrics");
        metrics.put("bytes_in", (double) bytesIn.get());
        metrics.put("bytes_out", (double) bytesOut.get());
        body.put("timestamp", now.toString());
        if (!hosted.health(body) && failure.isEmpty()) {
            body.put("status", "DEGRADED");
        }
        return new Report(failure.isEmpty(), body.toString());
    }
}
