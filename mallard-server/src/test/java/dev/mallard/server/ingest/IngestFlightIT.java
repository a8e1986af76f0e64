// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.server.MallardServer;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.grpc.CredentialCallOption;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.flight.sql.FlightSqlClient.ExecuteIngestOptions;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions.TableExistsOption;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions.TableNotExistOption;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Flight DoPut of CommandStatementIngest with the ingestion_queue option, through Arrow Java's FlightSqlClient. */
class IngestFlightIT {
    @TempDir
    Path root;

    private MallardServer server;
    private BufferAllocator allocator;
    private FlightClient flight;
    private FlightSqlClient sql;
    private CredentialCallOption bearer;

    @BeforeEach
    void start() {
        server = MallardServer.start(IngestFixtures.config(root, IngestFixtures.queues(IngestionConfig.Queue.named("events", "lake/events"))));
        allocator = new RootAllocator();
        flight = FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", server.flightPort())).build();
        bearer = flight.authenticateBasicToken(IngestFixtures.USER, IngestFixtures.PASSWORD).orElseThrow();
        sql = new FlightSqlClient(flight);
    }

    @AfterEach
    void stop() throws Exception {
        sql.close();
        allocator.close();
        server.close();
    }

    private long put(String queue, long first, int count, Map<String, String> extra) {
        try (VectorSchemaRoot batch = VectorSchemaRoot.create(IngestFixtures.SCHEMA, allocator)) {
            IngestFixtures.fill(batch, "flight", first, count);
            Map<String, String> options = new HashMap<>(extra);
            options.put("ingestion_queue", queue);
            return sql.executeIngest(batch, new ExecuteIngestOptions("", TableDefinitionOptions.getDefaultInstance(), null, null, options), bearer);
        }
    }

    @Test
    void aDoPutToAQueueIsAcknowledgedWithItsRowCountOnceCommitted() throws Exception {
        assertThat(put("events", 0, 500, Map.of())).isEqualTo(500);

        assertThat(count("SELECT count(*) FROM events")).isEqualTo(500);
        assertThat(count("SELECT count(*) FROM read_parquet('" + root.resolve("warehouse/lake/events") + "/*.parquet')")).isEqualTo(500);
    }

    @Test
    void anUndeclaredQueueIsNotFound() {
        assertThatThrownBy(() -> put("nowhere", 0, 1, Map.of())).isInstanceOfSatisfying(FlightRuntimeException.class,
                e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.NOT_FOUND));
    }

    @Test
    void aQueueNameThatClimbsOutIsAnInvalidArgument() {
        assertThatThrownBy(() -> put("../escape", 0, 1, Map.of())).isInstanceOfSatisfying(FlightRuntimeException.class,
                e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT));
    }

    @Test
    void aCallWithoutATokenIsUnauthenticated() {
        try (VectorSchemaRoot batch = VectorSchemaRoot.create(IngestFixtures.SCHEMA, allocator)) {
            IngestFixtures.fill(batch, "flight", 0, 1);
            assertThatThrownBy(() -> sql.executeIngest(batch, new ExecuteIngestOptions("", TableDefinitionOptions.getDefaultInstance(), null, null,
                    Map.of("ingestion_queue", "events")))).isInstanceOfSatisfying(FlightRuntimeException.class,
                    e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.UNAUTHENTICATED));
        }
    }

    @Test
    void theSameProducerBatchPutThreeTimesLandsOnce() throws Exception {
        for (int i = 0; i < 3; i++) {
            put("events", 0, 40, Map.of("x-dd-producer-id", "f1", "x-dd-producer-batch-id", "3"));
        }

        assertThat(count("SELECT count(*) FROM events")).isEqualTo(40);
    }

    @Test
    void aDoPutWithoutTheQueueOptionStillLoadsATable() throws Exception {
        try (VectorSchemaRoot batch = VectorSchemaRoot.create(IngestFixtures.SCHEMA, allocator)) {
            IngestFixtures.fill(batch, "flight", 0, 7);
            TableDefinitionOptions create = TableDefinitionOptions.newBuilder().setIfNotExist(TableNotExistOption.TABLE_NOT_EXIST_OPTION_CREATE)
                    .setIfExists(TableExistsOption.TABLE_EXISTS_OPTION_FAIL).build();
            assertThat(sql.executeIngest(batch, new ExecuteIngestOptions("loaded", create, null, null, Map.of()), bearer)).isEqualTo(7);
        }
        assertThat(count("SELECT count(*) FROM loaded")).isEqualTo(7);
        assertThat(List.of(root.resolve("warehouse/lake/events").toFile().list())).isEmpty();
    }

    private long count(String query) throws Exception {
        try (Connection connection = server.engineSession(); Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery(query)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
