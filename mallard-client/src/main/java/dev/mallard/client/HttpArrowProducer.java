// SPDX-License-Identifier: Apache-2.0
package dev.mallard.client;

import static java.util.Objects.requireNonNull;

import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * An {@link ArrowProducer} over HTTP: each batch is one {@code POST /v1/ingest?ingestion_queue=<queue>} of an Arrow
 * IPC stream (gzipped unless turned off), answered 200 once written. 429 and 503 are retried after their
 * {@code Retry-After}; other 5xx, 408, timeouts and connection failures with backoff (and spilling, if a spill
 * directory is set); 401 after logging in again; any other 4xx rejects the batch.
 *
 * <pre>{@code
 * try (HttpArrowProducer producer = HttpArrowProducer.builder(URI.create("http://localhost:8081"), "events", schema)
 *         .login("ada", "lovelace")
 *         .options(ProducerOptions.builder().producerId("checkout-1").spillDirectory(Path.of("spill")).build())
 *         .build()) {
 *     producer.addRow(Instant.now(), "checkout", 42L);
 * }
 * }</pre>
 */
public final class HttpArrowProducer implements ArrowProducer {
    private final BatchEngine engine;

    private HttpArrowProducer(BatchEngine engine) {
        this.engine = engine;
    }

    /**
     * @param baseUri the server's HTTP address, e.g. {@code http://localhost:8081}
     * @param queue the ingestion queue ({@code ingestion_queue})
     */
    public static Builder builder(URI baseUri, String queue, Schema schema) {
        return new Builder(baseUri, queue, schema);
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
        engine.close();
    }

    /** Builds an {@link HttpArrowProducer}; without {@code login} or {@code token} requests carry no credentials. */
    public static final class Builder {
        private final URI baseUri;
        private final String queue;
        private final Schema schema;
        private ProducerOptions options = ProducerOptions.defaults();
        private HttpIngestTransport.Auth auth = HttpIngestTransport.Auth.NONE;
        private boolean gzip = true;
        private Supplier<HttpClient.Builder> client = HttpClient::newBuilder;

        private Builder(URI baseUri, String queue, Schema schema) {
            this.baseUri = requireNonNull(baseUri, "baseUri is null");
            this.queue = requireNonNull(queue, "queue is null");
            this.schema = requireNonNull(schema, "schema is null");
        }

        public Builder options(ProducerOptions options) {
            this.options = requireNonNull(options, "options is null");
            return this;
        }

        /** Logs in with {@code POST /v1/login}; {@code claims} go with the login (e.g. {@code x-dd-access-type}). */
        public Builder login(String username, String password, Map<String, String> claims) {
            this.auth = new HttpIngestTransport.Auth(Optional.of(username), Optional.of(password), claims, Optional.empty());
            return this;
        }

        public Builder login(String username, String password) {
            return login(username, password, Map.of());
        }

        /** Sends {@code Authorization: Bearer <token>}, asking the supplier before every request. */
        public Builder token(Supplier<String> token) {
            this.auth = new HttpIngestTransport.Auth(Optional.empty(), Optional.empty(), Map.of(), Optional.of(token));
            return this;
        }

        /** Whether bodies are gzipped ({@code Content-Encoding: gzip}); default true. */
        public Builder gzip(boolean gzip) {
            this.gzip = gzip;
            return this;
        }

        /** The HTTP client to start from (TLS context, proxy, executor); the connect timeout is set from the options. */
        public Builder httpClient(Supplier<HttpClient.Builder> client) {
            this.client = requireNonNull(client, "client is null");
            return this;
        }

        public HttpArrowProducer build() {
            HttpIngestTransport transport = new HttpIngestTransport(baseUri, queue, auth, options, gzip, client.get());
            return new HttpArrowProducer(new BatchEngine(schema, options, transport));
        }
    }
}
