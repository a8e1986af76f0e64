// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.auth;

import com.nimbusds.jose.JWSAlgorithm;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Locale;

/**
 * How access tokens are signed ({@code jwt_token.algorithm}): Mallard's HS256 with {@code secret_key} as text, or
 * DazzleDuck's HS512 with {@code secret_key} as base64, so that a token minted by a DazzleDuck server with the same
 * key works here and the other way round.
 */
public enum TokenAlgorithm {
    HS256(JWSAlgorithm.HS256, 32),
    HS512(JWSAlgorithm.HS512, 64);

    public static final String KEY = "jwt_token.algorithm";
    public static final TokenAlgorithm DEFAULT = HS256;

    private final JWSAlgorithm jws;
    private final int minKeyBytes;

    TokenAlgorithm(JWSAlgorithm jws, int minKeyBytes) {
        this.jws = jws;
        this.minKeyBytes = minKeyBytes;
    }

    JWSAlgorithm jws() {
        return jws;
    }

    /** The shortest key the algorithm is given: its hash's size. */
    public int minKeyBytes() {
        return minKeyBytes;
    }

    /** @throws MallardException {@code user.config.invalid} for anything but HS256 or HS512 */
    public static TokenAlgorithm parse(String value) {
        try {
            return valueOf(value.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, KEY + " takes HS256 or HS512, not '" + value + "'");
        }
    }

    /**
     * The key bytes of a configured {@code secret_key}: its UTF-8 bytes for HS256, its base64 decoding for HS512.
     *
     * @throws MallardException {@code user.config.invalid} when it is too short, or not base64 for HS512
     */
    public byte[] key(String secretKey) {
        byte[] key;
        if (this == HS512) {
            try {
                key = Base64.getDecoder().decode(secretKey.trim());
            } catch (IllegalArgumentException e) {
                throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "secret_key is not base64, which " + KEY + ": HS512 reads it as"
                        + " (as DazzleDuck does); give the key base64-encoded");
            }
        } else {
            key = secretKey.getBytes(StandardCharsets.UTF_8);
        }
        if (key.length < minKeyBytes) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "secret_key must be at least " + minKeyBytes + " bytes for " + this
                    + (this == HS512 ? " once base64-decoded" : "") + "; give a longer one or leave it out to have one generated");
        }
        return key;
    }
}
