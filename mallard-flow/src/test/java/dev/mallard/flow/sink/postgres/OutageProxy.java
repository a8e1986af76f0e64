// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.sink.postgres;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy to a local port that resets its first {@code refused} connections at once, as a server that is down
 * (restarting, failing over) does, then forwards the rest. Counted in connections, not time, so a test is exact.
 */
final class OutageProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final int target;
    private final AtomicInteger refusedLeft;
    private final AtomicInteger accepted = new AtomicInteger();

    OutageProxy(int target, int refused) throws IOException {
        this.target = target;
        this.refusedLeft = new AtomicInteger(refused);
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().start(this::accept);
    }

    int port() {
        return listener.getLocalPort();
    }

    int accepted() {
        return accepted.get();
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                accepted.incrementAndGet();
                if (refusedLeft.getAndDecrement() > 0) {
                    client.setSoLinger(true, 0);
                    client.close();
                    continue;
                }
                Socket server = new Socket(InetAddress.getLoopbackAddress(), target);
                Thread.ofVirtual().start(() -> pipe(client, server));
                Thread.ofVirtual().start(() -> pipe(server, client));
            } catch (IOException e) {
                return;
            }
        }
    }

    private static void pipe(Socket from, Socket to) {
        try (from; to; InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            in.transferTo(out);
        } catch (IOException e) {
            // the other side closed
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
    }
}
