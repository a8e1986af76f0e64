// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.ingest;

import static dev.mallard.server.ingest.IngestFixtures.batch;
import static dev.mallard.server.ingest.IngestFixtures.login;
import static dev.mallard.server.ingest.IngestFixtures.post;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.server.MallardServer;
import dev.mallard.server.auth.PasswordHash;
import dev.mallard.server.config.AccessMode;
import dev.mallard.server.config.UserAccount;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.grpc.CredentialCallOption;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.flight.sql.FlightSqlClient.ExecuteIngestOptions;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A RESTRICTED server: a token writes a queue only with x-dd-access-type=WRITE and an ingestion_queue claim naming it,
 * both fixed by the server's configuration for the user; anything else is 403 over HTTP and UNAUTHORIZED over Flight.
 */
class IngestAccessIT {
    private static final String ARROW = Ingestion.ARROW_STREAM;

    @TempDir
    static Path root;

    static MallardServer server;

    @BeforeAll
    static void start() {
        List<UserAccount> users = List.of(
                new UserAccount("writer", PasswordHash.of("pw"), Map.of("x-dd-table", "events", "x-dd-access-type", "WRITE", "ingestion_queue", "events"),
                        List.of(), List.of()),
                new UserAccount("reader", PasswordHash.of("pw"), Map.of("x-dd-table", "events"), List.of(), List.of()));
        server = MallardServer.start(IngestFixtures.config(root, AccessMode.RESTRICTED, IngestFixtures.queues(
                IngestionConfig.Queue.named("events", "lake/events"), IngestionConfig.Queue.named("audit", "lake/audit")), users));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void aTokenWhoseUserMayWriteTheQueueIsAcknowledged() throws Exception {
        HttpResponse<String> response = post(server.httpPort(), "?ingestion_queue=events", Optional.of(login(server.httpPort(), "writer", "pw", Map.of())),
                ARROW, batch("w", 0, 5));

        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    }

    @Test
    void aQueueTheTokensClaimDoesNotNameIsAnswered403() throws Exception {
        HttpResponse<String> response = post(server.httpPort(), "?ingestion_queue=audit", Optional.of(login(server.httpPort(), "writer", "pw", Map.of())),
                ARROW, batch("w", 0, 5));

        assertThat(response.statusCode()).as(response.body()).isEqualTo(403);
    }

    @Test
    void aTokenWithoutWriteAccessIsAnswered403() throws Exception {
        HttpResponse<String> response = post(server.httpPort(), "?ingestion_queue=events", Optional.of(login(server.httpPort(), "reader", "pw", Map.of())),
                ARROW, batch("r", 0, 5));

        assertThat(response.statusCode()).as(response.body()).isEqualTo(403);
    }

    @Test
    void writeClaimsALoginGivesItselfDoNotCount() throws Exception {
        String token = login(server.httpPort(), "reader", "pw", Map.of("x-dd-access-type", "WRITE", "ingestion_queue", "events"));

        HttpResponse<String> response = post(server.httpPort(), "?ingestion_queue=events", Optional.of(token), ARROW, batch("r", 0, 5));

        assertThat(response.statusCode()).as(response.body()).isEqualTo(403);
    }

    @Test
    void overFlightTheSameClaimsDecideAndARefusalIsUnauthorized() throws Exception {
        try (BufferAllocator allocator = new RootAllocator();
                FlightClient flight = FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", server.flightPort())).build();
                FlightSqlClient sql = new FlightSqlClient(flight);
                VectorSchemaRoot batch = VectorSchemaRoot.create(IngestFixtures.SCHEMA, allocator)) {
            IngestFixtures.fill(batch, "f", 0, 3);
            ExecuteIngestOptions options = new ExecuteIngestOptions("", TableDefinitionOptions.getDefaultInstance(), null, null,
                    Map.of("ingestion_queue", "events"));
            CredentialCallOption writer = flight.authenticateBasicToken("writer", "pw").orElseThrow();
            assertThat(sql.executeIngest(batch, options, writer)).isEqualTo(3);
            CredentialCallOption reader = flight.authenticateBasicToken("reader", "pw").orElseThrow();
            assertThatThrownBy(() -> sql.executeIngest(batch, options, reader)).isInstanceOfSatisfying(FlightRuntimeException.class,
                    e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.UNAUTHORIZED));
        }
    }
}
