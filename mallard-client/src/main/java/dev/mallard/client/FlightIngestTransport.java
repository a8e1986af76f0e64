// SPDX-License-Identifier: Apache-2.0
package dev.mallard.client;

import static java.util.Objects.requireNonNull;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.zip.GZIPInputStream;
import org.apache.arrow.flight.AsyncPutListener;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.CallOptions;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightCallHeaders;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.HeaderCallOption;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.auth2.BasicAuthCredentialWriter;
import org.apache.arrow.flight.auth2.BearerCredentialWriter;
import org.apache.arrow.flight.auth2.ClientBearerHeaderHandler;
import org.apache.arrow.flight.auth2.ClientIncomingAuthHeaderMiddleware;
import org.apache.arrow.flight.grpc.CredentialCallOption;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;

/**
 * Flight {@code DoPut} with a {@code CommandStatementIngest} descriptor whose options carry {@code ingestion_queue},
 * {@code x-dd-producer-id}, {@code x-dd-producer-batch-id} and the partition/sort/format settings. Basic credentials
 * are exchanged once for a bearer token by a handshake (claims go as headers), redone after UNAUTHENTICATED.
 */
final class FlightIngestTransport implements BatchTransport {
    private final Location location;
    private final Map<String, String> baseOptions;
    private final Optional<String> username;
    private final Optional<String> password;
    private final Map<String, String> claims;
    private final Optional<Supplier<String>> token;
    private final Duration requestTimeout;
    private final BufferAllocator allocator;
    private final ClientIncomingAuthHeaderMiddleware.Factory bearerCapture = new ClientIncomingAuthHeaderMiddleware.Factory(new ClientBearerHeaderHandler());
    private final FlightClient client;
    private final boolean sendBatchIds;
    private volatile CredentialCallOption credentials;

    FlightIngestTransport(Location location, String queue, Optional<String> username, Optional<String> password, Map<String, String> claims,
            Optional<Supplier<String>> token, ProducerOptions options, BufferAllocator allocator) {
        this(location, queue, username, password, claims, token, options, allocator, true);
    }

    FlightIngestTransport(Location location, String queue, Optional<String> username, Optional<String> password, Map<String, String> claims,
            Optional<Supplier<String>> token, ProducerOptions options, BufferAllocator allocator, boolean sendBatchIds) {
        this.sendBatchIds = sendBatchIds;
        this.location = requireNonNull(location, "location is null");
        requireNonNull(queue, "queue is null");
        if (queue.isBlank()) {
            throw new IllegalArgumentException("the ingestion queue name is empty");
        }
        this.username = requireNonNull(username, "username is null");
        this.password = requireNonNull(password, "password is null");
        this.claims = Map.copyOf(requireNonNull(claims, "claims is null"));
        this.token = requireNonNull(token, "token is null");
        this.requestTimeout = options.requestTimeout();
        this.allocator = requireNonNull(allocator, "allocator is null");
        Map<String, String> o = new LinkedHashMap<>();
        o.put("ingestion_queue", queue);
        if (sendBatchIds) {
            o.put("x-dd-producer-id", options.producerId());
        }
        if (!options.partitionBy().isEmpty()) {
            o.put("x-dd-partition", String.join(",", options.partitionBy()));
        }
        if (!options.sortOrder().isEmpty()) {
            o.put("x-dd-sort-order", String.join(",", options.sortOrder()));
        }
        options.format().ifPresent(f -> o.put("x-dd-format", f));
        this.baseOptions = Map.copyOf(o);
        this.client = FlightClient.builder(allocator, location).intercept(bearerCapture).build();
    }

    @Override
    public boolean gzipPayloads() {
        return false;
    }

    @Override
    public String target() {
        return location.getUri() + " ingestion_queue=" + baseOptions.get("ingestion_queue");
    }

    @Override
    public SendOutcome send(long batchId, byte[] payload, boolean gzip) throws InterruptedException {
        Map<String, String> options = new LinkedHashMap<>(baseOptions);
        if (sendBatchIds) {
            options.put("x-dd-producer-batch-id", Long.toString(batchId));
        }
        FlightDescriptor descriptor = FlightDescriptor.command(IngestCommand.encode(options));
        try (InputStream in = gzip ? new GZIPInputStream(new ByteArrayInputStream(payload)) : new ByteArrayInputStream(payload);
                ArrowStreamReader reader = new ArrowStreamReader(in, allocator)) {
            VectorSchemaRoot root = reader.getVectorSchemaRoot();
            List<CallOption> call = new ArrayList<>();
            call.add(CallOptions.timeout(requestTimeout.toMillis(), TimeUnit.MILLISECONDS));
            credentials().ifPresent(call::add);
            FlightClient.ClientStreamListener put = client.startPut(descriptor, root, new AsyncPutListener(), call.toArray(new CallOption[0]));
            while (reader.loadNextBatch()) {
                put.putNext();
            }
            put.completed();
            put.getResult();
            return SendOutcome.acknowledged();
        } catch (FlightRuntimeException e) {
            if (Thread.currentThread().isInterrupted()) {
                throw new InterruptedException("interrupted while sending batch " + batchId);
            }
            return classify(e.status());
        } catch (IOException e) {
            return SendOutcome.rejected("the batch is not a readable Arrow stream: " + e.getMessage());
        }
    }

    private SendOutcome classify(CallStatus status) {
        String detail = status.code() + (status.description() == null ? "" : ": " + status.description());
        return switch (status.code()) {
            case OK -> SendOutcome.acknowledged();
            case RESOURCE_EXHAUSTED -> SendOutcome.busy(retryAfter(status), detail);
            case UNAUTHENTICATED -> {
                credentials = null;
                yield SendOutcome.unreachable(Optional.empty(), detail);
            }
            case UNAVAILABLE, TIMED_OUT, INTERNAL, UNKNOWN, CANCELLED -> SendOutcome.unreachable(retryAfter(status), detail);
            // Not even DazzleDuck's "Out of sequence batch": over Flight it numbers every batch 0, so that answer
            // refuses a new batch rather than recognising a resent one (see sendBatchIds).
            default -> SendOutcome.rejected(detail);
        };
    }

    private static Optional<Duration> retryAfter(CallStatus status) {
        // ErrorFlightMetadata.get throws for a key it does not hold.
        if (status.metadata() == null || !status.metadata().containsKey("retry-after")) {
            return Optional.empty();
        }
        String value = status.metadata().get("retry-after");
        return value == null ? Optional.empty() : HttpIngestTransport.retryAfter(value);
    }

    private Optional<CallOption> credentials() {
        if (token.isPresent()) {
            String t = token.get().get();
            return t == null ? Optional.empty() : Optional.of(new CredentialCallOption(new BearerCredentialWriter(t)));
        }
        if (username.isEmpty()) {
            return Optional.empty();
        }
        CredentialCallOption current = credentials;
        if (current == null) {
            CallHeaders headers = new FlightCallHeaders();
            claims.forEach(headers::insert);
            client.handshake(new CredentialCallOption(new BasicAuthCredentialWriter(username.get(), password.orElse(""))),
                    new HeaderCallOption(headers), CallOptions.timeout(requestTimeout.toMillis(), TimeUnit.MILLISECONDS));
            current = bearerCapture.getCredentialCallOption();
            credentials = current;
        }
        return Optional.ofNullable(current);
    }

    @Override
    public void close() {
        try {
            client.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
