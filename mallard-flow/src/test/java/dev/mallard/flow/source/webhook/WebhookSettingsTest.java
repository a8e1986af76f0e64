// SPDX-License-Identifier: Apache-2.0
package dev.mallard.flow.source.webhook;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mallard.core.error.ErrorCode;
import dev.mallard.core.error.MallardException;
import org.junit.jupiter.api.Test;

class WebhookSettingsTest {
    private static WebhookSettings of(String json) throws Exception {
        return WebhookSettings.of(new ObjectMapper().readTree(json));
    }

    @Test
    void defaultsAreThoseOfTheIssue() throws Exception {
        WebhookSettings settings = of("{}");
        assertThat(settings.host()).isEqualTo("0.0.0.0");
        assertThat(settings.port()).isEqualTo(8001);
        assertThat(settings.maxBodyBytes()).isEqualTo(25L * 1024 * 1024);
        assertThat(settings.maxConnections()).isEqualTo(64);
        assertThat(settings.ack()).isEqualTo(WebhookSettings.Ack.ON_RECEIVE);
        assertThat(settings.signature()).isEmpty();
        assertThat(settings.timeouts()).isEqualTo(new WebhookSettings.Timeouts(
                java.time.Duration.ofSeconds(10), java.time.Duration.ofSeconds(60), java.time.Duration.ofSeconds(60)));
    }

    @Test
    void timeoutsAreSecondsWithFractions() throws Exception {
        WebhookSettings settings = of("{\"header_timeout_seconds\":0.5,\"body_timeout_seconds\":120,\"idle_timeout_seconds\":5}");
        assertThat(settings.timeouts()).isEqualTo(new WebhookSettings.Timeouts(
                java.time.Duration.ofMillis(500), java.time.Duration.ofSeconds(120), java.time.Duration.ofSeconds(5)));
    }

    @Test
    void aTimeoutThatIsNotAPositiveNumberIsRefusedNamingTheKey() {
        for (String value : new String[] {"0", "-1", "\"10\"", "100000"}) {
            assertThatThrownBy(() -> of("{\"body_timeout_seconds\":" + value + "}"))
                    .as(value)
                    .isInstanceOfSatisfying(MallardException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_CONFIG_INVALID))
                    .hasMessageContaining("pipeline.source.webhook.body_timeout_seconds");
        }
    }

    @Test
    void anAddrThatIsNotHostAndPortIsRefusedAtStartup() {
        for (String addr : new String[] {"8001", "localhost", ":8001", "localhost:http", "localhost:70000", "0.0.0.0:"}) {
            assertThatThrownBy(() -> of("{\"addr\":\"" + addr + "\"}"))
                    .as(addr)
                    .isInstanceOfSatisfying(MallardException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.USER_CONFIG_INVALID))
                    .hasMessageContaining("pipeline.source.webhook.addr");
        }
    }

    @Test
    void anIpv6AddrInBracketsIsAccepted() throws Exception {
        assertThat(of("{\"addr\":\"[::1]:9000\"}").host()).isEqualTo("::1");
    }

    @Test
    void anHmacBlockWithoutSignatureTypeIsRefusedRatherThanIgnored() {
        assertThatThrownBy(() -> of("{\"hmac\":{\"header\":\"X-Sig\",\"sig_key\":\"sha256\",\"secret\":\"s\"}}"))
                .isInstanceOf(MallardException.class).hasMessageContaining("signature_type: hmac");
    }
}
