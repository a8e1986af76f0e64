package dev.mallard.server.auth;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.server.config.UserAccount;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** The users of a server and their password hashes. */
public final class UserDirectory {
    private static final PasswordHash NOBODY = PasswordHash.of("an unknown user takes as long to refuse as a wrong password");

    private final Map<String, PasswordHash> users;

    public UserDirectory(List<UserAccount> accounts) {
        this.users = accounts.stream().collect(Collectors.toUnmodifiableMap(UserAccount::username, UserAccount::password, (a, b) -> a));
    }

    /**
     * @throws MallardException {@code user.auth.failed} for an unknown user or a wrong password, without saying which
     */
    public void authenticate(String username, String password) {
        PasswordHash hash = username == null ? null : users.get(username);
        boolean matches = (hash == null ? NOBODY : hash).matches(password == null ? "" : password);
        if (hash == null || !matches) {
            throw new MallardException(ErrorCode.USER_AUTH_FAILED, "unknown user or wrong password");
        }
    }
}
