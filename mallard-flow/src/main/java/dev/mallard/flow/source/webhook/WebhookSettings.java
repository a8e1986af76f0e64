// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.source.webhook;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;

/**
 * The webhook source's block, checked at startup.
 *
 * @param host the address to bind, e.g. {@code 0.0.0.0}
 * @param port 0 picks a free port (tests)
 * @param signature present with {@code signature_type: hmac}
 * @param timeouts how long a sender may take over a request's headers and body, and a connection may sit idle
 */
public record WebhookSettings(String host, int port, Optional<HmacSignature> signature, long maxBodyBytes, int maxConnections, Ack ack,
        Timeouts timeouts) {
    public static final String DEFAULT_ADDR = "0.0.0.0:8001";
    public static final long DEFAULT_MAX_BODY_BYTES = 25L << 20;
    public static final int DEFAULT_MAX_CONNECTIONS = 64;
    public static final Duration DEFAULT_HEADER_TIMEOUT = Duration.ofSeconds(10);
    public static final Duration DEFAULT_BODY_TIMEOUT = Duration.ofSeconds(60);
    public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofSeconds(60);
    private static final String WHERE = "pipeline.source.webhook";

    /** When a POST is answered. */
    public enum Ack {
        /** {@code {"status":"received"}} once the events are queued. */
        ON_RECEIVE,
        /** {@code {"status":"flushed"}} once the batch holding the events has flushed and its position committed. */
        AFTER_FLUSH
    }

    /**
     * @param header from the end of a request line to the end of its headers; past it the connection is closed
     * @param body from the end of the headers to the end of the body; past it the request is answered 408 and
     *     the connection closed, with nothing of the body queued
     * @param idle a keep-alive connection waiting for its next request (or a new one for its first) is closed after it
     */
    public record Timeouts(Duration header, Duration body, Duration idle) {
        public static final Timeouts DEFAULTS = new Timeouts(DEFAULT_HEADER_TIMEOUT, DEFAULT_BODY_TIMEOUT, DEFAULT_IDLE_TIMEOUT);

        public Timeouts {
            requireNonNull(header, "header is null");
            requireNonNull(body, "body is null");
            requireNonNull(idle, "idle is null");
            if (header.isNegative() || header.isZero() || body.isNegative() || body.isZero() || idle.isNegative() || idle.isZero()) {
                throw new IllegalArgumentException("timeouts must be positive: " + header + ", " + body + ", " + idle);
            }
        }
    }

    public WebhookSettings {
        requireNonNull(host, "host is null");
        requireNonNull(signature, "signature is null");
        requireNonNull(ack, "ack is null");
        requireNonNull(timeouts, "timeouts is null");
    }

    /** With the default timeouts. */
    public WebhookSettings(String host, int port, Optional<HmacSignature> signature, long maxBodyBytes, int maxConnections, Ack ack) {
        this(host, port, signature, maxBodyBytes, maxConnections, ack, Timeouts.DEFAULTS);
    }

    /** @throws MallardException {@code user.config.invalid} naming the key at fault */
    public static WebhookSettings of(JsonNode block) {
        requireNonNull(block, "block is null");
        String addr = block.path("addr").asText(DEFAULT_ADDR);
        int colon = addr.lastIndexOf(':');
        String host = colon > 0 ? addr.substring(0, colon) : "";
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = colon > 0 ? Integer.parseInt(addr.substring(colon + 1)) : -1;
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (host.isBlank() || port < 0 || port > 65_535) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, WHERE + ".addr is '" + addr
                    + "', not host:port; write e.g. 0.0.0.0:8001, or \"0.0.0.0:{{ PORT }}\" with PORT set in the environment"
                    + " (an empty port means the template's variable is not set; give it a default: {{ PORT|default('8001') }})");
        }
        Optional<HmacSignature> signature = Optional.empty();
        String type = block.path("signature_type").asText("");
        if (type.equals("hmac")) {
            JsonNode hmac = block.path("hmac");
            if (!hmac.isObject()) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, WHERE + ".signature_type is hmac but " + WHERE
                        + ".hmac is missing; give header, sig_key and secret");
            }
            if (hmac.path("secret").asText("").isEmpty()) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, WHERE + ".hmac.secret is empty; set the shared secret");
            }
            signature = Optional.of(new HmacSignature(hmac.path("header").asText(), hmac.path("sig_key").asText(), hmac.path("secret").asText()));
        } else if (!type.isEmpty()) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, WHERE + ".signature_type is " + type + "; the only type is hmac");
        } else if (block.has("hmac")) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, WHERE + ".hmac is set without signature_type: hmac,"
                    + " so no signature would be checked; add signature_type: hmac");
        }
        Ack ack = Ack.valueOf(block.path("ack").asText("on_receive").toUpperCase(Locale.ROOT));
        return new WebhookSettings(host, port, signature, block.path("max_body_bytes").asLong(DEFAULT_MAX_BODY_BYTES),
                block.path("max_connections").asInt(DEFAULT_MAX_CONNECTIONS), ack,
                new Timeouts(seconds(block, "header_timeout_seconds", DEFAULT_HEADER_TIMEOUT),
                        seconds(block, "body_timeout_seconds", DEFAULT_BODY_TIMEOUT),
                        seconds(block, "idle_timeout_seconds", DEFAULT_IDLE_TIMEOUT)));
    }

    /** A positive number of seconds, fractions allowed (tests use 0.5). */
    private static Duration seconds(JsonNode block, String key, Duration fallback) {
        JsonNode value = block.path(key);
        if (value.isMissingNode() || value.isNull()) {
            return fallback;
        }
        if (!value.isNumber() || !(value.asDouble() > 0) || value.asDouble() > 86_400) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, WHERE + "." + key + " is " + value
                    + "; give a number of seconds above 0 and at most 86400, e.g. " + fallback.toSeconds());
        }
        return Duration.ofNanos(Math.max(1_000_000L, Math.round(value.asDouble() * 1e9)));
    }
}
