package dev.mallard.flow.source.webhook;

import static java.util.Objects.requireNonNull;

import io.helidon.common.socket.SocketOptions;
import java.net.Socket;
import java.net.SocketOption;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * The webhook listener's socket options: Helidon's, and each accepted connection handed to {@link RequestTimeouts}
 * to be timed until its first request line. Helidon reads a connection's first bytes (to choose its protocol) before
 * its idle check knows the connection, and a socket read timeout does not end that read, so a client that connects
 * and sends nothing would otherwise hold a connection slot forever. Helidon calls this on its accepting thread.
 */
final class AcceptedConnections implements SocketOptions {
    private final SocketOptions options;
    private final RequestTimeouts timeouts;

    AcceptedConnections(SocketOptions options, RequestTimeouts timeouts) {
        this.options = requireNonNull(options, "options is null");
        this.timeouts = requireNonNull(timeouts, "timeouts is null");
    }

    @Override
    public void configureSocket(SocketChannel channel) {
        options.configureSocket(channel);
        timeouts.accepted(channel);
    }

    @Override
    public void configureSocket(Socket socket) {
        options.configureSocket(socket);
    }

    @Override
    public Map<SocketOption<?>, Object> socketOptions() {
        return options.socketOptions();
    }

    @Override
    public Duration connectTimeout() {
        return options.connectTimeout();
    }

    @Override
    public Duration readTimeout() {
        return options.readTimeout();
    }

    @Override
    public Optional<Integer> socketReceiveBufferSize() {
        return options.socketReceiveBufferSize();
    }

    @Override
    public Optional<Integer> socketSendBufferSize() {
        return options.socketSendBufferSize();
    }

    @Override
    public boolean socketReuseAddress() {
        return options.socketReuseAddress();
    }

    @Override
    public boolean socketKeepAlive() {
        return options.socketKeepAlive();
    }

    @Override
    public boolean tcpNoDelay() {
        return options.tcpNoDelay();
    }
}
