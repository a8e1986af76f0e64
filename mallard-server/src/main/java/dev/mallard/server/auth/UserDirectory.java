// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.auth;

import static java.util.Objects.requireNonNull;

import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import dev.mallard.server.config.ServerConfig;
import dev.mallard.server.config.UserAccount;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The users of a server and their password hashes. A password once verified is remembered as an HMAC under a key
 * that lives only in this process, so a client that sends Basic credentials with every request (curl, scripts) pays
 * the deliberately slow PBKDF2 once per user rather than once per request; a wrong password always pays it.
 *
 * <p>PBKDF2 runs on a small pool of its own ({@link #HASHING_THREADS} threads, {@link #HASHING_QUEUE} waiting), not
 * on the request's virtual thread: a flood of wrong passwords would otherwise occupy every carrier thread and starve
 * queries and {@code /health}. A login that finds the pool full is refused at once ({@code user.auth.throttled}).
 * Each failed login is logged (user and remote address, never the password) and counted; after
 * {@link ServerConfig.LoginLimits#maxFailures()} failures of one user from one address within the window, further
 * attempts are refused without checking until the window has passed.
 */
public final class UserDirectory implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(UserDirectory.class);
    private static final PasswordHash NOBODY = PasswordHash.of("an unknown user takes as long to refuse as a wrong password");
    private static final String MAC = "HmacSHA256";
    /** Threads that verify passwords: half the cores, so hashing never takes them all. */
    public static final int HASHING_THREADS = Math.max(1, Runtime.getRuntime().availableProcessors() / 2);
    /** Verifications that may wait for a thread; past it a login is refused at once. */
    public static final int HASHING_QUEUE = 64;
    /** The longest a login waits for its verification (a bound; one takes tens of milliseconds). */
    private static final Duration HASHING_PATIENCE = Duration.ofSeconds(30);
    /** Failure records kept at most; past it the expired ones are dropped, then all. */
    private static final int FAILURES_MAX = 100_000;

    private final Map<String, PasswordHash> users;
    private final SecretKeySpec verifiedKey;
    private final Map<String, byte[]> verified = new ConcurrentHashMap<>();
    private final ServerConfig.LoginLimits limits;
    private final Clock clock;
    private final Map<String, Failures> failures = new ConcurrentHashMap<>();
    private final AtomicLong failedLogins = new AtomicLong();
    private final ThreadPoolExecutor hashing;

    /** Failed logins of one user from one address since {@code since}. */
    private record Failures(Instant since, int count) {}

    public UserDirectory(List<UserAccount> accounts) {
        this(accounts, ServerConfig.LoginLimits.DEFAULT, Clock.systemUTC());
    }

    public UserDirectory(List<UserAccount> accounts, ServerConfig.LoginLimits limits, Clock clock) {
        this.users = accounts.stream().collect(Collectors.toUnmodifiableMap(UserAccount::username, UserAccount::password, (a, b) -> a));
        this.limits = requireNonNull(limits, "limits is null");
        this.clock = requireNonNull(clock, "clock is null");
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        this.verifiedKey = new SecretKeySpec(key, MAC);
        this.hashing = new ThreadPoolExecutor(HASHING_THREADS, HASHING_THREADS, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(HASHING_QUEUE),
                runnable -> {
                    Thread thread = new Thread(runnable, "mallard-password-check");
                    thread.setDaemon(true);
                    return thread;
                });
        hashing.allowCoreThreadTimeOut(true);
    }

    /** As {@link #authenticate(String, String, String)} from an address not known. */
    public void authenticate(String username, String password) {
        authenticate(username, password, "unknown");
    }

    /**
     * @param remote the client's address, for the failure count and the log
     * @throws MallardException {@code user.auth.failed} for an unknown user or a wrong password, without saying which;
     *     {@link LoginThrottledException} ({@code user.auth.throttled}) after too many failures, or while the
     *     password checks are saturated
     */
    public void authenticate(String username, String password, String remote) {
        requireNonNull(remote, "remote is null");
        String key = (username == null ? "" : username) + '\0' + remote;
        Instant now = clock.instant();
        Failures known = failures.get(key);
        Duration window = Duration.ofSeconds(limits.windowSeconds());
        if (known != null && known.count() >= limits.maxFailures() && now.isBefore(known.since().plus(window))) {
            long wait = Duration.between(now, known.since().plus(window)).toSeconds() + 1;
            throw new LoginThrottledException("too many failed logins for this user from this address (" + known.count() + " within "
                    + limits.windowSeconds() + " s); retry after " + wait + " s", wait);
        }
        PasswordHash hash = username == null ? null : users.get(username);
        String given = password == null ? "" : password;
        if (hash != null) {
            byte[] remembered = verified.get(username);
            if (remembered != null && MessageDigest.isEqual(remembered, mac(given))) {
                return;
            }
        }
        boolean matches = verify(hash == null ? NOBODY : hash, given);
        if (hash == null || !matches) {
            int count = failures.compute(key, (k, old) -> old == null || !now.isBefore(old.since().plus(window))
                    ? new Failures(now, 1) : new Failures(old.since(), old.count() + 1)).count();
            failedLogins.incrementAndGet();
            prune(now, window);
            LOG.warn("login failed user={} remote={} failures_in_window={}", printable(username), printable(remote), count);
            throw new MallardException(ErrorCode.USER_AUTH_FAILED, "unknown user or wrong password");
        }
        failures.remove(key);
        verified.put(username, mac(given));
    }

    private boolean verify(PasswordHash hash, String given) {
        Future<Boolean> check;
        try {
            check = hashing.submit(() -> hash.matches(given));
        } catch (RejectedExecutionException e) {
            throw new LoginThrottledException("the server is checking " + HASHING_QUEUE + " passwords already; retry in a moment", 1);
        }
        try {
            return check.get(HASHING_PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            check.cancel(true);
            throw new LoginThrottledException("the password check did not finish within " + HASHING_PATIENCE.toSeconds() + " s; retry in a moment", 1);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new MallardException(ErrorCode.USER_AUTH_FAILED, "the login was interrupted");
        } catch (ExecutionException e) {
            throw new MallardException(ErrorCode.SYSTEM_INTERNAL, "the password check failed: " + e.getCause(), e.getCause());
        }
    }

    private void prune(Instant now, Duration window) {
        if (failures.size() > FAILURES_MAX) {
            failures.values().removeIf(record -> !now.isBefore(record.since().plus(window)));
            if (failures.size() > FAILURES_MAX) {
                failures.clear();
            }
        }
    }

    /** A name or address from a client as a log value: printable characters only, at most 64. */
    static String printable(String value) {
        if (value == null) {
            return "-";
        }
        StringBuilder out = new StringBuilder();
        value.codePoints().limit(64).forEach(c -> out.appendCodePoint(Character.isISOControl(c) || Character.isWhitespace(c) ? '_' : c));
        return out.toString();
    }

    /** Whether {@code username} is a configured user. */
    public boolean exists(String username) {
        return users.containsKey(username);
    }

    /** The user's password generation, to be MACed into tokens; empty for a user not configured. */
    Optional<byte[]> generation(String username) {
        return Optional.ofNullable(users.get(username)).map(PasswordHash::generation);
    }

    /** Failed logins since the server started: unknown users and wrong passwords (not the throttled ones). */
    public long failedLogins() {
        return failedLogins.get();
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

    @Override
    public void close() {
        hashing.shutdownNow();
    }
}
