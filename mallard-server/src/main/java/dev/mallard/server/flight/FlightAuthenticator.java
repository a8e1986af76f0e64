// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.flight;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.MallardException;
import dev.mallard.server.auth.AccessToken;
import dev.mallard.server.auth.TokenService;
import dev.mallard.server.auth.UserDirectory;
import dev.mallard.server.session.SessionRegistry;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.auth2.Auth2Constants;
import org.apache.arrow.flight.auth2.AuthUtilities;
import org.apache.arrow.flight.auth2.CallHeaderAuthenticator;

/**
 * Authenticates every Flight call. Basic credentials (the handshake of a JDBC connection) are checked and answered
 * with a new bearer JWT in the {@code authorization} response header; a bearer JWT is verified. The peer identity
 * is the token's session id, which selects the caller's DuckDB session.
 */
final class FlightAuthenticator implements CallHeaderAuthenticator {
    /** The {@code listener} label of Flight's failed logins in {@code mallard_server_logins_failed_total}. */
    static final String LISTENER = "flight";

    private final UserDirectory users;
    private final TokenService tokens;
    private final SessionRegistry sessions;
    private final dev.mallard.server.ops.ServerMetrics metrics;

    FlightAuthenticator(UserDirectory users, TokenService tokens, SessionRegistry sessions, dev.mallard.server.ops.ServerMetrics metrics) {
        this.users = requireNonNull(users, "users is null");
        this.tokens = requireNonNull(tokens, "tokens is null");
        this.sessions = requireNonNull(sessions, "sessions is null");
        this.metrics = requireNonNull(metrics, "metrics is null");
    }

    @Override
    public AuthResult authenticate(CallHeaders headers) {
        try {
            String bearer = AuthUtilities.getValueFromAuthHeader(headers, Auth2Constants.BEARER_PREFIX);
            if (bearer != null) {
                AccessToken token = tokens.verify(bearer);
                sessions.open(token);
                return () -> token.sessionId();
            }
            String basic = AuthUtilities.getValueFromAuthHeader(headers, Auth2Constants.BASIC_PREFIX);
            if (basic != null) {
                return login(basic, RlsHeaders.claims(headers));
            }
        } catch (MallardException e) {
            if (e.errorCode() == dev.mallard.core.error.ErrorCode.USER_AUTH_FAILED && AuthUtilities.getValueFromAuthHeader(headers, Auth2Constants.BEARER_PREFIX) == null) {
                metrics.loginFailed(LISTENER);
            }
            throw FlightErrors.toFlight(e);
        }
        throw CallStatus.UNAUTHENTICATED
                .withDescription("no credentials: log in with Basic user:password, then send the access token the login returns")
                .toRuntimeException();
    }

    /** @param claims the row-level security claims the client sent as headers (JDBC connection properties) */
    private AuthResult login(String encoded, Map<String, Object> claims) {
        String decoded;
        try {
            decoded = new String(Base64.getDecoder().decode(encoded), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw CallStatus.UNAUTHENTICATED.withDescription("the Basic credentials are not base64").toRuntimeException();
        }
        int colon = decoded.indexOf(':');
        if (colon < 0) {
            throw CallStatus.UNAUTHENTICATED.withDescription("the Basic credentials are not user:password").toRuntimeException();
        }
        String username = decoded.substring(0, colon);
        // With login_url the login service decides, and the token carries what it granted.
        java.util.Optional<TokenService.Delegated> delegated = tokens.delegatedLogin(username, decoded.substring(colon + 1), claims);
        String jwt;
        if (delegated.isPresent()) {
            jwt = delegated.get().token();
        } else {
            users.authenticate(username, decoded.substring(colon + 1), PeerAddress.current());
            sessions.checkLoginClaims(username, claims);
            jwt = tokens.issue(username, claims);
        }
        AccessToken token = tokens.verify(jwt);
        sessions.open(token);
        return new AuthResult() {
            @Override
            public String getPeerIdentity() {
                return token.sessionId();
            }

            @Override
            public void appendToOutgoingHeaders(CallHeaders outgoing) {
                if (!outgoing.containsKey(Auth2Constants.AUTHORIZATION_HEADER)) {
                    outgoing.insert(Auth2Constants.AUTHORIZATION_HEADER, Auth2Constants.BEARER_PREFIX + jwt);
                }
            }
        };
    }
}
