// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class AcceptEncodingTest {
    private static boolean gzip(String... values) {
        return AcceptEncoding.accepts(List.of(values), "gzip");
    }

    @Test
    void aNamedCodingWithAQualityAboveZeroIsAcceptedAndQualityZeroRefusesIt() {
        assertThat(gzip("gzip")).isTrue();
        assertThat(gzip("br, gzip;q=0.5")).isTrue();
        assertThat(gzip("GZIP ; Q=1.0")).isTrue();
        assertThat(gzip("gzip;q=0")).isFalse();
        assertThat(gzip("gzip; q=0.000")).isFalse();
    }

    @Test
    void theWildcardAdmitsWhatIsNotNamedAndANamedCodingOverridesIt() {
        assertThat(gzip("*")).isTrue();
        assertThat(gzip("*;q=0")).isFalse();
        assertThat(gzip("gzip;q=0, *")).isFalse();
        assertThat(gzip("*;q=0", "gzip")).isTrue();
    }

    @Test
    void noHeaderOrOtherCodingsOnlyIsNotGzip() {
        assertThat(gzip()).isFalse();
        assertThat(gzip("br, deflate")).isFalse();
        assertThat(gzip("identity")).isFalse();
    }
}
