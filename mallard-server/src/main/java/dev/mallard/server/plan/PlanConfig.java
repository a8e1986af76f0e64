package dev.mallard.server.plan;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;

/**
 * Where split plans send clients: the Flight locations each split's endpoint names
 * ({@code flight.data_processor_locations}; none means this server).
 */
public record PlanConfig(List<URI> dataProcessorLocations) {
    public static final PlanConfig DEFAULT = new PlanConfig(List.of());

    public PlanConfig {
        dataProcessorLocations = List.copyOf(dataProcessorLocations);
    }

    /** Reads {@code flight.data_processor_locations}, a list of {@code {host, port, use_encryption}}. */
    public static PlanConfig read(JsonNode root) {
        List<URI> locations = new ArrayList<>();
        JsonNode given = root.path("flight").path("data_processor_locations");
        for (int i = 0; i < given.size(); i++) {
            JsonNode location = given.get(i);
            String host = location.path("host").asText("");
            int port = location.path("port").asInt(-1);
            if (host.isBlank() || port <= 0 || port > 65535) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "flight.data_processor_locations." + i
                        + " needs a host and a port (1-65535), as {host: worker-1, port: 59307, use_encryption: false}");
            }
            locations.add(URI.create((location.path("use_encryption").asBoolean(false) ? "grpc+tls" : "grpc+tcp") + "://" + host + ":" + port));
        }
        return new PlanConfig(locations);
    }
}
