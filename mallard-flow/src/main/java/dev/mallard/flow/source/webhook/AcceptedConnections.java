// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.source.webhook;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.http.ForwardingSocketOptions;
import io.helidon.common.socket.SocketOptions;
import java.nio.channels.SocketChannel;

/**
 * The webhook listener's socket options: Helidon's, and each accepted connection handed to {@link RequestTimeouts}
 * to be timed until its first request line. Helidon reads a connection's first bytes (to choose its protocol) before
 * its idle check knows the connection, and a socket read timeout does not end that read, so a client that connects
 * and sends nothing would otherwise hold a connection slot forever. Helidon calls this on its accepting thread.
 */
final class AcceptedConnections extends ForwardingSocketOptions {
    private final RequestTimeouts timeouts;

    AcceptedConnections(SocketOptions options, RequestTimeouts timeouts) {
        super(options);
        this.timeouts = requireNonNull(timeouts, "timeouts is null");
    }

    @Override
    public void configureSocket(SocketChannel channel) {
        super.configureSocket(channel);
        timeouts.accepted(channel);
    }
}
