package dev.mallard.server.auth;

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
}
