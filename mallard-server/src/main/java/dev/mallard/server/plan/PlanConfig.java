// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.plan;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What a server hands to others: the Flight locations a split plan sends clients to
 * ({@code flight.data_processor_locations}; none means this server) and the login service that decides logins
 * ({@code login_url}; none means the configured users).
 */
public record PlanConfig(List<URI> dataProcessorLocations, Optional<URI> loginUrl) {
    public static final PlanConfig DEFAULT = new PlanConfig(List.of(), Optional.empty());

    public PlanConfig {
        dataProcessorLocations = List.copyOf(dataProcessorLocations);
        requireNonNull(loginUrl, "loginUrl is null");
    }

    /** Reads {@code flight.data_processor_locations} ({@code {host, port, use_encryption}} each) and {@code login_url}. */
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
        Optional<URI> login = Optional.empty();
        JsonNode url = root.path("login_url");
        if (url.isTextual() && !url.asText().isBlank()) {
            URI uri;
            try {
                uri = URI.create(url.asText().trim());
            } catch (IllegalArgumentException e) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "login_url is not a URL: " + e.getMessage(), e);
            }
            if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) || uri.getHost() == null) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "login_url must be an http:// or https:// URL of the login service");
            }
            login = Optional.of(uri);
        }
        return new PlanConfig(locations, login);
    }
}
