// SPDX-License-Identifier: Apache-2.0
package dev.mallard.bench;

import static java.util.Objects.requireNonNull;

import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * A minimal HTTP/1.1 GET client on one kept-alive blocking socket, for load generation: it writes one fixed request
 * and reads the status line, the headers and a {@code Content-Length} body, nothing more. The JDK's HttpClient costs
 * several times a small request's server work in its own selector and executor threads; this one costs a socket
 * write and read on the calling thread, so the thread's CPU time is all the client's, and the rest of the process's
 * is the server's.
 */
final class KeepAliveClient implements AutoCloseable {
    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    private final byte[] request;
    private byte[] body = new byte[8192];
    private int length;

    KeepAliveClient(int port, String pathAndQuery) throws IOException {
        requireNonNull(pathAndQuery, "pathAndQuery is null");
        this.socket = new Socket();
        socket.setTcpNoDelay(true);
        socket.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
        socket.setSoTimeout(60_000);
        this.in = new BufferedInputStream(socket.getInputStream(), 1 << 16);
        this.out = socket.getOutputStream();
        this.request = ("GET " + pathAndQuery + " HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
    }

    /** Sends the request and reads the answer; @return its status (the body is then {@link #body()}) */
    int get() throws IOException {
        out.write(request);
        out.flush();
        String status = line();
        if (!status.startsWith("HTTP/1.1 ") || status.length() < 12) {
            throw new IOException("not an HTTP/1.1 status line: " + status);
        }
        int contentLength = -1;
        for (String header = line(); !header.isEmpty(); header = line()) {
            if (header.regionMatches(true, 0, "Content-Length:", 0, 15)) {
                contentLength = Integer.parseInt(header.substring(15).trim());
            } else if (header.regionMatches(true, 0, "Transfer-Encoding:", 0, 18)) {
                throw new IOException("a chunked answer; this client reads Content-Length bodies only");
            }
        }
        if (contentLength < 0) {
            throw new IOException("an answer without Content-Length");
        }
        if (body.length < contentLength) {
            body = new byte[Math.max(contentLength, body.length * 2)];
        }
        int read = 0;
        while (read < contentLength) {
            int n = in.read(body, read, contentLength - read);
            if (n < 0) {
                throw new EOFException("the server closed the connection mid-body");
            }
            read += n;
        }
        length = contentLength;
        return Integer.parseInt(status.substring(9, 12));
    }

    /** The last answer's body as text (for error messages and checks). */
    String body() {
        return new String(body, 0, length, StandardCharsets.UTF_8);
    }

    /** Whether the last answer's body holds {@code ascii} within its first {@code within} bytes. */
    boolean bodyContains(byte[] ascii, int within) {
        int end = Math.min(length, within) - ascii.length;
        outer:
        for (int i = 0; i <= end; i++) {
            for (int j = 0; j < ascii.length; j++) {
                if (body[i + j] != ascii[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    private final StringBuilder line = new StringBuilder(128);

    private String line() throws IOException {
        line.setLength(0);
        while (true) {
            int b = in.read();
            if (b < 0) {
                throw new EOFException("the server closed the connection");
            }
            if (b == '\n') {
                int last = line.length() - 1;
                if (last >= 0 && line.charAt(last) == '\r') {
                    line.setLength(last);
                }
                return line.toString();
            }
            line.append((char) b);
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
