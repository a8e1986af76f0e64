// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.auth;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.MACVerifier;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.text.ParseException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Issues and verifies the server's JWT access tokens, signed HS256 (Mallard's default) or HS512 (DazzleDuck's, so
 * tokens minted by either with the same key work on both). Every use of a token checks, besides its signature and
 * expiry, that its user is still configured and, for a token this server issued, that the user's password has not
 * changed since ({@code mallard_gen}: an HMAC of the password's generation under the signing key). An {@code exp}
 * further ahead than this server's token lifetime is refused, and the claims a login asks for are bounded.
 */
public final class TokenService {
    static final String ISSUER = "mallard";
    /** The claim that ties a token to its user's password; an HMAC, so it tells nothing of the password. */
    static final String GENERATION = "mallard_gen";
    /** The largest claims object a login may ask for, as JSON: every request carries the token in a header. */
    public static final int MAX_CLAIMS_BYTES = 8_192;
    /** Clock skew allowed between a token's issuer and this server when capping {@code exp}. */
    private static final Duration SKEW = Duration.ofMinutes(1);
    /** The claim marking a token minted for what the login service ({@code login_url}) granted: its user need not be configured. */
    static final String DELEGATED = "mallard_login";
    private static final Set<String> RESERVED = Set.of("sub", "iss", "aud", "exp", "nbf", "iat", "jti", GENERATION, DELEGATED);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final TokenAlgorithm algorithm;
    private final MACSigner signer;
    private final MACVerifier verifier;
    private final SecretKeySpec generationKey;
    private final Duration lifetime;
    private final Clock clock;
    private final UserDirectory users;
    /**
     * Tokens whose signature and claims were checked, by their text: a client sends its token with every call (four
     * per JDBC query), and parsing and verifying it each time cost more than the rest of a one-row query's work on
     * the server. Expiry and the user are still checked on every use. Bounded: past {@link #VERIFIED_MAX} it starts over.
     */
    private final Map<String, Verified> verified = new ConcurrentHashMap<>();
    private final Optional<LoginDelegate> delegate;

    private record Verified(AccessToken token, boolean delegated) {}
    static final int VERIFIED_MAX = 10_000;

    public TokenService(byte[] secret, TokenAlgorithm algorithm, Duration lifetime, Clock clock, UserDirectory users) {
        this(secret, algorithm, lifetime, clock, users, Optional.empty());
    }

    /** @param delegate the login service ({@code login_url}) that decides logins instead of {@code users}, if any */
    public TokenService(byte[] secret, TokenAlgorithm algorithm, Duration lifetime, Clock clock, UserDirectory users, Optional<LoginDelegate> delegate) {
        this.delegate = requireNonNull(delegate, "delegate is null");
        requireNonNull(secret, "secret is null");
        this.algorithm = requireNonNull(algorithm, "algorithm is null");
        this.lifetime = requireNonNull(lifetime, "lifetime is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.users = requireNonNull(users, "users is null");
        this.generationKey = new SecretKeySpec(secret, "HmacSHA256");
        try {
            this.signer = new MACSigner(secret);
            this.verifier = new MACVerifier(secret);
        } catch (JOSEException e) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "the token signing key is unusable for " + algorithm + ": " + e.getMessage(), e);
        }
    }

    public TokenAlgorithm algorithm() {
        return algorithm;
    }

    /**
     * A new token, with a new session id, for a user whose password was checked.
     *
     * @throws MallardException {@code user.auth.failed} for a reserved claim name; {@code user.cli.argument_invalid}
     *     for claims larger than {@link #MAX_CLAIMS_BYTES} as JSON
     */
    public String issue(String username, Map<String, Object> claims) {
        return issue(username, claims, false);
    }

    /** A login decided by the login service, and the token signed for what it granted. */
    public record Delegated(String username, String token) {}

    /**
     * With {@code login_url}, logs in through the login service and signs what it grants (its username and claims);
     * empty when the server has no login service, and the configured users decide.
     *
     * @throws MallardException {@code user.auth.failed} when the service refuses; {@code system.auth.login_service_failed}
     */
    public Optional<Delegated> delegatedLogin(String username, String password, Map<String, Object> claims) {
        if (delegate.isEmpty()) {
            return Optional.empty();
        }
        LoginDelegate.Granted granted = delegate.get().login(username, password, claims);
        return Optional.of(new Delegated(granted.username(), issue(granted.username(), granted.claims(), true)));
    }

    private String issue(String username, Map<String, Object> claims, boolean delegated) {
        requireNonNull(username, "username is null");
        int size;
        try {
            size = JSON.writeValueAsBytes(claims).length;
        } catch (JsonProcessingException e) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "the claims cannot be written as JSON");
        }
        if (size > MAX_CLAIMS_BYTES) {
            throw new MallardException(ErrorCode.USER_ARGUMENT_INVALID, "the login's claims are " + size + " bytes as JSON, more than the "
                    + MAX_CLAIMS_BYTES + " a token may carry; ask for fewer or shorter claims");
        }
        Instant now = clock.instant();
        JWTClaimsSet.Builder builder = new JWTClaimsSet.Builder()
                .issuer(ISSUER)
                .subject(username)
                .jwtID(UUID.randomUUID().toString())
                .issueTime(Date.from(now))
                .expirationTime(Date.from(now.plus(lifetime)));
        if (delegated) {
            builder.claim(DELEGATED, "login_url");
        } else {
            generation(username).ifPresent(value -> builder.claim(GENERATION, value));
        }
        claims.forEach((name, value) -> {
            if (RESERVED.contains(name)) {
                throw new MallardException(ErrorCode.USER_AUTH_FAILED, "claim '" + name + "' is set by the server and may not be given at login");
            }
            builder.claim(name, value);
        });
        SignedJWT jwt = new SignedJWT(new JWSHeader(algorithm.jws()), builder.build());
        try {
            jwt.sign(signer);
        } catch (JOSEException e) {
            throw new MallardException(ErrorCode.SYSTEM_INTERNAL, "cannot sign an access token: " + e.getMessage(), e);
        }
        return jwt.serialize();
    }

    /**
     * @throws MallardException {@code user.auth.failed} when the token does not parse, is not signed with this
     *     server's key by its algorithm, has expired or expires too far ahead, lacks its subject, names a user not
     *     configured, or was issued before its user's password changed
     */
    public AccessToken verify(String token) {
        requireNonNull(token, "token is null");
        Verified checked = verified.get(token);
        if (checked == null) {
            checked = check(token);
            if (verified.size() >= VERIFIED_MAX) {
                verified.clear();
            }
            verified.put(token, checked);
        }
        AccessToken known = checked.token();
        if (!known.expiresAt().isAfter(clock.instant())) {
            verified.remove(token);
            throw refused("the access token has expired; log in again");
        }
        // A user the login service vouched for need not be configured, while this server still delegates its logins.
        boolean vouched = checked.delegated() && delegate.isPresent();
        if (!vouched && !users.exists(known.username())) {
            throw refused("the access token's user is not configured on this server; log in as a configured user");
        }
        if (known.generation().isPresent() && !known.generation().equals(generation(known.username()))) {
            throw refused("the password of the access token's user changed after it was issued; log in again");
        }
        return known;
    }

    private Verified check(String token) {
        SignedJWT jwt;
        try {
            jwt = SignedJWT.parse(token);
        } catch (ParseException e) {
            throw refused("the access token is not a JWT");
        }
        try {
            if (!algorithm.jws().equals(jwt.getHeader().getAlgorithm()) || !jwt.verify(verifier)) {
                throw refused("the access token's signature does not match this server's key and algorithm (" + algorithm + ")");
            }
            JWTClaimsSet claims = jwt.getJWTClaimsSet();
            Date expiry = claims.getExpirationTime();
            Instant now = clock.instant();
            if (expiry == null || !expiry.toInstant().isAfter(now)) {
                throw refused("the access token has expired; log in again");
            }
            if (expiry.toInstant().isAfter(now.plus(lifetime).plus(SKEW))) {
                throw refused("the access token expires further ahead than this server's token_expiry_minutes allows; log in again");
            }
            if (claims.getSubject() == null || claims.getSubject().isBlank()) {
                throw refused("the access token names no user (sub)");
            }
            String sessionId = claims.getJWTID() != null ? claims.getJWTID() : "jwt-" + digest(token);
            Optional<String> generation = Optional.ofNullable(claims.getStringClaim(GENERATION));
            boolean delegated = claims.getClaim(DELEGATED) != null;
            Map<String, Object> extra = new HashMap<>(claims.getClaims());
            RESERVED.forEach(extra::remove);
            extra.values().removeIf(java.util.Objects::isNull);
            return new Verified(new AccessToken(claims.getSubject(), sessionId, expiry.toInstant(), extra, generation), delegated);
        } catch (JOSEException | ParseException e) {
            throw refused("the access token cannot be verified");
        }
    }

    private Optional<String> generation(String username) {
        return users.generation(username).map(seed -> {
            try {
                Mac mac = Mac.getInstance("HmacSHA256");
                mac.init(generationKey);
                mac.update(username.getBytes(StandardCharsets.UTF_8));
                mac.update((byte) 0);
                return Base64.getUrlEncoder().withoutPadding().encodeToString(mac.doFinal(seed)).substring(0, 22);
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("HmacSHA256 is part of every JDK: " + e.getMessage(), e);
            }
        });
    }

    private static String digest(String token) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)), 0, 16);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }

    private static MallardException refused(String why) {
        return new MallardException(ErrorCode.USER_AUTH_FAILED, why);
    }
}
