package dev.mallard.flow.source.webhook;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.util.Locale;
import java.util.Optional;

/**
 * The webhook source's block, checked at startup.
 *
 * @param host the address to bind, e.g. {@code 0.0.0.0}
 * @param port 0 picks a free port (tests)
 * @param signature present with {@code signature_type: hmac}
 */
public record WebhookSettings(String host, int port, Optional<HmacSignature> signature, long maxBodyBytes, int maxConnections, Ack ack) {
    public static final String DEFAULT_ADDR = "0.0.0.0:8001";
    public static final long DEFAULT_MAX_BODY_BYTES = 25L << 20;
    public static final int DEFAULT_MAX_CONNECTIONS = 64;
    private static final String WHERE = "pipeline.source.webhook";

    /** When a POST is answered. */
    public enum Ack {
        /** {@code {"status":"received"}} once the events are queued. */
        ON_RECEIVE,
        /** {@code {"status":"flushed"}} once the batch holding the events has flushed and its position committed. */
        AFTER_FLUSH
    }

    public WebhookSettings {
        requireNonNull(host, "host is null");
        requireNonNull(signature, "signature is null");
        requireNonNull(ack, "ack is null");
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
                    + "', not host:port; write e.g. 0.0.0.0:8001 or \"0.0.0.0:{{ MALLARD_WEBHOOK_PORT }}\" (an empty port means the variable is not set)");
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
                block.path("max_connections").asInt(DEFAULT_MAX_CONNECTIONS), ack);
    }
}
