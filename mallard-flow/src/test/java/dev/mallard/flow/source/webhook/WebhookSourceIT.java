// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.source.webhook;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.core.metrics.MetricsRegistry;
import dev.mallard.flow.source.Message;
import dev.mallard.flow.source.Source.Partition;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The webhook source's HTTP surface, driven by the JDK's HTTP client against the real server. */
class WebhookSourceIT {
    private static final HmacSignature GITHUB = new HmacSignature("X-Hub-Signature-256", "sha256", "It's a Secret to Everybody");
    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private WebhookSource source;

    @AfterEach
    void close() {
        if (source != null) {
            source.close();
        }
        client.close();
    }

    private WebhookSource start(Optional<HmacSignature> signature, long maxBodyBytes, WebhookSettings.Ack ack, int queue) {
        source = new WebhookSource(new WebhookSettings("127.0.0.1", 0, signature, maxBodyBytes, 8, ack), 0, queue);
        return source;
    }

    private WebhookSource start() {
        return start(Optional.empty(), 1 << 20, WebhookSettings.Ack.ON_RECEIVE, 100);
    }

    private HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + source.port() + path)).timeout(Duration.ofSeconds(30));
    }

    private HttpResponse<String> post(String body, String... headers) throws Exception {
        HttpRequest.Builder builder = request("/events").POST(HttpRequest.BodyPublishers.ofString(body));
        if (headers.length > 0) {
            builder.headers(headers);
        }
        return client.send(builder.build(), HttpResponse.BodyHandlers.ofString());
    }

    private List<Message> pollAll(int expected) {
        List<Message> messages = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (messages.size() < expected && System.nanoTime() < deadline) {
            messages.addAll(source.poll(Duration.ofMillis(100), 1000));
        }
        return messages;
    }

    private static String text(Message message) {
        return new String(message.value(), StandardCharsets.UTF_8);
    }

    @Test
    void aJsonBodyIsOneEventAndJsonLinesOneEventPerLineAtConsecutiveOffsets() throws Exception {
        start();
        HttpResponse<String> one = post("{\"action\":\"opened\"}");
        assertThat(one.statusCode()).isEqualTo(200);
        assertThat(one.body()).isEqualTo("{\"status\":\"received\"}");
        assertThat(post("{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n").statusCode()).isEqualTo(200);
        List<Message> messages = pollAll(4);
        assertThat(messages).extracting(WebhookSourceIT::text)
                .containsExactly("{\"action\":\"opened\"}", "{\"n\":1}", "{\"n\":2}", "{\"n\":3}");
        assertThat(messages).extracting(Message::topic).containsOnly("webhook");
        assertThat(messages).extracting(Message::partition).containsOnly(0);
        assertThat(messages).extracting(Message::offset).containsExactly(0L, 1L, 2L, 3L);
    }

    @Test
    void aBodyThatIsNotJsonObjectsIsRefusedWith400AndNothingQueued() throws Exception {
        start();
        HttpResponse<String> response = post("[1,2]");
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.body()).contains("array");
        assertThat(source.poll(Duration.ofMillis(50), 10)).isEmpty();
    }

    @Test
    void aGithubSignedBodyIsAcceptedAMissingSignatureIs400AndAWrongOne403() throws Exception {
        start(Optional.of(GITHUB), 1 << 20, WebhookSettings.Ack.ON_RECEIVE, 100);
        String body = "{\"zen\":\"Keep it logically awesome.\"}";
        assertThat(post(body, "X-Hub-Signature-256", GITHUB.headerValue(body.getBytes(StandardCharsets.UTF_8))).statusCode()).isEqualTo(200);
        HttpResponse<String> missing = post(body);
        assertThat(missing.statusCode()).isEqualTo(400);
        assertThat(missing.body()).contains("X-Hub-Signature-256");
        assertThat(post(body, "X-Hub-Signature-256", GITHUB.headerValue("{}".getBytes(StandardCharsets.UTF_8))).statusCode()).isEqualTo(403);
        assertThat(post(body + " ", "X-Hub-Signature-256", GITHUB.headerValue(body.getBytes(StandardCharsets.UTF_8))).statusCode())
                .as("the signature covers the exact bytes").isEqualTo(403);
        assertThat(pollAll(1)).extracting(WebhookSourceIT::text).containsExactly(body);
        assertThat(source.poll(Duration.ofMillis(50), 10)).isEmpty();
    }

    @Test
    void aBodyOverMaxBodyBytesIs413EvenWhenChunkedAndNothingIsQueued() throws Exception {
        start(Optional.of(GITHUB), 1024, WebhookSettings.Ack.ON_RECEIVE, 100);
        String big = "{\"pad\":\"" + "x".repeat(4096) + "\"}";
        assertThat(post(big, "X-Hub-Signature-256", GITHUB.headerValue(big.getBytes(StandardCharsets.UTF_8))).statusCode()).isEqualTo(413);
        HttpRequest chunked = request("/events").POST(HttpRequest.BodyPublishers.ofInputStream(
                () -> new ByteArrayInputStream(big.getBytes(StandardCharsets.UTF_8)))).build();
        assertThat(client.send(chunked, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(413);
        assertThat(source.poll(Duration.ofMillis(50), 10)).isEmpty();
    }

    /** A declared length over the bound is answered before any of the body is sent, signed or not. */
    @Test
    void aDeclaredLengthOverTheBoundIsAnswered413BeforeTheBodyIsSent() throws Exception {
        start(Optional.of(GITHUB), 1024, WebhookSettings.Ack.ON_RECEIVE, 100);
        try (Socket socket = new Socket("127.0.0.1", source.port())) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write(("POST /events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            byte[] status = in.readNBytes(12);
            assertThat(new String(status, StandardCharsets.US_ASCII)).isEqualTo("HTTP/1.1 413");
        }
    }

    @Test
    void afterFlushAnswersFlushedOnlyOnceTheBatchHoldingTheBodyIsCommitted() throws Exception {
        start(Optional.empty(), 1 << 20, WebhookSettings.Ack.AFTER_FLUSH, 100);
        CompletableFuture<HttpResponse<String>> first = client.sendAsync(request("/events")
                .POST(HttpRequest.BodyPublishers.ofString("{\"n\":1}\n{\"n\":2}")).build(), HttpResponse.BodyHandlers.ofString());
        List<Message> batch = pollAll(2);
        assertThat(batch).extracting(Message::offset).containsExactly(0L, 1L);
        // A commit short of the request's last event does not answer it.
        source.commit(Map.of(new Partition("webhook", 0), 1L));
        assertThat(first).isNotDone();
        source.commit(Map.of(new Partition("webhook", 0), 2L));
        HttpResponse<String> response = first.get();
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).isEqualTo("{\"status\":\"flushed\"}");
    }

    @Test
    void afterFlushAnswers503WhenThePipelineStopsBeforeTheFlush() throws Exception {
        start(Optional.empty(), 1 << 20, WebhookSettings.Ack.AFTER_FLUSH, 100);
        CompletableFuture<HttpResponse<String>> pending = client.sendAsync(request("/events")
                .POST(HttpRequest.BodyPublishers.ofString("{\"n\":1}")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(pollAll(1)).hasSize(1);
        source.close();
        source = null;
        HttpResponse<String> response = pending.get();
        assertThat(response.statusCode()).isEqualTo(503);
        assertThat(response.body()).isEqualTo("{\"detail\":\"Not flushed\"}");
    }

    @Test
    void aFullQueueHoldsTheRequestUntilThePipelineCatchesUpAndLosesNothing() throws Exception {
        start(Optional.empty(), 1 << 20, WebhookSettings.Ack.ON_RECEIVE, 2);
        StringBuilder body = new StringBuilder();
        for (int i = 0; i < 50; i++) {
            body.append("{\"n\":").append(i).append("}\n");
        }
        CompletableFuture<HttpResponse<String>> sent = client.sendAsync(request("/events")
                .POST(HttpRequest.BodyPublishers.ofString(body.toString())).build(), HttpResponse.BodyHandlers.ofString());
        List<Message> messages = new ArrayList<>();
        while (messages.size() < 50) {
            messages.addAll(source.poll(Duration.ofSeconds(10), 1));
        }
        assertThat(sent.get().statusCode()).isEqualTo(200);
        assertThat(messages).extracting(Message::offset).containsExactlyElementsOf(
                java.util.stream.LongStream.range(0, 50).boxed().toList());
    }

    @Test
    void requestsAreCountedByStatusCodeAndTimedAndHealthzIsNot() throws Exception {
        start(Optional.of(GITHUB), 1024, WebhookSettings.Ack.ON_RECEIVE, 100);
        MetricsRegistry registry = new MetricsRegistry();
        source.registerMeters(registry, "hooks");
        String body = "{\"n\":1}";
        post(body, "X-Hub-Signature-256", GITHUB.headerValue(body.getBytes(StandardCharsets.UTF_8)));
        post(body);
        post(body);
        post(body, "X-Hub-Signature-256", "sha256=00");
        HttpRequest chunked = request("/events").POST(HttpRequest.BodyPublishers.ofInputStream(
                () -> new ByteArrayInputStream(("{\"pad\":\"" + "x".repeat(4096) + "\"}").getBytes(StandardCharsets.UTF_8)))).build();
        assertThat(client.send(chunked, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(413);
        client.send(request("/healthz").GET().build(), HttpResponse.BodyHandlers.discarding());
        String scrape = registry.scrape();
        assertThat(scrape).contains("webhook_requests_total{pipeline=\"hooks\",status_code=\"200\"} 1.0")
                .contains("webhook_requests_total{pipeline=\"hooks\",status_code=\"400\"} 2.0")
                .contains("webhook_requests_total{pipeline=\"hooks\",status_code=\"403\"} 1.0")
                .contains("webhook_requests_total{pipeline=\"hooks\",status_code=\"413\"} 1.0")
                .contains("webhook_request_duration_seconds_count{pipeline=\"hooks\"} 5");
    }

    @Test
    void healthzAnswersGetAndHead() throws Exception {
        start();
        HttpResponse<String> get = client.send(request("/healthz").GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(get.statusCode()).isEqualTo(200);
        assertThat(get.body()).isEqualTo("{\"status\":\"ok\"}");
        HttpResponse<Void> head = client.send(request("/healthz").method("HEAD", HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.discarding());
        assertThat(head.statusCode()).isEqualTo(200);
    }

    @Test
    void theFirstOffsetFollowsTheStateFile() throws Exception {
        source = new WebhookSource(new WebhookSettings("127.0.0.1", 0, Optional.empty(), 1 << 20, 8, WebhookSettings.Ack.ON_RECEIVE), 41, 10);
        post("{}");
        assertThat(pollAll(1)).extracting(Message::offset).containsExactly(41L);
    }

    private WebhookSource startWithTimeouts(double headerSeconds, double bodySeconds, double idleSeconds, WebhookSettings.Ack ack) {
        source = new WebhookSource(new WebhookSettings("127.0.0.1", 0, Optional.empty(), 1 << 20, 8, ack,
                new WebhookSettings.Timeouts(millis(headerSeconds), millis(bodySeconds), millis(idleSeconds))), 0, 100);
        return source;
    }

    private static Duration millis(double seconds) {
        return Duration.ofMillis(Math.round(seconds * 1000));
    }

    /** Reads until the server closes the connection; a reset counts as closed. Fails if nothing happens in 20 s. */
    private static String readUntilClosed(Socket socket) throws Exception {
        socket.setSoTimeout(20_000);
        java.io.ByteArrayOutputStream read = new java.io.ByteArrayOutputStream();
        InputStream in = socket.getInputStream();
        byte[] buffer = new byte[1024];
        try {
            for (int n; (n = in.read(buffer)) >= 0; ) {
                read.write(buffer, 0, n);
            }
        } catch (java.net.SocketException reset) {
            // closed by the server while data was unread on its side
        }
        return read.toString(StandardCharsets.US_ASCII);
    }

    private static void send(Socket socket, String text) throws Exception {
        OutputStream out = socket.getOutputStream();
        out.write(text.getBytes(StandardCharsets.US_ASCII));
        out.flush();
    }

    @Test
    void aClientThatStallsHalfwayThroughItsHeadersIsDisconnectedAfterTheHeaderTimeout() throws Exception {
        startWithTimeouts(0.3, 60, 60, WebhookSettings.Ack.ON_RECEIVE);
        try (Socket socket = new Socket("127.0.0.1", source.port())) {
            send(socket, "POST /events HTTP/1.1\r\nHost: localhost\r\nContent-Type: appli");
            // The idle and body timeouts are 60 s: only the header timeout can close it within the 20 s wait.
            assertThat(readUntilClosed(socket)).isEmpty();
        }
        assertThat(source.poll(Duration.ofMillis(50), 10)).isEmpty();
    }

    @Test
    void aBodyThatStallsIsAnswered408AndTheConnectionClosedWithNothingQueued() throws Exception {
        startWithTimeouts(60, 0.3, 60, WebhookSettings.Ack.ON_RECEIVE);
        MetricsRegistry registry = new MetricsRegistry();
        source.registerMeters(registry, "hooks");
        try (Socket socket = new Socket("127.0.0.1", source.port())) {
            String event = "{\"n\":1}\n";
            send(socket, "POST /events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: "
                    + (2 * event.length()) + "\r\n\r\n" + event);
            String answer = readUntilClosed(socket);
            assertThat(answer).startsWith("HTTP/1.1 408 ").contains("Connection: close").endsWith("{\"detail\":\"the body was not sent in time\"}");
        }
        assertThat(source.poll(Duration.ofMillis(200), 10)).as("nothing of the half body is queued").isEmpty();
        // A whole request on a new connection is still served.
        assertThat(post("{\"n\":2}").statusCode()).isEqualTo(200);
        assertThat(pollAll(1)).extracting(WebhookSourceIT::text).containsExactly("{\"n\":2}");
        assertThat(registry.scrape()).contains("webhook_requests_total{pipeline=\"hooks\",status_code=\"408\"} 1.0");
    }

    @Test
    void anIdleKeepAliveConnectionIsClosedAfterTheIdleTimeout() throws Exception {
        startWithTimeouts(60, 60, 0.3, WebhookSettings.Ack.ON_RECEIVE);
        try (Socket socket = new Socket("127.0.0.1", source.port())) {
            String body = "{\"n\":1}";
            send(socket, "POST /events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: "
                    + body.length() + "\r\n\r\n" + body);
            // The answer keeps the connection open; the server closes it only once it has been idle.
            String answer = readUntilClosed(socket);
            assertThat(answer).startsWith("HTTP/1.1 200 ").doesNotContain("Connection: close").endsWith("{\"status\":\"received\"}");
        }
        assertThat(pollAll(1)).hasSize(1);
    }

    @Test
    void aConnectionThatSendsNothingIsClosedAfterTheIdleTimeout() throws Exception {
        startWithTimeouts(60, 60, 0.3, WebhookSettings.Ack.ON_RECEIVE);
        try (Socket socket = new Socket("127.0.0.1", source.port())) {
            // Not one byte: only the idle timeout can close it within the 20 s wait.
            assertThat(readUntilClosed(socket)).isEmpty();
        }
    }

    @Test
    void silentConnectionsHoldingEveryConnectionSlotAreClosedAndARealRequestIsServed() throws Exception {
        startWithTimeouts(60, 60, 0.3, WebhookSettings.Ack.ON_RECEIVE);
        // max_connections is 8 here: twelve silent connections, then a real sender.
        java.util.List<Socket> silent = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < 12; i++) {
                silent.add(new Socket("127.0.0.1", source.port()));
            }
            assertThat(post("{\"n\":1}").statusCode()).isEqualTo(200);
            assertThat(pollAll(1)).extracting(WebhookSourceIT::text).containsExactly("{\"n\":1}");
            for (Socket socket : silent) {
                assertThat(readUntilClosed(socket)).isEmpty();
            }
        } finally {
            for (Socket socket : silent) {
                socket.close();
            }
        }
    }

    /** The body clock stops once the body is read: an after_flush answer may wait longer than the body timeout. */
    @Test
    void anAfterFlushWaitLongerThanTheBodyTimeoutIsNotA408() throws Exception {
        startWithTimeouts(60, 0.3, 60, WebhookSettings.Ack.AFTER_FLUSH);
        CompletableFuture<HttpResponse<String>> pending = client.sendAsync(request("/events")
                .POST(HttpRequest.BodyPublishers.ofString("{\"n\":1}")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(pollAll(1)).hasSize(1);
        Thread.sleep(1_000); // three body timeouts pass while the request waits for its flush
        source.commit(Map.of(new Partition("webhook", 0), 1L));
        HttpResponse<String> response = pending.get();
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).isEqualTo("{\"status\":\"flushed\"}");
    }
}
