// SPDX-License-Identifier: Apache-2.0
package dev.mallard.core.error;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class RedactorTest {
    @Test
    void passwordsInUrlsAreRedacted() {
        assertThat(Redactor.redact("cannot reach postgres://app:s3cret@db:5432/x"))
                .isEqualTo("cannot reach postgres://app:***@db:5432/x").doesNotContain("s3cret");
    }

    @Test
    void keyValueSecretsAreRedacted() {
        assertThat(Redactor.redact("host=db password=hunter2 user=app")).doesNotContain("hunter2").contains("password=***");
        assertThat(Redactor.redact("{\"secret\": \"abc\", \"sasl.password\": x}")).doesNotContain("abc").doesNotContain(": x");
    }

    @Test
    void bearerTokensAreRedacted() {
        assertThat(Redactor.redact("Authorization: Bearer eyJhbGciOi.payload.sig")).isEqualTo("Authorization: Bearer ***");
    }

    @Test
    void exceptionsRedactTheirMessages() {
        assertThat(new MallardException(ErrorCode.SYSTEM_SINK_UNREACHABLE, "dsn postgresql://u:pw@h/db").getMessage())
                .doesNotContain("pw@");
    }
}
