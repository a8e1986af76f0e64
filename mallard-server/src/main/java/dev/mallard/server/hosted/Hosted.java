// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.hosted;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.webserver.http.HttpRouting;

/**
 * Work a server runs inside its process on its own database, beside its listeners (the hub's pipelines): it adds
 * routes to the HTTP API, its part to {@code /health} and its series to {@code /metrics} (through the registry it
 * was given), and is closed, draining its work, before the listeners stop.
 */
public interface Hosted extends AutoCloseable {
    /** Nothing hosted. */
    Hosted NONE = new Hosted() {
        @Override
        public void routes(HttpRouting.Builder routes) {}

        @Override
        public boolean health(ObjectNode body) {
            return true;
        }

        @Override
        public void close() {}
    };

    /** Adds its routes; called once, while the HTTP API starts. */
    void routes(HttpRouting.Builder routes);

    /** Adds its fields to the {@code /health} body; false when it is degraded (the server still serves). */
    boolean health(ObjectNode body);

    /** Drains and stops its work; the server then stops its listeners, sessions and database. */
    @Override
    void close();

    /** Starts what a server hosts, once its database is ready and before its listeners open. */
    @FunctionalInterface
    interface Factory {
        Factory NONE = context -> Hosted.NONE;

        Hosted start(HostContext context);
    }
}
