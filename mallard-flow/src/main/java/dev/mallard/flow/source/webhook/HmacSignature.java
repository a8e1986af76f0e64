// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.source.webhook;

import static java.util.Objects.requireNonNull;

import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Optional;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * An HMAC-SHA256 signature over a request's exact body bytes, carried in a header as {@code <sig_key>=<hex>}:
 * GitHub's {@code X-Hub-Signature-256: sha256=...} as it is sent. Digests are compared in constant time.
 *
 * @param header the request header, e.g. {@code X-Hub-Signature-256}
 * @param sigKey the prefix before the digest, {@code sha256} or {@code sha256=}; empty for a bare digest
 */
public record HmacSignature(String header, String sigKey, String secret) {
    private static final String ALGORITHM = "HmacSHA256";

    public enum Verdict {
        VALID, MISSING, INVALID
    }

    public HmacSignature {
        requireNonNull(header, "header is null");
        requireNonNull(sigKey, "sigKey is null");
        requireNonNull(secret, "secret is null");
    }

    public Verdict verify(Optional<String> headerValue, byte[] body) {
        if (headerValue.isEmpty() || headerValue.get().isBlank()) {
            return Verdict.MISSING;
        }
        String value = headerValue.get().strip();
        String prefix = sigKey.isEmpty() || sigKey.endsWith("=") ? sigKey : sigKey + "=";
        byte[] claimed;
        try {
            claimed = value.regionMatches(true, 0, prefix, 0, prefix.length())
                    ? HexFormat.of().parseHex(value.substring(prefix.length()))
                    : null;
        } catch (IllegalArgumentException e) {
            claimed = null;
        }
        byte[] expected = sign(body);
        // Compared even when the header is malformed, so the time taken says nothing about why it failed.
        boolean equal = MessageDigest.isEqual(expected, claimed == null ? new byte[expected.length] : claimed);
        return equal && claimed != null ? Verdict.VALID : Verdict.INVALID;
    }

    /** The header value a sender would put on this body. */
    public String headerValue(byte[] body) {
        String prefix = sigKey.isEmpty() || sigKey.endsWith("=") ? sigKey : sigKey + "=";
        return prefix + HexFormat.of().formatHex(sign(body));
    }

    private byte[] sign(byte[] body) {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), ALGORITHM));
            return mac.doFinal(body);
        } catch (NoSuchAlgorithmException | InvalidKeyException e) {
            throw new IllegalStateException("HmacSHA256 is not available in this JVM", e);
        }
    }

    @Override
    public String toString() {
        return "HmacSignature[header=" + header + ", sigKey=" + sigKey + ", secret=***]";
    }
}
