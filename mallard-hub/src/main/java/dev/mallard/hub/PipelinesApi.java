// SPDX-License-Identifier: Apache-2.0
package dev.mallard.hub;

import dev.mallard.server.http.HttpErrors;
import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.server.hosted.HostContext;
import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.util.function.BiFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code /v1/pipelines}: every logged-in user reads the hosted pipelines; stopping and starting one takes the right to
 * control them ({@link Hub#mayControl}). Errors answer Mallard's usual {@code {"error":{"code","message"}}} body.
 */
final class PipelinesApi {
    private static final Logger LOG = LoggerFactory.getLogger(PipelinesApi.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String JSON_TYPE = "application/json";

    private final Hub hub;
    private final HostContext context;

    PipelinesApi(Hub hub, HostContext context) {
        this.hub = requireNonNull(hub, "hub is null");
        this.context = requireNonNull(context, "context is null");
    }

    void routes(HttpRouting.Builder routes) {
        routes.get("/v1/pipelines", this::list)
                .get("/v1/pipelines/{name}", this::one)
                .post("/v1/pipelines/{name}/stop", (request, response) -> control(request, response, Hub::stop))
                .post("/v1/pipelines/{name}/start", (request, response) -> control(request, response, Hub::start));
    }

    private void list(ServerRequest request, ServerResponse response) {
        try {
            String caller = context.caller(request);
            ObjectNode body = JSON.createObjectNode();
            body.put("can_control", hub.mayControl(caller));
            ArrayNode all = body.putArray("pipelines");
            hub.pipelines().forEach(status -> all.add(json(status)));
            send(response, Status.OK_200, body.toString());
        } catch (RuntimeException e) {
            fail(response, e);
        }
    }

    private void one(ServerRequest request, ServerResponse response) {
        try {
            context.caller(request);
            send(response, Status.OK_200, json(hub.pipeline(name(request))).toString());
        } catch (RuntimeException e) {
            fail(response, e);
        }
    }

    private void control(ServerRequest request, ServerResponse response, BiFunction<Hub, String, PipelineStatus> action) {
        try {
            String caller = context.caller(request);
            String name = name(request);
            // A name that does not exist answers 404 to everyone who may read the list: it tells nothing the list does not.
            hub.pipeline(name);
            if (!hub.mayControl(caller)) {
                throw new MallardException(ErrorCode.USER_ACCESS_DENIED, "user " + caller + " may not stop or start pipelines in "
                        + context.accessMode() + " mode; list them in pipeline_admins, or run the server in COMPLETE mode");
            }
            PipelineStatus status = action.apply(hub, name);
            LOG.info("pipeline control user={} pipeline={} route={} state={}", caller, name, request.path().path(), status.state());
            send(response, Status.OK_200, json(status).toString());
        } catch (RuntimeException e) {
            fail(response, e);
        }
    }

    private static String name(ServerRequest request) {
        return request.path().pathParameters().get("name");
    }

    static ObjectNode json(PipelineStatus status) {
        ObjectNode node = JSON.createObjectNode();
        node.put("name", status.name());
        node.put("state", status.state().name());
        node.put("source", status.source());
        if (status.lag().isPresent()) {
            node.put("lag", status.lag().get());
        } else {
            node.putNull("lag");
        }
        if (status.lastBatchAt().isPresent()) {
            node.put("last_batch_at", status.lastBatchAt().get().toString());
        } else {
            node.putNull("last_batch_at");
        }
        node.put("batches", status.batches());
        node.put("messages", status.messages());
        node.put("errors", status.errors());
        node.put("messages_per_second", Math.round(status.messagesPerSecond() * 10) / 10.0);
        if (status.lastError().isPresent()) {
            node.putObject("last_error").put("code", status.lastError().get().code()).put("message", status.lastError().get().message());
        } else {
            node.putNull("last_error");
        }
        return node;
    }

    private static void send(ServerResponse response, Status status, String body) {
        response.status(status).header(HeaderNames.CONTENT_TYPE, JSON_TYPE).send(body);
    }

    private static void fail(ServerResponse response, RuntimeException e) {
        HttpErrors.send(response, e, LOG, "pipelines request");
    }
}
