// SPDX-License-Identifier: Apache-2.0
package dev.mallard.server.datasets;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class DatasetQueryTest {
    @Test
    void roundingUpKeepsATimeOnABoundaryAndMovesAnyOtherToTheNext() {
        Duration five = Duration.ofMinutes(5);
        assertThat(DatasetQuery.roundUp(Instant.parse("2026-01-01T00:05:00Z"), five)).isEqualTo(Instant.parse("2026-01-01T00:05:00Z"));
        assertThat(DatasetQuery.roundUp(Instant.parse("2026-01-01T00:05:00.001Z"), five)).isEqualTo(Instant.parse("2026-01-01T00:10:00Z"));
        assertThat(DatasetQuery.roundUp(Instant.parse("2026-01-01T00:05:00.000000001Z"), five)).isEqualTo(Instant.parse("2026-01-01T00:10:00Z"));
        assertThat(DatasetQuery.roundUp(Instant.parse("1969-12-31T23:58:00Z"), five)).isEqualTo(Instant.parse("1970-01-01T00:00:00Z"));
    }

    private static ServeConfig.Param timestamp(String name, Optional<String> defaultValue) {
        return new ServeConfig.Param(name, ServeConfig.ParamType.TIMESTAMP, false, defaultValue, OptionalLong.empty(), OptionalLong.empty(), "");
    }

    private static ServeConfig.Dataset ranged(Optional<String> untilDefault) {
        return new ServeConfig.Dataset("d", "", List.of(timestamp("since", Optional.empty()), timestamp("until", untilDefault)), Optional.empty(),
                Optional.of(new ServeConfig.Range("since", "until", Duration.ofHours(1))), Map.of(), Optional.empty());
    }

    @Test
    void aRequestReadsTheClockOnlyWhenItsRangeEndsNowBecauseNoUntilIsGivenOrDefaulted() {
        Map<String, List<String>> sinceOnly = Map.of("since", List.of("2026-01-01T00:00:00Z"));
        Map<String, List<String>> both = Map.of("since", List.of("2026-01-01T00:00:00Z"), "until", List.of("2026-01-01T01:00:00Z"));
        assertThat(DatasetQuery.readsClock(ranged(Optional.empty()), Map.of())).isTrue();
        assertThat(DatasetQuery.readsClock(ranged(Optional.empty()), sinceOnly)).isTrue();
        assertThat(DatasetQuery.readsClock(ranged(Optional.empty()), both)).isFalse();
        assertThat(DatasetQuery.readsClock(ranged(Optional.of("2026-01-02T00:00:00Z")), sinceOnly)).as("a default until is fixed").isFalse();
        ServeConfig.Dataset plain = new ServeConfig.Dataset("p", "", List.of(), Optional.of("SELECT 1"), Optional.empty(), Map.of(), Optional.empty());
        assertThat(DatasetQuery.readsClock(plain, Map.of())).isFalse();
    }
}
