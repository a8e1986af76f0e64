// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.source.webhook;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mallard.flow.source.webhook.HmacSignature.Verdict;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class HmacSignatureTest {
    // The example in GitHub's "Validating webhook deliveries" documentation.
    private static final HmacSignature GITHUB = new HmacSignature("X-Hub-Signature-256", "sha256", "It's a Secret to Everybody");
    private static final byte[] BODY = "Hello, World!".getBytes(StandardCharsets.UTF_8);
    private static final String GITHUB_SIGNATURE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";

    @Test
    void githubsDocumentedSignatureVerifiesAsItIsSent() {
        assertThat(GITHUB.verify(Optional.of(GITHUB_SIGNATURE), BODY)).isEqualTo(Verdict.VALID);
        assertThat(GITHUB.headerValue(BODY)).isEqualTo(GITHUB_SIGNATURE);
    }

    @Test
    void aSigKeyWrittenWithItsEqualsSignWorksTheSame() {
        HmacSignature withEquals = new HmacSignature("X-Hub-Signature-256", "sha256=", "It's a Secret to Everybody");
        assertThat(withEquals.verify(Optional.of(GITHUB_SIGNATURE), BODY)).isEqualTo(Verdict.VALID);
    }

    @Test
    void aChangedByteOfTheBodyIsInvalid() {
        assertThat(GITHUB.verify(Optional.of(GITHUB_SIGNATURE), "Hello, World?".getBytes(StandardCharsets.UTF_8))).isEqualTo(Verdict.INVALID);
    }

    @Test
    void aWrongPrefixOrMalformedDigestIsInvalidAndAnAbsentOneMissing() {
        assertThat(GITHUB.verify(Optional.of(GITHUB_SIGNATURE.replace("sha256=", "sha1=")), BODY)).isEqualTo(Verdict.INVALID);
        assertThat(GITHUB.verify(Optional.of("sha256=zz"), BODY)).isEqualTo(Verdict.INVALID);
        assertThat(GITHUB.verify(Optional.of("sha256=" + GITHUB_SIGNATURE.substring(7, 20)), BODY)).isEqualTo(Verdict.INVALID);
        assertThat(GITHUB.verify(Optional.empty(), BODY)).isEqualTo(Verdict.MISSING);
        assertThat(GITHUB.verify(Optional.of(" "), BODY)).isEqualTo(Verdict.MISSING);
    }

    @Test
    void theSecretNeverAppearsInToString() {
        assertThat(GITHUB.toString()).doesNotContain("Secret to Everybody");
    }
}
