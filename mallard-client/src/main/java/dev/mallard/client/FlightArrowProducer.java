// SPDX-License-Identifier: Apache-2.0
package dev.mallard.client;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * An {@link ArrowProducer} over Arrow Flight: each batch is one {@code DoPut} of a Flight SQL
 * {@code CommandStatementIngest} whose options name the {@code ingestion_queue} and carry the producer and batch ids.
 * RESOURCE_EXHAUSTED is retried after backoff; UNAVAILABLE, TIMED_OUT, INTERNAL and UNKNOWN with backoff (and
 * spilling); UNAUTHENTICATED after a new handshake; other codes reject the batch. Needs {@code flight-core} on the
 * class path.
 *
 * <pre>{@code
 * try (FlightArrowProducer producer = FlightArrowProducer.builder(Location.forGrpcInsecure("localhost", 59307), "events", schema)
 *         .login("ada", "lovelace")
 *         .build()) {
 *     producer.addRow(Instant.now(), "checkout", 42L);
 * }
 * }</pre>
 */
public final class FlightArrowProducer implements ArrowProducer {
    private final BatchEngine engine;
    private final BufferAllocator allocator;

    private FlightArrowProducer(BatchEngine engine, BufferAllocator allocator) {
        this.engine = engine;
        this.allocator = allocator;
    }

    /**
     * @param location the server's Flight address ({@code Location.forGrpcInsecure(host, port)} or {@code forGrpcTls})
     * @param queue the ingestion queue ({@code ingestion_queue})
     */
    public static Builder builder(Location location, String queue, Schema schema) {
        return new Builder(location, queue, schema);
    }

    @Override
    public Schema schema() {
        return engine.schema();
    }

    @Override
    public String producerId() {
        return engine.producerId();
    }

    @Override
    public void addRow(Object... values) {
        engine.addRow(values);
    }

    @Override
    public void send(VectorSchemaRoot rows) {
        engine.send(rows);
    }

    @Override
    public boolean flush(Duration timeout) throws InterruptedException {
        return engine.flush(timeout);
    }

    @Override
    public ProducerStats stats() {
        return engine.stats();
    }

    @Override
    public void close() {
        try {
            engine.close();
        } finally {
            allocator.close();
        }
    }

    /** Builds a {@link FlightArrowProducer}; without {@code login} or {@code token} calls carry no credentials. */
    public static final class Builder {
        private final Location location;
        private final String queue;
        private final Schema schema;
        private ProducerOptions options = ProducerOptions.defaults();
        private Optional<String> username = Optional.empty();
        private Optional<String> password = Optional.empty();
        private Map<String, String> claims = Map.of();
        private Optional<Supplier<String>> token = Optional.empty();
        private boolean sendBatchIds = true;

        private Builder(Location location, String queue, Schema schema) {
            this.location = requireNonNull(location, "location is null");
            this.queue = requireNonNull(queue, "queue is null");
            this.schema = requireNonNull(schema, "schema is null");
        }

        public Builder options(ProducerOptions options) {
            this.options = requireNonNull(options, "options is null");
            return this;
        }

        /** Basic credentials, exchanged for a bearer token by a handshake; {@code claims} go as handshake headers. */
        public Builder login(String username, String password, Map<String, String> claims) {
            this.username = Optional.of(username);
            this.password = Optional.of(password);
            this.claims = Map.copyOf(claims);
            this.token = Optional.empty();
            return this;
        }

        public Builder login(String username, String password) {
            return login(username, password, Map.of());
        }

        /** A bearer token, asked of the supplier before every call. */
        public Builder token(Supplier<String> token) {
            this.token = Optional.of(token);
            this.username = Optional.empty();
            this.password = Optional.empty();
            return this;
        }

        /**
         * Whether the DoPut options carry {@code x-dd-producer-id} and {@code x-dd-producer-batch-id} (default true).
         * Turn it off for a DazzleDuck server: its Flight ingestion reads the producer id but numbers every batch 0,
         * so it would refuse each batch after the first as out of sequence. Without the ids a resent batch may be
         * written twice.
         */
        public Builder sendBatchIds(boolean sendBatchIds) {
            this.sendBatchIds = sendBatchIds;
            return this;
        }

        public FlightArrowProducer build() {
            BufferAllocator allocator = new RootAllocator();
            try {
                FlightIngestTransport transport = new FlightIngestTransport(location, queue, username, password, claims, token, options, allocator,
                        sendBatchIds);
                return new FlightArrowProducer(new BatchEngine(schema, options, transport), allocator);
            } catch (RuntimeException e) {
                allocator.close();
                throw e;
            }
        }
    }
}
