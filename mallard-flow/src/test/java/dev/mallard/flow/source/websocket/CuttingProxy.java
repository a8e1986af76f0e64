// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.source.websocket;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** A TCP proxy to a local port whose {@link #cut} drops every connection through it at once, with a reset. */
final class CuttingProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final int target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();

    CuttingProxy(int target) throws IOException {
        this.target = target;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().start(this::accept);
    }

    int port() {
        return listener.getLocalPort();
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket(InetAddress.getLoopbackAddress(), target);
                sockets.add(client);
                sockets.add(server);
                Thread.ofVirtual().start(() -> pipe(client, server));
                Thread.ofVirtual().start(() -> pipe(server, client));
            } catch (IOException e) {
                return;
            }
        }
    }

    private static void pipe(Socket from, Socket to) {
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            in.transferTo(out);
        } catch (IOException e) {
            // cut, or the other side closed
        }
    }

    /** Resets every open connection: no close frame, no FIN, as a network drop looks to both ends. */
    void cut() {
        for (Socket socket : sockets) {
            try {
                socket.setSoLinger(true, 0);
                socket.close();
            } catch (IOException e) {
                // already closed
            }
        }
        sockets.clear();
    }

    @Override
    public void close() throws IOException {
        cut();
        listener.close();
    }
}
