// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class QueryOptionsTest {
    @Test
    void withoutHeadersTheServerDefaultsApply() {
        assertThat(QueryOptions.resolve(Optional.empty(), Optional.empty(), 500, 0)).isEqualTo(new QueryOptions(500, Optional.empty()));
        assertThat(QueryOptions.resolve(Optional.empty(), Optional.empty(), 500, 30).timeout()).contains(Duration.ofSeconds(30));
    }

    @Test
    void aClientMayAskForLessTimeAndIsRefusedMoreAsDazzleDuckRefusesIt() {
        assertThat(QueryOptions.resolve(Optional.empty(), Optional.of("5"), 500, 30).timeout()).contains(Duration.ofSeconds(5));
        assertThatThrownBy(() -> QueryOptions.resolve(Optional.empty(), Optional.of("300"), 500, 30)).hasMessageContaining("exceeds server maximum of 30 s");
        assertThat(QueryOptions.resolve(Optional.empty(), Optional.of("300"), 500, 0).timeout()).contains(Duration.ofSeconds(300));
    }

    @Test
    void aZeroTimeoutTakesTheServersAndANegativeOneIsRefused() {
        assertThat(QueryOptions.resolve(Optional.empty(), Optional.of("0"), 500, 30).timeout()).contains(Duration.ofSeconds(30));
        assertThat(QueryOptions.resolve(Optional.empty(), Optional.of("0"), 500, 0).timeout()).isEmpty();
        assertThatThrownBy(() -> QueryOptions.resolve(Optional.empty(), Optional.of("-1"), 500, 30)).hasMessageContaining("non-negative");
    }

    @Test
    void theFetchSizeIsTheClients() {
        assertThat(QueryOptions.resolve(Optional.of("10"), Optional.empty(), 500, 0).fetchSize()).isEqualTo(10);
    }

    @Test
    void malformedValuesAreRefusedByName() {
        assertThatThrownBy(() -> QueryOptions.resolve(Optional.of("lots"), Optional.empty(), 500, 0)).hasMessageContaining("x-dd-fetch-size");
        assertThatThrownBy(() -> QueryOptions.resolve(Optional.of("0"), Optional.empty(), 500, 0)).hasMessageContaining("from 1 to 1000000");
        assertThatThrownBy(() -> QueryOptions.resolve(Optional.empty(), Optional.of("-1"), 500, 0)).hasMessageContaining("x-dd-query-timeout");
    }
}
