// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.console;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.server.auth.AccessToken;
import dev.mallard.server.auth.TokenService;
import dev.mallard.server.config.AccessMode;
import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.Optional;

/**
 * Serves the console's files from the jar at {@code /ui} and {@code /v1/ui} (DazzleDuck's address), and
 * {@code /ui/api/session}: who the bearer token belongs to and the server's access mode, so the page shows only
 * what the user may do. Every answer carries the same Content-Security-Policy: scripts, styles and connections to
 * this server only, no inline script, no framing; the page loads nothing from any other host.
 */
public final class ConsoleRoutes {
    /** The policy every console answer carries; the page's own code and styles come from {@code /ui/assets}. */
    public static final String CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
            + " connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
    private static final String RESOURCES = "/dev/mallard/server/console/ui/";
    private static final HeaderName CSP = HeaderNames.create("Content-Security-Policy");
    private static final HeaderName CONTENT_TYPE_OPTIONS = HeaderNames.create("X-Content-Type-Options");
    private static final HeaderName FRAME_OPTIONS = HeaderNames.create("X-Frame-Options");
    private static final HeaderName REFERRER_POLICY = HeaderNames.create("Referrer-Policy");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Map<String, String> TYPES = Map.of("html", "text/html; charset=utf-8", "js", "text/javascript; charset=utf-8",
            "css", "text/css; charset=utf-8", "svg", "image/svg+xml", "png", "image/png", "ico", "image/x-icon", "json", "application/json",
            "map", "application/json");

    private final TokenService tokens;
    private final AccessMode mode;

    private ConsoleRoutes(TokenService tokens, AccessMode mode) {
        this.tokens = requireNonNull(tokens, "tokens is null");
        this.mode = requireNonNull(mode, "mode is null");
    }

    /** Adds the console's routes: {@code /ui}, {@code /ui/*}, {@code /v1/ui}, {@code /v1/ui/*}. */
    public static void register(HttpRouting.Builder routes, TokenService tokens, AccessMode mode) {
        ConsoleRoutes console = new ConsoleRoutes(tokens, mode);
        for (String prefix : new String[] {"/ui", "/v1/ui"}) {
            routes.get(prefix + "/api/session", console::session)
                    // The page's asset addresses are relative, so it must be read from a path ending in a slash.
                    .get(prefix, (request, response) -> response.status(Status.MOVED_PERMANENTLY_301)
                            .header(HeaderNames.LOCATION, prefix + "/").send())
                    .get(prefix + "/*", (request, response) -> console.file(response, relative(request.path().path(), prefix)));
        }
    }

    /** The path below the console's prefix; the page itself for any path that is not a file (the page routes by its hash). */
    static String relative(String path, String prefix) {
        String rest = path.length() > prefix.length() ? path.substring(prefix.length() + 1) : "";
        if (rest.isEmpty() || !rest.startsWith("assets/") || rest.contains("..") || rest.contains("//") || rest.contains("\\")) {
            return "index.html";
        }
        return rest;
    }

    private void file(ServerResponse response, String name) {
        secure(response);
        Optional<byte[]> bytes = read(name);
        if (bytes.isEmpty()) {
            response.status(Status.NOT_FOUND_404).header(HeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8")
                    .send("no such console file: " + name);
            return;
        }
        String extension = name.substring(name.lastIndexOf('.') + 1);
        response.header(HeaderNames.CONTENT_TYPE, TYPES.getOrDefault(extension, "application/octet-stream"));
        // Assets carry their content's hash in their names; the page itself must be read afresh to pick up new ones.
        response.header(HeaderNames.CACHE_CONTROL, name.startsWith("assets/") ? "public, max-age=31536000, immutable" : "no-store");
        response.send(bytes.get());
    }

    private static Optional<byte[]> read(String name) {
        try (InputStream in = ConsoleRoutes.class.getResourceAsStream(RESOURCES + name)) {
            return in == null ? Optional.empty() : Optional.of(in.readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code {"username": ..., "access_mode": ..., "can_write": bool}} for the bearer token; 401 without a valid one. */
    private void session(ServerRequest request, ServerResponse response) {
        secure(response);
        response.header(HeaderNames.CACHE_CONTROL, "no-store");
        try {
            AccessToken token = bearer(request);
            ObjectNode answer = JSON.createObjectNode();
            answer.put("username", token.username());
            answer.put("access_mode", mode.name());
            answer.put("can_write", mode == AccessMode.COMPLETE);
            response.header(HeaderNames.CONTENT_TYPE, "application/json").send(answer.toString());
        } catch (MallardException e) {
            ObjectNode root = JSON.createObjectNode();
            ObjectNode error = root.putObject("error");
            error.put("code", e.errorCode().code());
            error.put("message", e.getMessage());
            response.status(e.errorCode() == ErrorCode.USER_AUTH_FAILED ? Status.UNAUTHORIZED_401 : Status.BAD_REQUEST_400)
                    .header(HeaderNames.CONTENT_TYPE, "application/json").send(root.toString());
        }
    }

    private AccessToken bearer(ServerRequest request) {
        Optional<String> header = request.headers().first(HeaderNames.AUTHORIZATION);
        if (header.isEmpty() || !header.get().regionMatches(true, 0, "Bearer ", 0, 7)) {
            throw new MallardException(ErrorCode.USER_AUTH_FAILED, "no access token; log in with POST /v1/login and send Authorization: Bearer <token>");
        }
        return tokens.verify(header.get().substring(7).trim());
    }

    private static void secure(ServerResponse response) {
        response.header(CSP, CONTENT_SECURITY_POLICY);
        response.header(CONTENT_TYPE_OPTIONS, "nosniff");
        response.header(FRAME_OPTIONS, "DENY");
        response.header(REFERRER_POLICY, "no-referrer");
    }
}
