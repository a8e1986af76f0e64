package dev.mallard.server.auth;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.server.config.UserAccount;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The users of a server and their password hashes. A password once verified is remembered as an HMAC under a key
 * that lives only in this process, so a client that sends Basic credentials with every request (curl, scripts) pays
 * the deliberately slow PBKDF2 once per user rather than once per request; a wrong password always pays it.
 */
public final class UserDirectory {
    private static final PasswordHash NOBODY = PasswordHash.of("an unknown user takes as long to refuse as a wrong password");
    private static final String MAC = "HmacSHA256";

    private final Map<String, PasswordHash> users;
    private final SecretKeySpec verifiedKey;
    private final Map<String, byte[]> verified = new ConcurrentHashMap<>();

    public UserDirectory(List<UserAccount> accounts) {
        this.users = accounts.stream().collect(Collectors.toUnmodifiableMap(UserAccount::username, UserAccount::password, (a, b) -> a));
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        this.verifiedKey = new SecretKeySpec(key, MAC);
    }

    /**
     * @throws MallardException {@code user.auth.failed} for an unknown user or a wrong password, without saying which
     */
    public void authenticate(String username, String password) {
        PasswordHash hash = username == null ? null : users.get(username);
        String given = password == null ? "" : password;
        if (hash != null) {
            byte[] known = verified.get(username);
            if (known != null && MessageDigest.isEqual(known, mac(given))) {
                return;
            }
        }
        boolean matches = (hash == null ? NOBODY : hash).matches(given);
        if (hash == null || !matches) {
            throw new MallardException(ErrorCode.USER_AUTH_FAILED, "unknown user or wrong password");
        }
        verified.put(username, mac(given));
    }

    private byte[] mac(String password) {
        try {
            Mac mac = Mac.getInstance(MAC);
            mac.init(verifiedKey);
            return mac.doFinal(password.getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every JDK: " + e.getMessage(), e);
        }
    }
}
