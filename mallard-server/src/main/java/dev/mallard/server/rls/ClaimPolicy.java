// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.rls;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.server.config.AccessMode;
import dev.mallard.server.config.UserAccount;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Which row-level security claims a user's sessions carry, as the operator configured them: a user's fixed
 * {@code claims} always, and of the claims a login gives only those the user's {@code login_claims} names. A login
 * that gives another RLS claim, or changes a fixed one, is refused: a login can never widen what the operator
 * granted. On a COMPLETE or READ_ONLY server login claims pass as given (they read nothing but
 * {@code x-dd-variables} there).
 */
public final class ClaimPolicy {
    private final AccessMode mode;
    private final Map<String, UserAccount> users;
    private final CatalogCache catalog = new CatalogCache();

    public ClaimPolicy(AccessMode mode, List<UserAccount> users) {
        this.mode = requireNonNull(mode, "mode is null");
        this.users = requireNonNull(users, "users is null").stream().collect(Collectors.toUnmodifiableMap(UserAccount::username, Function.identity()));
        for (UserAccount user : users) {
            for (String name : user.loginClaims()) {
                if (!RlsClaims.NAMES.contains(name)) {
                    throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "users entry " + user.username() + " lists login_claims '" + name
                            + "', which is not a row-level security claim; use some of " + RlsClaims.NAMES);
                }
            }
            for (String prefix : user.loginPaths()) {
                if (!isLocalDirectory(prefix)) {
                    throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "users entry " + user.username() + " lists login_paths '" + prefix
                            + "', which is not an absolute local directory; give one such as /data/tenants/");
                }
            }
            if (!user.claims().isEmpty()) {
                try {
                    RowLevelSecurity.of(mode, user.claims());
                } catch (MallardException e) {
                    throw new MallardException(ErrorCode.USER_CONFIG_INVALID, "users entry " + user.username() + " has claims the access mode "
                            + mode + " cannot use: " + e.getMessage(), e);
                }
            }
        }
    }

    /** A policy that passes every login claim (COMPLETE, no configured claims): for tests and embedding. */
    public static ClaimPolicy open() {
        return new ClaimPolicy(AccessMode.COMPLETE, List.of());
    }

    public AccessMode mode() {
        return mode;
    }

    /**
     * The claims a session of this user carries, given those its token got at login.
     *
     * @throws MallardException {@code user.access.claims_invalid} when the login gave a claim the user may not give
     */
    public Map<String, Object> effective(String username, Map<String, Object> login) {
        Optional<UserAccount> user = Optional.ofNullable(users.get(username));
        Map<String, Object> fixed = user.map(UserAccount::claims).orElse(Map.of());
        if (mode == AccessMode.COMPLETE || mode == AccessMode.READ_ONLY) {
            Map<String, Object> merged = new LinkedHashMap<>(login);
            merged.putAll(fixed);
            return merged;
        }
        List<String> allowed = user.map(UserAccount::loginClaims).orElse(List.of());
        Map<String, Object> merged = new LinkedHashMap<>();
        for (Map.Entry<String, Object> claim : login.entrySet()) {
            String name = claim.getKey();
            if (!RlsClaims.NAMES.contains(name)) {
                merged.put(name, claim.getValue());
            } else if (fixed.containsKey(name)) {
                if (!Objects.equals(fixed.get(name), claim.getValue())) {
                    throw RlsClaims.invalid("user " + username + " has " + name + " fixed by the server's configuration; a login cannot change it");
                }
            } else if (allowed.contains(name)) {
                merged.put(name, claim.getValue());
            } else {
                throw RlsClaims.invalid("user " + username + " may not give the claim " + name + " at login; the operator lists the claims a"
                        + " login may give under the user's login_claims");
            }
        }
        merged.putAll(fixed);
        if (RlsClaims.mentionsAny(login)) {
            checkLoginPaths(username, user.map(UserAccount::loginPaths).orElse(List.of()), fixed, merged);
        }
        return merged;
    }

    /**
     * Every {@code path} grant the login added lies under one of the user's {@code login_paths}, which DuckDB's
     * {@code allowed_directories} admits: otherwise DuckDB would refuse the read, or a path admitted for another user
     * would be granted through this one's login.
     */
    private static void checkLoginPaths(String username, List<String> loginPaths, Map<String, Object> fixed, Map<String, Object> merged) {
        java.util.Set<String> fixedPaths = fixed.isEmpty() ? java.util.Set.of() : RlsClaims.parse(fixed).grants().stream()
                .filter(grant -> grant.kind() == AccessGrant.Kind.PATH).map(AccessGrant::name).collect(Collectors.toSet());
        for (AccessGrant grant : RlsClaims.parse(merged).grants()) {
            if (grant.kind() != AccessGrant.Kind.PATH || fixedPaths.contains(grant.name())) {
                continue;
            }
            boolean admitted = isLocalDirectory(grant.name()) && loginPaths.stream().anyMatch(prefix -> under(grant.name(), prefix));
            if (!admitted) {
                throw RlsClaims.invalid("user " + username + " may be granted at login only paths under its login_paths " + loginPaths
                        + ", and the path '" + grant.name() + "' is not; the operator lists them under the user's login_paths");
            }
        }
    }

    private static boolean isLocalDirectory(String path) {
        return !path.contains("://") && path.startsWith("/") && !java.util.Arrays.asList(path.split("/")).contains("..");
    }

    /** Whether {@code path} names {@code prefix} or something inside it, compared by whole path segments. */
    static boolean under(String path, String prefix) {
        java.nio.file.Path inner = java.nio.file.Path.of(path).normalize();
        java.nio.file.Path outer = java.nio.file.Path.of(prefix).normalize();
        return inner.startsWith(outer);
    }

    /** A login's claims checked for the user before a token is issued: a malformed or forbidden claim fails the login. */
    public void checkLogin(String username, Map<String, Object> login) {
        Map<String, Object> effective = effective(username, login);
        if (RlsClaims.mentionsAny(login)) {
            RowLevelSecurity.of(mode, effective);
        }
    }

    /** The session's row-level security for a token's claims. */
    public Optional<RowLevelSecurity> forSession(String username, Map<String, Object> tokenClaims) {
        return RowLevelSecurity.of(mode, effective(username, tokenClaims), catalog);
    }

    /**
     * The path prefixes the configured users' fixed claims grant, and those their {@code login_paths} let a login
     * grant: what DuckDB's allowed_directories admits.
     */
    public List<String> grantedPaths() {
        java.util.stream.Stream<String> fixed = users.values().stream().filter(user -> !user.claims().isEmpty())
                .flatMap(user -> RlsClaims.parse(user.claims()).grants().stream())
                .filter(grant -> grant.kind() == AccessGrant.Kind.PATH).map(AccessGrant::name);
        java.util.stream.Stream<String> atLogin = users.values().stream().flatMap(user -> user.loginPaths().stream());
        return java.util.stream.Stream.concat(fixed, atLogin).distinct().sorted().toList();
    }
}
