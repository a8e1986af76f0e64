// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.http;

import static java.util.Objects.requireNonNull;

import io.helidon.common.socket.SocketOptions;
import java.net.Socket;
import java.net.SocketOption;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * Helidon's socket options of a listener, forwarded unchanged: a listener that watches its accepted connections
 * extends this and overrides {@link #configureSocket(SocketChannel)}, which Helidon calls on its accepting thread.
 */
public abstract class ForwardingSocketOptions implements SocketOptions {
    private final SocketOptions options;

    protected ForwardingSocketOptions(SocketOptions options) {
        this.options = requireNonNull(options, "options is null");
    }

    @Override
    public void configureSocket(SocketChannel channel) {
        options.configureSocket(channel);
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
