// SPDX-License-Identifier: Apache-2.0
package dev.mallard.client;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A real HTTP hop between a producer and a real server that can misbehave on cue: answer 429 to the next few
 * ingest requests, forward one request but hold its answer until the producer has given up and sent the batch
 * again, or be "down" (not listening: connections refused). It records the batch ids it saw.
 */
final class FaultyHttpProxy implements AutoCloseable {
    private static final Set<String> HOP_HEADERS = Set.of("host", "content-length", "connection", "transfer-encoding", "upgrade", "keep-alive",
            "expect", "te", "trailer", "http2-settings");

    private final InetSocketAddress address;
    private HttpServer server;
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private volatile int targetPort;
    private volatile boolean down;
    private final AtomicInteger busyLeft = new AtomicInteger();
    private volatile int retryAfterSeconds;
    private final AtomicReference<CountDownLatch> holdNext = new AtomicReference<>();
    private final AtomicReference<String> heldBatchId = new AtomicReference<>();
    private final List<String> batchIds = new CopyOnWriteArrayList<>();

    FaultyHttpProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.server = listen(new InetSocketAddress("127.0.0.1", 0));
        this.address = server.getAddress();
    }

    private HttpServer listen(InetSocketAddress at) throws IOException {
        HttpServer listening = HttpServer.create(at, 0);
        listening.setExecutor(threads);
        listening.createContext("/", this::handle);
        listening.start();
        return listening;
    }

    URI uri() {
        return URI.create("http://127.0.0.1:" + address.getPort());
    }

    /**
     * Points at {@code port} (e.g. the same warehouse restarted on a new port) and listens again on its own port, which
     * it freed a moment ago when it went down.
     */
    synchronized void up(int port) throws IOException {
        targetPort = port;
        if (down) {
            server = listen(address);
            down = false;
        }
    }

    /** Stops listening: connections are refused, as a stopped server's are. */
    synchronized void down() {
        if (!down) {
            down = true;
            server.stop(0);
        }
    }

    /** Answers the next {@code n} ingest requests 429 with {@code Retry-After: seconds}. */
    void busy(int n, int seconds) {
        retryAfterSeconds = seconds;
        busyLeft.set(n);
    }

    /** Forwards the next ingest request, then holds the server's answer until the same batch id comes again. */
    void holdNextAnswer() {
        holdNext.set(new CountDownLatch(1));
    }

    /** The x-dd-producer-batch-id of every ingest request that reached the proxy, in order. */
    List<String> batchIds() {
        return List.copyOf(batchIds);
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            boolean ingest = exchange.getRequestURI().getPath().endsWith("/v1/ingest");
            String batchId = exchange.getRequestHeaders().getFirst("x-dd-producer-batch-id");
            byte[] body;
            try (InputStream in = exchange.getRequestBody()) {
                body = in.readAllBytes();
            }
            if (ingest) {
                batchIds.add(batchId);
                CountDownLatch held = holdNext.get();
                if (held != null && batchId != null && batchId.equals(heldBatchId.get())) {
                    held.countDown();
                }
                if (busyLeft.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                    exchange.getResponseHeaders().add("Retry-After", Integer.toString(retryAfterSeconds));
                    exchange.sendResponseHeaders(429, -1);
                    return;
                }
            }
            HttpRequest.Builder forward = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + targetPort + exchange.getRequestURI()))
                    .method(exchange.getRequestMethod(), HttpRequest.BodyPublishers.ofByteArray(body));
            exchange.getRequestHeaders().forEach((name, values) -> {
                if (!HOP_HEADERS.contains(name.toLowerCase(java.util.Locale.ROOT))) {
                    values.forEach(v -> forward.header(name, v));
                }
            });
            HttpResponse<byte[]> answer;
            try {
                answer = client.send(forward.build(), HttpResponse.BodyHandlers.ofByteArray());
            } catch (IOException e) {
                return; // the server is gone: so is the answer
            }
            CountDownLatch held = holdNext.get();
            if (ingest && held != null && heldBatchId.compareAndSet(null, batchId)) {
                // The server has written the batch; the producer never hears so, times out, and sends it again.
                held.await(2, TimeUnit.MINUTES);
                holdNext.set(null);
                return;
            }
            answer.headers().map().forEach((name, values) -> {
                if (!HOP_HEADERS.contains(name.toLowerCase(java.util.Locale.ROOT)) && !name.startsWith(":")) {
                    values.forEach(v -> exchange.getResponseHeaders().add(name, v));
                }
            });
            exchange.sendResponseHeaders(answer.statusCode(), answer.body().length == 0 ? -1 : answer.body().length);
            if (answer.body().length > 0) {
                exchange.getResponseBody().write(answer.body());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public synchronized void close() {
        CountDownLatch held = holdNext.get();
        if (held != null) {
            held.countDown();
        }
        if (!down) {
            server.stop(0);
        }
        threads.shutdownNow();
    }
}
