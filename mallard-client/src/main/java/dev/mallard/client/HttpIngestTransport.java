// SPDX-License-Identifier: Apache-2.0
package dev.mallard.client;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * {@code POST <base>/v1/ingest?ingestion_queue=<queue>} with an Arrow IPC stream body, DazzleDuck's wire: content
 * type {@code application/vnd.apache.arrow.stream}, {@code Content-Encoding: gzip} when gzipped, the producer and
 * batch ids as {@code x-dd-producer-id} / {@code x-dd-producer-batch-id}, and {@code Authorization: Bearer} from
 * {@code POST /v1/login} (logged in again after a 401 or before the token expires) or from the caller's supplier.
 */
final class HttpIngestTransport implements BatchTransport {
    static final String ARROW_STREAM = "application/vnd.apache.arrow.stream";
    private static final Duration REFRESH_BEFORE_EXPIRY = Duration.ofSeconds(60);

    /** How the transport gets a token: none, a login, or the caller's supplier. */
    record Auth(Optional<String> username, Optional<String> password, Map<String, String> claims, Optional<Supplier<String>> token) {
        Auth {
            requireNonNull(username, "username is null");
            requireNonNull(password, "password is null");
            claims = Map.copyOf(requireNonNull(claims, "claims is null"));
            requireNonNull(token, "token is null");
        }

        static final Auth NONE = new Auth(Optional.empty(), Optional.empty(), Map.of(), Optional.empty());
    }

    private final URI ingest;
    private final URI login;
    private final Auth auth;
    private final Duration requestTimeout;
    private final String producerId;
    private final Map<String, String> headers;
    private final boolean gzip;
    private final HttpClient client;
    private volatile String bearer;
    private volatile long bearerExpiresNanos;

    HttpIngestTransport(URI base, String queue, Auth auth, ProducerOptions options, boolean gzip, HttpClient.Builder clientBuilder) {
        requireNonNull(base, "base is null");
        requireNonNull(queue, "queue is null");
        if (queue.isBlank()) {
            throw new IllegalArgumentException("the ingestion queue name is empty");
        }
        String root = base.toString().replaceAll("/+$", "");
        this.ingest = URI.create(root + "/v1/ingest?ingestion_queue=" + URLEncoder.encode(queue, StandardCharsets.UTF_8));
        this.login = URI.create(root + "/v1/login");
        this.auth = requireNonNull(auth, "auth is null");
        this.requestTimeout = options.requestTimeout();
        this.producerId = options.producerId();
        this.gzip = gzip;
        Map<String, String> h = new LinkedHashMap<>();
        if (!options.partitionBy().isEmpty()) {
            h.put("x-dd-partition", URLEncoder.encode(String.join(",", options.partitionBy()), StandardCharsets.UTF_8));
        }
        if (!options.sortOrder().isEmpty()) {
            h.put("x-dd-sort-order", URLEncoder.encode(String.join(",", options.sortOrder()), StandardCharsets.UTF_8));
        }
        options.format().ifPresent(f -> h.put("x-dd-format", f));
        this.headers = Map.copyOf(h);
        this.client = clientBuilder.connectTimeout(options.requestTimeout()).build();
    }

    @Override
    public boolean gzipPayloads() {
        return gzip;
    }

    @Override
    public String target() {
        return ingest.toString();
    }

    @Override
    public SendOutcome send(long batchId, byte[] payload, boolean gzipped) throws InterruptedException {
        for (int attempt = 0; ; attempt++) {
            HttpRequest.Builder request = HttpRequest.newBuilder(ingest)
                    .timeout(requestTimeout)
                    .header("Content-Type", ARROW_STREAM)
                    .header("x-dd-producer-id", producerId)
                    .header("x-dd-producer-batch-id", Long.toString(batchId))
                    .POST(HttpRequest.BodyPublishers.ofByteArray(payload));
            if (gzipped) {
                request.header("Content-Encoding", "gzip");
            }
            headers.forEach(request::header);
            HttpResponse<String> response;
            try {
                Optional<String> token = token();
                token.ifPresent(t -> request.header("Authorization", "Bearer " + t));
                response = exchange(request.build());
            } catch (HttpTimeoutException e) {
                return SendOutcome.unreachable(Optional.empty(), "no answer within " + requestTimeout);
            } catch (IOException e) {
                return SendOutcome.unreachable(Optional.empty(), e.toString());
            } catch (LoginFailed e) {
                return e.outcome;
            }
            int status = response.statusCode();
            if (status / 100 == 2) {
                return SendOutcome.acknowledged();
            }
            if (status == 401 && attempt == 0 && auth.username().isPresent()) {
                bearer = null;
                continue;
            }
            return classify(status, response.headers().firstValue("Retry-After"), response.body());
        }
    }

