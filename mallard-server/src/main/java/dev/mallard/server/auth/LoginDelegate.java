// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.auth;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * DazzleDuck's {@code login_url}: an external login service decides logins. The server POSTs it the credentials and
 * the claims the client asked for, {@code {"username", "password", "claims"}}, as JSON; a 2xx answer
 * {@code {"username": ..., "claims": {...}}} (both optional: the asked username, no claims) is what the server signs
 * into its token; 401 or 403 refuse the login. Anything else, and no answer within {@link #TIMEOUT}, is
 * {@code system.auth.login_service_failed}.
 */
public final class LoginDelegate {
    public static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final URI url;
    private final HttpClient client;

    public LoginDelegate(URI url) {
        this.url = requireNonNull(url, "url is null");
        this.client = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
    }

    /** What the login service granted. */
    public record Granted(String username, Map<String, Object> claims) {
        public Granted {
            requireNonNull(username, "username is null");
            claims = Map.copyOf(claims);
        }
    }

    /**
     * @throws MallardException {@code user.auth.failed} when the service refuses (401, 403);
     *     {@code system.auth.login_service_failed} when it cannot be reached or answers anything else
     */
    public Granted login(String username, String password, Map<String, Object> claims) {
        requireNonNull(username, "username is null");
        requireNonNull(password, "password is null");
        ObjectNode body = JSON.createObjectNode();
        body.put("username", username);
        body.put("password", password);
        body.set("claims", JSON.valueToTree(claims));
        HttpResponse<String> response;
        try {
            response = client.send(HttpRequest.newBuilder(url).timeout(TIMEOUT).header("Content-Type", "application/json")
                    .header("Accept", "application/json").POST(HttpRequest.BodyPublishers.ofString(body.toString())).build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw failed("could not be reached: " + e.getClass().getSimpleName() + (e.getMessage() == null ? "" : " " + e.getMessage()), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw failed("was not waited for: the login was interrupted", e);
        }
        int status = response.statusCode();
        if (status == 401 || status == 403) {
            throw new MallardException(ErrorCode.USER_AUTH_FAILED, "the login service refused the credentials of " + username + " (HTTP " + status + ")");
        }
        if (status < 200 || status > 299) {
            throw failed("answered HTTP " + status, null);
        }
        JsonNode answer;
        try {
            answer = JSON.readTree(response.body());
        } catch (JsonProcessingException e) {
            throw failed("answered a body that is not JSON", e);
        }
        if (answer == null || !answer.isObject()) {
            throw failed("answered a body that is not a JSON object {\"username\", \"claims\"}", null);
        }
        JsonNode name = answer.path("username");
        JsonNode granted = answer.path("claims");
        if (!(name.isMissingNode() || name.isNull() || (name.isTextual() && !name.asText().isBlank()))
                || !(granted.isMissingNode() || granted.isNull() || granted.isObject())) {
            throw failed("answered a username that is not a string or claims that are not an object", null);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        if (granted.isObject()) {
            out.putAll(JSON.convertValue(granted, Map.class));
        }
        return new Granted(name.isTextual() ? name.asText() : username, out);
    }

    /** The service's URL without any user information, as errors and logs may show it. */
    String shown() {
        return url.getScheme() + "://" + url.getHost() + (url.getPort() < 0 ? "" : ":" + url.getPort()) + (url.getRawPath() == null ? "" : url.getRawPath());
    }

    private MallardException failed(String what, Throwable cause) {
        return new MallardException(ErrorCode.SYSTEM_LOGIN_SERVICE_FAILED, "the login service " + shown() + " (login_url) " + what
                + "; check that it runs and answers {\"username\", \"claims\"} JSON, or remove login_url to log in the configured users", cause);
    }
}
