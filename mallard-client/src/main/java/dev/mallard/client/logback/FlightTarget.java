// SPDX-License-Identifier: Apache-2.0
package dev.mallard.client.logback;

import dev.mallard.client.ArrowProducer;
import dev.mallard.client.FlightArrowProducer;
import dev.mallard.client.ProducerOptions;
import org.apache.arrow.flight.Location;
import org.apache.arrow.vector.types.pojo.Schema;

/** Builds the appender's Flight producer; loaded only when {@code <transport>flight</transport>} is configured. */
final class FlightTarget {
    private FlightTarget() {}

    static ArrowProducer producer(String url, String queue, Schema schema, ProducerOptions options, String token, String username, String password) {
        FlightArrowProducer.Builder flight = FlightArrowProducer.builder(new Location(java.net.URI.create(url)), queue, schema).options(options);
        if (token != null) {
            flight.token(() -> token);
        } else if (username != null) {
            flight.login(username, password == null ? "" : password);
        }
        return flight.build();
    }
}