    /** Sends and waits; an interrupt (a producer closing) cancels the exchange at once instead of waiting it out. */
    private HttpResponse<String> exchange(HttpRequest request) throws IOException, InterruptedException {
        java.util.concurrent.CompletableFuture<HttpResponse<String>> answer = client.sendAsync(request, HttpResponse.BodyHandlers.ofString());
        try {
            return answer.get();
        } catch (InterruptedException e) {
            answer.cancel(true);
            throw e;
        } catch (java.util.concurrent.ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IOException io) {
                throw io;
            }
            throw new IOException(cause);
        }
    }

    static SendOutcome classify(int status, Optional<String> retryAfterHeader, String body) {
        Optional<Duration> retryAfter = retryAfterHeader.flatMap(HttpIngestTransport::retryAfter);
        String detail = "HTTP " + status + (body == null || body.isBlank() ? "" : ": " + body.strip());
        if (status == 429) {
            return SendOutcome.busy(retryAfter, detail);
        }
        if (status >= 500 || status == 408 || status == 401) {
            return SendOutcome.unreachable(retryAfter, detail);
        }
        if (SendOutcome.alreadyWritten(body)) {
            return SendOutcome.acknowledged();
        }
        return SendOutcome.rejected(detail);
    }

    /** Retry-After as seconds or as an HTTP date. */
    static Optional<Duration> retryAfter(String value) {
        String v = value.strip();
        try {
            long seconds = Long.parseLong(v);
            return seconds < 0 ? Optional.empty() : Optional.of(Duration.ofSeconds(seconds));
        } catch (NumberFormatException e) {
            try {
                Duration until = Duration.between(ZonedDateTime.now(), ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME));
                return Optional.of(until.isNegative() ? Duration.ZERO : until);
            } catch (DateTimeParseException ignored) {
                return Optional.empty();
            }
        }
    }

    private static final class LoginFailed extends Exception {
        private static final long serialVersionUID = 1L;
        final transient SendOutcome outcome;

        LoginFailed(SendOutcome outcome) {
            super(outcome.detail(), null, false, false);
            this.outcome = outcome;
        }
    }

    private Optional<String> token() throws IOException, InterruptedException, LoginFailed {
        if (auth.token().isPresent()) {
            return Optional.ofNullable(auth.token().get().get());
        }
        if (auth.username().isEmpty()) {
            return Optional.empty();
        }
        String current = bearer;
        if (current != null && System.nanoTime() - bearerExpiresNanos < 0) {
            return Optional.of(current);
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("username", auth.username().get());
        body.put("password", auth.password().orElse(""));
        if (!auth.claims().isEmpty()) {
            body.put("claims", auth.claims());
        }
        HttpRequest request = HttpRequest.newBuilder(login)
                .timeout(requestTimeout)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(Json.object(body)))
                .build();
        HttpResponse<String> response;
        try {
            response = exchange(request);
        } catch (HttpTimeoutException e) {
            throw new LoginFailed(SendOutcome.unreachable(Optional.empty(), "login: no answer within " + requestTimeout));
        }
        if (response.statusCode() != 200) {
            // Wrong credentials are not the batch's fault: keep it (spilled) and retry, so nothing is dropped for them.
            SendOutcome answer = classify(response.statusCode(), response.headers().firstValue("Retry-After"), response.body());
            throw new LoginFailed(answer.kind() == SendOutcome.Kind.BUSY ? answer
                    : SendOutcome.unreachable(answer.retryAfter(), "login as " + auth.username().get() + " failed: " + answer.detail()));
        }
        Map<String, String> answer;
        try {
            answer = Json.members(response.body());
        } catch (RuntimeException e) {
            throw new LoginFailed(SendOutcome.unreachable(Optional.empty(), "login answered something that is not a JSON object"));
        }
        String token = answer.get("accessToken");
        if (token == null) {
            throw new LoginFailed(SendOutcome.unreachable(Optional.empty(), "login answered no accessToken"));
        }
        long expiresIn = 3600;
        try {
            expiresIn = Long.parseLong(answer.getOrDefault("expiresIn", "3600"));
        } catch (NumberFormatException ignored) {
            // keep the hour
        }
        bearer = token;
        bearerExpiresNanos = System.nanoTime() + Duration.ofSeconds(expiresIn).minus(REFRESH_BEFORE_EXPIRY).toNanos();
        return Optional.of(token);
    }

    @Override
    public void close() {
        // java.net.http.HttpClient is closeable only from Java 21; on 17 its threads end when it is unreachable.
        if (client instanceof AutoCloseable closeable) {
            try {
                closeable.close();
            } catch (Exception ignored) {
                // nothing to do
            }
        }
    }
}
