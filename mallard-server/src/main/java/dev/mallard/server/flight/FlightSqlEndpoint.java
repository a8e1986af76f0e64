// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.flight;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.server.auth.TokenService;
import dev.mallard.server.auth.UserDirectory;
import dev.mallard.server.session.SessionRegistry;
import dev.mallard.server.tls.TlsFiles;
import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.FlightServer;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;

/** The Flight SQL (gRPC) listener: the producer behind the token authenticator. */
public final class FlightSqlEndpoint implements AutoCloseable {
    private final FlightServer server;
    private final BufferAllocator allocator;
    private final MallardFlightSqlProducer producer;

    private FlightSqlEndpoint(FlightServer server, BufferAllocator allocator, MallardFlightSqlProducer producer) {
        this.server = server;
        this.allocator = allocator;
        this.producer = producer;
    }

    public static FlightSqlEndpoint start(String host, int port, Optional<TlsFiles> tls, MallardFlightSqlProducer producer,
            UserDirectory users, TokenService tokens, SessionRegistry sessions, BufferAllocator parent, dev.mallard.server.ops.ServerMetrics metrics) {
        requireNonNull(producer, "producer is null");
        BufferAllocator allocator = parent.newChildAllocator("flight", 0, Long.MAX_VALUE);
        Location location = tls.isPresent() ? Location.forGrpcTls(host, port) : Location.forGrpcInsecure(host, port);
        FlightServer.Builder builder = FlightServer.builder(allocator, location, producer)
                .headerAuthenticator(new FlightAuthenticator(users, tokens, sessions, metrics))
                // Before Flight's middleware: the authenticator counts failed logins per user and real remote address.
                .transportHint("grpc.builderConsumer",
                        (java.util.function.Consumer<io.grpc.netty.NettyServerBuilder>) netty -> netty.addStreamTracerFactory(new PeerAddress()))
                .middleware(CallHeadersMiddleware.KEY, new CallHeadersMiddleware.Factory());
        if (tls.isPresent()) {
            try {
                builder.useTls(tls.get().certFile().toFile(), tls.get().keyFile().toFile());
            } catch (IOException e) {
                allocator.close();
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "cannot read tls.cert_file or tls.key_file: " + e.getMessage(), e);
            }
        }
        FlightServer server = builder.build();
        try {
            server.start();
        } catch (IOException | RuntimeException e) {
            try {
                server.close();
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
            }
            allocator.close();
            throw new MallardException(ErrorCode.SYSTEM_FLIGHT_BIND_FAILED, "cannot serve Flight SQL on " + host + ":" + port
                    + ": " + e.getMessage() + "; choose another flight.port or stop the process that holds it", e);
        }
        return new FlightSqlEndpoint(server, allocator, producer);
    }

    public int port() {
        return server.getPort();
    }

    @Override
    public void close() {
        server.shutdown();
        try {
            server.awaitTermination(5, TimeUnit.SECONDS);
            server.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            producer.close();
            allocator.close();
        }
    }
}
