package dev.mallard.server.auth;

import static java.util.Objects.requireNonNull;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.MACVerifier;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import java.text.ParseException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.Set;
import java.util.UUID;

/** Issues and verifies the server's HS256-signed JWT access tokens. */
public final class TokenService {
    static final String ISSUER = "mallard";
    private static final Set<String> RESERVED = Set.of("sub", "iss", "aud", "exp", "nbf", "iat", "jti");

    private final MACSigner signer;
    private final MACVerifier verifier;
    private final Duration lifetime;
    private final Clock clock;
    /**
     * Tokens whose signature and claims were checked, by their text: a client sends its token with every call (four
     * per JDBC query), and parsing and verifying it each time cost more than the rest of a one-row query's work on
     * the server. Expiry is still checked on every use. Bounded: past {@link #VERIFIED_MAX} it starts over.
     */
    private final Map<String, AccessToken> verified = new ConcurrentHashMap<>();
    static final int VERIFIED_MAX = 10_000;

    public TokenService(byte[] secret, Duration lifetime, Clock clock) {
        requireNonNull(secret, "secret is null");
        this.lifetime = requireNonNull(lifetime, "lifetime is null");
        this.clock = requireNonNull(clock, "clock is null");
        try {
            this.signer = new MACSigner(secret);
            this.verifier = new MACVerifier(secret);
        } catch (JOSEException e) {
            throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "the token signing key is unusable: " + e.getMessage(), e);
        }
    }

    /** A new token, with a new session id, for a user whose password was checked. */
    public String issue(String username, Map<String, Object> claims) {
        requireNonNull(username, "username is null");
        Instant now = clock.instant();
        JWTClaimsSet.Builder builder = new JWTClaimsSet.Builder()
                .issuer(ISSUER)
                .subject(username)
                .jwtID(UUID.randomUUID().toString())
                .issueTime(Date.from(now))
                .expirationTime(Date.from(now.plus(lifetime)));
        claims.forEach((name, value) -> {
            if (RESERVED.contains(name)) {
                throw new MallardException(ErrorCode.USER_AUTH_FAILED, "claim '" + name + "' is set by the server and may not be given at login");
            }
            builder.claim(name, value);
        });
        SignedJWT jwt = new SignedJWT(new JWSHeader(JWSAlgorithm.HS256), builder.build());
        try {
            jwt.sign(signer);
        } catch (JOSEException e) {
            throw new MallardException(ErrorCode.SYSTEM_INTERNAL, "cannot sign an access token: " + e.getMessage(), e);
        }
        return jwt.serialize();
    }

    /**
     * @throws MallardException {@code user.auth.failed} when the token does not parse, is not signed with this
     *     server's key by HS256, has expired, or lacks its subject or id
     */
    public AccessToken verify(String token) {
        AccessToken known = verified.get(requireNonNull(token, "token is null"));
        if (known != null) {
            if (!known.expiresAt().isAfter(clock.instant())) {
                verified.remove(token);
                throw refused("the access token has expired; log in again");
            }
            return known;
        }
        AccessToken checked = check(token);
        if (verified.size() >= VERIFIED_MAX) {
            verified.clear();
        }
        verified.put(token, checked);
        return checked;
    }

    private AccessToken check(String token) {
        SignedJWT jwt;
        try {
            jwt = SignedJWT.parse(requireNonNull(token, "token is null"));
        } catch (ParseException e) {
            throw refused("the access token is not a JWT");
        }
        try {
            if (!JWSAlgorithm.HS256.equals(jwt.getHeader().getAlgorithm()) || !jwt.verify(verifier)) {
                throw refused("the access token's signature does not match this server's key");
            }
            JWTClaimsSet claims = jwt.getJWTClaimsSet();
            Date expiry = claims.getExpirationTime();
            if (expiry == null || !expiry.toInstant().isAfter(clock.instant())) {
                throw refused("the access token has expired; log in again");
            }
            if (claims.getSubject() == null || claims.getJWTID() == null || !ISSUER.equals(claims.getIssuer())) {
                throw refused("the access token was not issued by this server");
            }
            Map<String, Object> extra = new HashMap<>(claims.getClaims());
            RESERVED.forEach(extra::remove);
            extra.values().removeIf(java.util.Objects::isNull);
            return new AccessToken(claims.getSubject(), claims.getJWTID(), expiry.toInstant(), extra);
        } catch (JOSEException | ParseException e) {
            throw refused("the access token cannot be verified");
        }
    }

    private static MallardException refused(String why) {
        return new MallardException(ErrorCode.USER_AUTH_FAILED, why);
    }
}
