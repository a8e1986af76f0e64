// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mallard.core.error.MallardException;
import dev.mallard.server.config.UserAccount;
import java.util.List;
import org.junit.jupiter.api.Test;

class UserDirectoryTest {
    private final UserDirectory users = new UserDirectory(List.of(new UserAccount("ada", PasswordHash.of("lovelace")),
            new UserAccount("alan", PasswordHash.of("turing"))));

    @Test
    void aRememberedPasswordStillRefusesAnyOtherPassword() {
        assertThatCode(() -> users.authenticate("ada", "lovelace")).doesNotThrowAnyException();
        assertThatCode(() -> users.authenticate("ada", "lovelace")).doesNotThrowAnyException();
        assertThatThrownBy(() -> users.authenticate("ada", "lovelace ")).isInstanceOf(MallardException.class)
                .hasMessageContaining("unknown user or wrong password");
        assertThatThrownBy(() -> users.authenticate("ada", "turing")).isInstanceOf(MallardException.class);
        assertThatThrownBy(() -> users.authenticate("alan", "lovelace")).isInstanceOf(MallardException.class);
        assertThatThrownBy(() -> users.authenticate("ada", null)).isInstanceOf(MallardException.class);
        assertThatThrownBy(() -> users.authenticate("grace", "lovelace")).isInstanceOf(MallardException.class);
        assertThatCode(() -> users.authenticate("alan", "turing")).doesNotThrowAnyException();
        assertThatCode(() -> users.authenticate("ada", "lovelace")).doesNotThrowAnyException();
    }

    @org.junit.jupiter.api.Test
    void aFloodOfWrongPasswordsWaitsForTheBoundedPoolAndWhatDoesNotFitIsRefusedAtOnce() throws Exception {
        int callers = 200;
        java.util.concurrent.atomic.AtomicInteger refusedAtOnce = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger wrong = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.CountDownLatch start = new java.util.concurrent.CountDownLatch(1);
        try (java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < callers; i++) {
                String name = "guesser" + i;
                pool.submit(() -> {
                    start.await();
                    try {
                        users.authenticate(name, "wrong", "10.0.0.1");
                    } catch (LoginThrottledException e) {
                        assertThat(e.getMessage()).contains("checking");
                        refusedAtOnce.incrementAndGet();
                    } catch (MallardException e) {
                        wrong.incrementAndGet();
                    }
                    return null;
                });
            }
            start.countDown();
        }
        // At most HASHING_THREADS checks run and HASHING_QUEUE wait; with 200 at once the rest are refused, not queued.
        assertThat(refusedAtOnce.get()).isPositive();
        assertThat(wrong.get()).isBetween(1, callers - refusedAtOnce.get());
        assertThat(refusedAtOnce.get() + wrong.get()).isEqualTo(callers);
        assertThat(users.failedLogins()).isEqualTo(wrong.get());
    }

    @org.junit.jupiter.api.Test
    void failuresAreCountedPerUserAndAddressAndARightPasswordInTheWindowIsStillThrottled() {
        UserDirectory limited = new UserDirectory(List.of(new UserAccount("ada", PasswordHash.of("lovelace"))),
                new dev.mallard.server.config.ServerConfig.LoginLimits(2, 600), java.time.Clock.systemUTC());
        assertThatThrownBy(() -> limited.authenticate("ada", "x", "10.0.0.1")).isNotInstanceOf(LoginThrottledException.class);
        assertThatThrownBy(() -> limited.authenticate("ada", "y", "10.0.0.1")).isNotInstanceOf(LoginThrottledException.class);
        assertThatThrownBy(() -> limited.authenticate("ada", "lovelace", "10.0.0.1")).isInstanceOfSatisfying(LoginThrottledException.class,
                e -> assertThat(e.retryAfterSeconds()).isBetween(1L, 601L));
        assertThatCode(() -> limited.authenticate("ada", "lovelace", "10.0.0.2")).doesNotThrowAnyException();
        assertThat(limited.failedLogins()).isEqualTo(2);
    }

    @org.junit.jupiter.api.Test
    void aNameFromAClientIsLoggedPrintableAndShort() {
        assertThat(UserDirectory.printable("ada\nFAKE LOG LINE")).isEqualTo("ada_FAKE_LOG_LINE");
        assertThat(UserDirectory.printable("x".repeat(500))).hasSize(64);
    }
}
